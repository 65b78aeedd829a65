// gradrt_bench: the cpu backend (through gradrt::run_op, as `gradrt run --repeat` does)
// against oneDNN on the same shapes, at 1 and 2 threads (or --threads=a,b,...).
//
// Columns: ms (median of --reps runs after warm-up; with --rounds=R the median of R such), GFLOP/s (GB/s for batch norm),
// % of the FMA peak this program measures itself (a register-only FMA loop, per thread
// times threads), and gradrt / oneDNN speed (> 1: gradrt faster; with --rounds=R the median of
// the R rounds' own ratios, each round's sides measured back to back: paired against drift).
// oneDNN runs in its preferred layouts (format_tag::any for convolutions, nChw16c (--isa=avx2: nChw8c) for
// batch norm); reorders from NHWC are done once, outside the timing. gradrt runs on NHWC
// float32 as TF hands it, and its timing includes run_op's validation and allocation (--plan=1:
// prepared once, run into outputs allocated once, as oneDNN's primitive and memory are).
// --csv=FILE also writes the rows for bench/plot.py. --isa=avx2 runs both libraries' AVX2 code
// (GRADRT_CPU_ISA=avx2, ONEDNN_MAX_CPU_ISA=AVX2), the header says so: on an AVX-512 machine
// this checks the AVX2 kernels and tile choices, not an AVX2-only CPU's timing.
#include <omp.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <thread>
#include <vector>

#include "gradrt/gradrt.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// --warm-ms=N: warm up each side for at least N ms (besides the `warm` calls) before timing.
// Default 100: with 3 calls only, gradrt, timed first after the 200 ms pause, started on a
// cold core (clock, caches, sleeping pool) while oneDNN got gradrt's calls as its warm-up
// (1x1 input gradient: 1.32 ms with 3 calls, 1.05 ms after 50 ms; oneDNN 0.91 either way).
double g_warm_ms = 100;

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// --stat=min: the fastest call in place of the median (a loaded host's preemption lengthens
// calls, never shortens them: the 1-thread figure to compare there).
bool g_stat_min = false;

// Median (or, --stat=min, fastest) seconds of `reps` calls after `warm` warm-up calls (and
// g_warm_ms of them).
double time_median(const std::function<void()>& f, int warm, int reps) {
  for (int i = 0; i < warm; ++i) f();
  for (auto t0 = Clock::now(); seconds_since(t0) * 1e3 < g_warm_ms;) f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  return g_stat_min ? *std::min_element(t.begin(), t.end()) : median_of(t);
}

// ---------------------------------------------------------------- FMA peak, one thread
#if defined(__x86_64__)
__attribute__((target("avx512f"))) double fma_loop_avx512(int64_t iters) {
  __m512 acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 16; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  float s = 0;
  for (int i = 0; i < 16; ++i) s += _mm512_reduce_add_ps(acc[i]);
  return s;
}
__attribute__((target("avx2,fma"))) double fma_loop_avx2(int64_t iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int64_t k = 0; k < iters; ++k)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  alignas(32) float out[8];
  float s = 0;
  for (int i = 0; i < 12; ++i) {
    _mm256_store_ps(out, acc[i]);
    for (float v : out) s += v;
  }
  return s;
}
#endif

// --isa=avx2: gradrt forced to its avx2 unit and oneDNN's JIT capped at AVX2 (both set
// through their environment variables before either library starts), the peak loop in ymm.
bool g_isa_avx2 = false;

// Peak float32 GFLOP/s of one core from 16 (12) independent FMA chains.
double measure_peak_gflops(std::string* isa) {
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f") && !g_isa_avx2;
  // Many short runs, best one: on a shared machine some run gets the core to itself.
  const int64_t iters = 2'000'000;
  volatile double sink = 0;
  double best = 1e30;
  for (int r = 0; r < 60; ++r) {
    auto t0 = Clock::now();
    sink = sink + (avx512 ? fma_loop_avx512(iters) : fma_loop_avx2(iters));
    best = std::min(best, seconds_since(t0));
  }
  const double flops = avx512 ? iters * 16.0 * 16 * 2 : iters * 12.0 * 8 * 2;
  *isa = avx512 ? "avx512 fma" : "avx2 fma";
  return flops / best * 1e-9;
#else
  *isa = "unknown";
  return 0;
#endif
}

// ---------------------------------------------------------------- gradrt side
// 64-byte aligned storage, as TensorFlow's CPU allocator gives its tensors (and oneDNN's
// memory objects are): std::vector's 16-byte alignment would split every AVX-512 load.
template <class T>
struct Aligned64 {
  using value_type = T;
  Aligned64() = default;
  template <class U> Aligned64(const Aligned64<U>&) {}
  T* allocate(size_t n) {
    void* p = std::aligned_alloc(64, (n * sizeof(T) + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U> bool operator==(const Aligned64<U>&) const { return true; }
};

struct Host {  // an owned float32 / int32 buffer viewed as a TensorView
  std::vector<float, Aligned64<float>> f;
  std::vector<int32_t> i;
  std::vector<int64_t> shape;
  gradrt::TensorView view() const {
    gradrt::TensorView v;
    v.shape = shape;
    if (!i.empty()) {
      v.dtype = gradrt::DType::int32;
      v.data = i.data();
    } else {
      v.dtype = gradrt::DType::float32;
      v.data = f.data();
    }
    return v;
  }
};

Host filled(std::vector<int64_t> shape, uint32_t seed) {
  Host h;
  h.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  h.f.resize(n);
  uint32_t s = seed * 2654435761u + 1;
  for (auto& v : h.f) {
    s = s * 1664525u + 1013904223u;
    v = float((s >> 8) & 0xffff) / 65536.0f - 0.5f;
  }
  return h;
}

Host sizes(std::vector<int64_t> v) {
  Host h;
  h.shape = {int64_t(v.size())};
  for (int64_t d : v) h.i.push_back(int32_t(d));
  return h;
}

// ---------------------------------------------------------------- cases
struct Case {
  std::string group;  // conv | depthwise | batchnorm
  std::string op;     // TF op
  std::string shape;  // description
  int batch = 1;
  double work = 0;  // flops, or bytes for batch norm
  bool bandwidth = false;
  std::function<std::function<void()>(int threads)> gradrt;  // returns the timed call
  std::function<std::function<void()>()> onednn;       // activations in oneDNN's preferred (blocked) layout
  std::function<std::function<void()>()> onednn_nhwc;  // activations NHWC, as TF hands them; weights preferred
};

int64_t same_out(int64_t in, int64_t k, int64_t s) { return (in + s - 1) / s; }
int64_t same_pad_before(int64_t in, int64_t k, int64_t s) {
  return std::max<int64_t>((same_out(in, k, s) - 1) * s + k - in, 0) / 2;
}
int64_t same_pad_after(int64_t in, int64_t k, int64_t s) {
  return std::max<int64_t>((same_out(in, k, s) - 1) * s + k - in, 0) - same_pad_before(in, k, s);
}

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::memory dnnl_mem(const dnnl::memory::desc& md) {
  dnnl::memory m(md, eng());
  float* p = static_cast<float*>(m.get_data_handle());
  const size_t n = md.get_size() / sizeof(float);
  for (size_t i = 0; i < n; ++i) p[i] = 0.001f * float(int(i % 1000) - 500);
  return m;
}

std::function<void()> dnnl_runner(dnnl::primitive prim, std::unordered_map<int, dnnl::memory> args) {
  auto s = std::make_shared<dnnl::stream>(eng());
  return [prim, args, s]() mutable {
    prim.execute(*s, args);
    s->wait();
  };
}

// --plan=1: gradrt's side as oneDNN's is timed, set up once (gradrt::prepare, outputs allocated
// once, 64-byte aligned) and then only run (Plan::run into those buffers). Default: run_op.
bool g_plan = false;

[[noreturn]] void gradrt_failed(const std::string& op, const gradrt::Status& s) {
  std::fprintf(stderr, "gradrt %s: %s\n", op.c_str(), s.to_string().c_str());
  std::exit(1);
}

std::function<void()> gradrt_plan_runner(const std::string& op, std::shared_ptr<std::vector<std::pair<std::string, Host>>> hosts,
                                         const gradrt::Attrs& attrs, int threads) {
  gradrt::Inputs inputs;
  for (auto& [name, h] : *hosts) inputs[name] = h.view();
  gradrt::RunOptions opt;
  opt.backend = "cpu";
  opt.threads = threads;
  auto plan = std::make_shared<gradrt::Plan>();
  gradrt::Status s = gradrt::prepare(op, inputs, attrs, plan.get(), opt);
  if (!s.ok()) gradrt_failed(op, s);
  auto buffers = std::make_shared<std::vector<std::vector<float, Aligned64<float>>>>();
  auto names = std::make_shared<std::vector<std::string>>();
  for (const auto& [name, spec] : plan->info().outputs) {
    int64_t n = 1;
    for (int64_t d : spec.shape) n *= d;
    buffers->emplace_back(static_cast<size_t>(std::max<int64_t>(n, 1)) * 2);  // room for float64
    names->push_back(name);
  }
  gradrt::PlanRunOptions ro;
  ro.output_memory = [buffers, names](std::string_view name, gradrt::DType, const std::vector<int64_t>&) -> void* {
    for (size_t i = 0; i < names->size(); ++i)
      if ((*names)[i] == name) return (*buffers)[i].data();
    return nullptr;
  };
  return [op, hosts, plan, inputs, ro]() {
    gradrt::Outputs outs;
    gradrt::Status s = plan->run(inputs, &outs, ro);
    if (!s.ok()) gradrt_failed(op, s);
  };
}

std::function<void()> gradrt_runner(std::string op, std::vector<std::pair<std::string, Host>> ins, gradrt::Attrs attrs,
                                    int threads) {
  auto hosts = std::make_shared<std::vector<std::pair<std::string, Host>>>(std::move(ins));
  if (g_plan) return gradrt_plan_runner(op, hosts, attrs, threads);
  return [op, hosts, attrs, threads]() {
    gradrt::Inputs inputs;
    for (auto& [name, h] : *hosts) inputs[name] = h.view();
    gradrt::Outputs outs;
    gradrt::RunOptions opt;
    opt.backend = "cpu";
    opt.threads = threads;
    gradrt::Status s = gradrt::run_op(op, inputs, attrs, &outs, opt);
    if (!s.ok()) gradrt_failed(op, s);
  };
}

// Conv2DBackpropInput / Conv2DBackpropFilter (groups = 1) or their depthwise forms.
// group: the rows' group; a named one (not conv/depthwise) adds the input gradient only.
void add_conv_cases(std::vector<Case>& cases, bool depthwise, int64_t n, int64_t h, int64_t c, int64_t oc, int64_t k,
                    int64_t s, const char* group = nullptr) {
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  const int64_t oh = same_out(h, k, s);
  if (depthwise) oc = c;
  const int64_t pt = same_pad_before(h, k, s), pb = same_pad_after(h, k, s);
  const double flops = 2.0 * n * oh * oh * oc * k * k * (depthwise ? 1 : c);
  char desc[128];
  std::snprintf(desc, sizeof desc, "%dx%d %lldx%lldx%lld->%lld s%lld", int(k), int(k), (long long)h, (long long)h,
                (long long)c, (long long)oc, (long long)s);
  gradrt::Attrs attrs{{"strides", gradrt::AttrValue({1, s, s, 1})}, {"padding", gradrt::AttrValue("SAME")}};
  const std::vector<int64_t> xs{n, h, h, c}, ws{k, k, c, depthwise ? 1 : oc}, ys{n, oh, oh, oc};

  memory::dims src{n, c, h, h}, dst{n, oc, oh, oh}, strides{s, s}, pl{pt, pt}, pr{pb, pb};
  memory::dims wei = depthwise ? memory::dims{c, 1, 1, k, k} : memory::dims{oc, c, k, k};
  const memory::desc wei_md(wei, dt::f32, tag::any);
  // act = tag::any: oneDNN picks its blocked activation layout; tag::nhwc: the issue's
  // comparison (TF's NHWC activations, oneDNN's preferred weight layout).
  // A backward primitive Bwd (convolution_backward_data or _weights, passed as an empty
  // object) hinted by its forward primitive (oneDNN 2.x asks for one); its tensors are the
  // execution arguments `args`, each in the layout the primitive chose.
  auto backward = [=](auto kind, tag act, std::initializer_list<int> args) {
    using Bwd = decltype(kind);
    const memory::desc src_md(src, dt::f32, act), dst_md(dst, dt::f32, act);
    convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_direct, src_md, wei_md, dst_md,
                                 strides, pl, pr);
    convolution_forward::primitive_desc fpd(fd, eng());
    typename Bwd::desc bd(algorithm::convolution_direct, src_md, wei_md, dst_md, strides, pl, pr);
    typename Bwd::primitive_desc bpd(bd, eng(), fpd);
    std::unordered_map<int, memory> mems;
    for (int arg : args) mems.emplace(arg, dnnl_mem(bpd.query_md(query::exec_arg_md, arg)));
    return dnnl_runner(Bwd(bpd), std::move(mems));
  };
  auto backward_data = [=](tag act) {
    return backward(convolution_backward_data{}, act, {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST});
  };
  auto backward_weights = [=](tag act) {
    return backward(convolution_backward_weights{}, act, {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST});
  };

  const std::string pre = depthwise ? "DepthwiseConv2dNative" : "Conv2D";
  Case ci{group ? group : depthwise ? "depthwise" : "conv", pre + "BackpropInput", desc, int(n), flops, false};
  ci.gradrt = [=](int threads) {
    return gradrt_runner(ci.op, {{"input_sizes", sizes(xs)}, {"filter", filled(ws, 1)}, {"out_backprop", filled(ys, 2)}},
                         attrs, threads);
  };
  ci.onednn = [=]() { return backward_data(tag::any); };
  ci.onednn_nhwc = [=]() { return backward_data(tag::nhwc); };
  cases.push_back(ci);
  if (group) return;

  Case cf{depthwise ? "depthwise" : "conv", pre + "BackpropFilter", desc, int(n), flops, false};
  cf.gradrt = [=](int threads) {
    return gradrt_runner(cf.op, {{"input", filled(xs, 3)}, {"filter_sizes", sizes(ws)}, {"out_backprop", filled(ys, 4)}},
                         attrs, threads);
  };
  cf.onednn = [=]() { return backward_weights(tag::any); };
  cf.onednn_nhwc = [=]() { return backward_weights(tag::nhwc); };
  cases.push_back(cf);
}

void add_batch_norm_case(std::vector<Case>& cases, int64_t n, int64_t h, int64_t c) {
  using namespace dnnl;
  const int64_t elems = n * h * h * c;
  Case b{"batchnorm", "FusedBatchNormGrad", std::to_string(h) + "x" + std::to_string(h) + "x" + std::to_string(c) + " train",
         int(n), 5.0 * elems * sizeof(float), true};  // bytes: dy and x read twice, dx written
  const std::vector<int64_t> xs{n, h, h, c}, cs{c};
  b.gradrt = [=](int threads) {
    Host var = filled(cs, 9);
    for (auto& v : var.f) v = v + 1.0f;
    gradrt::Attrs attrs{{"epsilon", gradrt::AttrValue(0.001)}, {"is_training", gradrt::AttrValue(true)}};
    return gradrt_runner("FusedBatchNormGrad",
                         {{"y_backprop", filled(xs, 5)}, {"x", filled(xs, 6)}, {"scale", filled(cs, 7)},
                          {"reserve_space_1", filled(cs, 8)}, {"reserve_space_2", var}},
                         attrs, threads);
  };
  auto runner = [=](memory::format_tag layout) {
    memory::desc data_md({n, c, h, h}, memory::data_type::f32, layout);
    const auto flags = normalization_flags::use_scale_shift;
    batch_normalization_forward::desc fd(prop_kind::forward_training, data_md, 0.001f, flags);
    batch_normalization_forward::primitive_desc fpd(fd, eng());
    batch_normalization_backward::desc bd(prop_kind::backward, data_md, data_md, 0.001f, flags);
    batch_normalization_backward::primitive_desc bpd(bd, eng(), fpd);
    memory var = dnnl_mem(bpd.variance_desc());
    float* pv = static_cast<float*>(var.get_data_handle());
    for (int64_t i = 0; i < c; ++i) pv[i] = 1.0f + 0.001f * i;
    return dnnl_runner(batch_normalization_backward(bpd),
                       {{DNNL_ARG_SRC, dnnl_mem(bpd.src_desc())}, {DNNL_ARG_MEAN, dnnl_mem(bpd.mean_desc())},
                        {DNNL_ARG_VARIANCE, var}, {DNNL_ARG_DIFF_DST, dnnl_mem(bpd.diff_dst_desc())},
                        {DNNL_ARG_SCALE_SHIFT, dnnl_mem(bpd.weights_desc())},
                        {DNNL_ARG_DIFF_SRC, dnnl_mem(bpd.diff_src_desc())},
                        {DNNL_ARG_DIFF_SCALE_SHIFT, dnnl_mem(bpd.diff_weights_desc())}});
  };
  // --isa=avx2: nChw8c, AVX2's blocked layout (capped at AVX2, oneDNN 2.6.3 has no JIT batch norm
  // for nChw16c and ran a reference loop, 100-500x slower).
  b.onednn = [=]() { return runner(g_isa_avx2 ? memory::format_tag::nChw8c : memory::format_tag::nChw16c); };
  b.onednn_nhwc = [=]() { return runner(memory::format_tag::nhwc); };
  cases.push_back(b);
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  while (*s) {
    v.push_back(std::atoi(s));
    const char* comma = std::strchr(s, ',');
    if (!comma) break;
    s = comma + 1;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> threads_list{1, 2}, batches{1, 8};
  int reps = 7, rounds = 1;
  bool keras = true;
  std::string filter, csv_path;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--threads=", 0) == 0) threads_list = parse_list(a.c_str() + 10);
    else if (a.rfind("--batch=", 0) == 0) batches = parse_list(a.c_str() + 8);
    else if (a.rfind("--reps=", 0) == 0) reps = std::max(1, std::atoi(a.c_str() + 7));
    else if (a.rfind("--rounds=", 0) == 0) rounds = std::max(1, std::atoi(a.c_str() + 9));
    else if (a.rfind("--filter=", 0) == 0) filter = a.substr(9);
    else if (a.rfind("--csv=", 0) == 0) csv_path = a.substr(6);
    else if (a.rfind("--warm-ms=", 0) == 0) g_warm_ms = std::atof(a.c_str() + 10);
    else if (a.rfind("--keras=", 0) == 0) keras = std::atoi(a.c_str() + 8) != 0;
    else if (a.rfind("--plan=", 0) == 0) g_plan = std::atoi(a.c_str() + 7) != 0;
    else if (a == "--stat=min" || a == "--stat=median") g_stat_min = a == "--stat=min";
    else if (a == "--isa=avx2") g_isa_avx2 = true;
    else {
      std::printf("usage: gradrt_bench [--threads=1,2] [--batch=1,8] [--reps=7] [--rounds=1] [--filter=SUBSTRING] [--csv=FILE] [--warm-ms=100] [--keras=1] [--plan=0] [--stat=median|min] [--isa=avx2]\n");
      return a == "--help" ? 0 : 2;
    }
  }

  if (g_isa_avx2) {
    // Read once, at each library's first use (gradrt: cpu backend start-up; oneDNN: its first
    // primitive), so set before anything below touches them. ONEDNN_VERBOSE=1 shows the
    // implementations oneDNN then picks (jit:avx2 / brgconv:avx2, never avx512).
    setenv("GRADRT_CPU_ISA", "avx2", 1);
    setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 1);
  }
  std::string peak_isa;
  const double peak1 = measure_peak_gflops(&peak_isa);
  std::string cpu_detail;
  for (const auto& b : gradrt::backends())
    if (b.name == "cpu") cpu_detail = b.detail;
  std::printf("gradrt %s, cpu backend: %s; oneDNN %d.%d.%d\n", gradrt::version(), cpu_detail.c_str(),
              dnnl::version()->major, dnnl::version()->minor, dnnl::version()->patch);
  if (g_isa_avx2)
    std::printf("--isa=avx2: GRADRT_CPU_ISA=avx2, ONEDNN_MAX_CPU_ISA=AVX2 (an AVX-512 core running AVX2 code: same caches\n"
                "and ports as its AVX-512 runs, not an AVX2-only CPU's timing)\n");
  std::printf("gradrt timed through %s\n", g_plan ? "Plan::run into preallocated outputs (prepared once, --plan=1)"
                                                  : "run_op (validation, plan cache and output allocation per call)");
  std::printf("measured FMA peak (%s): %.1f GFLOP/s per thread; %s of %d runs after warm-up, median of %d round(s)\n\n",
              peak_isa.c_str(), peak1, g_stat_min ? "fastest" : "median", reps, rounds);

  std::vector<Case> cases;
  for (int n : batches) {
    add_conv_cases(cases, false, n, 56, 64, 64, 3, 1);
    add_conv_cases(cases, false, n, 56, 64, 128, 3, 2);
    add_conv_cases(cases, false, n, 28, 256, 512, 1, 1);
    add_conv_cases(cases, true, n, 112, 32, 32, 3, 1);
    add_conv_cases(cases, true, n, 56, 144, 144, 3, 2);
    add_batch_norm_case(cases, n, 56, 256);
    // First layers on RGB input (issue 21: the Keras step's models): the filter gradient only
    // (a first layer needs no input gradient).
    for (const auto& [h, oc, k, s] : {std::array<int64_t, 4>{64, 32, 7, 2}, {32, 32, 3, 1}, {64, 16, 3, 2}}) {
      add_conv_cases(cases, false, n, h, 3, oc, k, s);
      cases.erase(cases.end() - 2);  // add_conv_cases' Conv2DBackpropInput
    }
  }
  // The Keras step's input gradients furthest behind oneDNN (bench/results_keras_step.txt; the
  // same list as KERAS_INPUT_SHAPES in cli_medians.py), at the models' batch 32 whatever --batch
  // (--keras=0 leaves them out): k, hw, dx channels, dy channels, stride.
  if (keras)
    for (const auto& [k, hw, c, oc, s] : std::vector<std::array<int64_t, 5>>{
             {3, 32, 32, 64, 2}, {3, 16, 32, 32, 1}, {3, 16, 64, 128, 2}, {1, 32, 32, 32, 1}, {1, 32, 8, 48, 1},
             {1, 32, 16, 8, 1}, {1, 32, 16, 96, 1}, {1, 16, 24, 144, 1}, {1, 16, 64, 64, 1}})
      add_conv_cases(cases, false, 32, hw, c, oc, k, s, "keras");
  // The Keras step's filter gradients (bench/keras_step.py: small_cnn's and resnet's layers, the
  // first layers on RGB input included), at batch 32 whatever --batch, in their own group
  // "keras_filter" (--keras=0 leaves them out): k, hw, x channels, dy channels, stride.
  if (keras)
    for (const auto& [k, hw, c, oc, s] : std::vector<std::array<int64_t, 5>>{
             {7, 64, 3, 32, 2}, {3, 32, 3, 32, 1}, {3, 32, 32, 64, 2}, {3, 16, 32, 32, 1}, {3, 16, 32, 64, 2},
             {3, 8, 64, 64, 1}, {1, 32, 32, 32, 1}, {1, 16, 32, 64, 2}, {1, 16, 64, 64, 1}}) {
      add_conv_cases(cases, false, 32, hw, c, oc, k, s);
      cases.erase(cases.end() - 2);  // add_conv_cases' Conv2DBackpropInput
      cases.back().group = "keras_filter";
    }

  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv) std::fprintf(csv, "threads,group,op,shape,batch,gradrt_ms,onednn_ms,rate,unit,peak_pct,ratio,onednn_nhwc_ms,ratio_nhwc\n");
  for (int threads : threads_list) {
    omp_set_num_threads(threads);
    std::printf("threads=%d  (peak %.0f GFLOP/s)\n", threads, peak1 * threads);
    std::printf("%-36s %-22s %5s | %9s %9s %6s | %9s %9s %6s | %6s | %9s %6s\n", "op", "shape", "batch", "gradrt ms",
                "rate", "%peak", "oneDNN ms", "rate", "%peak", "ratio", "NHWC ms", "ratio");
    std::map<std::string, std::vector<double>> ratios, ratios_nhwc;
    for (const Case& c : cases) {
      if (!filter.empty() && (c.op + " " + c.shape).find(filter) == std::string::npos) continue;
      const int r = c.work > 1e9 && !c.bandwidth ? std::max(3, reps / 2) : reps;
      // Not interleaved, and a pause first: libgomp's workers keep spinning for several ms
      // after oneDNN's last call (OMP_WAIT_POLICY unset) and would hold the second core
      // while gradrt's pool wants it.
      // --rounds: the three sides measured in turn, the median of each side's round medians:
      // a burst of outside load then spoils one round of one side, not the row.
      std::vector<double> vg, vo, vn;
      for (int round = 0; round < rounds; ++round) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        vg.push_back(time_median(c.gradrt(threads), 3, r));
        vo.push_back(time_median(c.onednn(), 3, r));
        vn.push_back(time_median(c.onednn_nhwc(), 3, r));
      }
      const double tg = median_of(vg), to = median_of(vo), tn = median_of(vn);
      const double rg = c.work / tg * 1e-9, ro = c.work / to * 1e-9;
      const double pg = c.bandwidth ? 0 : 100 * rg / (peak1 * threads), po = c.bandwidth ? 0 : 100 * ro / (peak1 * threads);
      // Paired: each round's ratio of its own sides (this host's speed drifts 10-40% over
      // minutes; a ratio of the side medians mixed rounds of different speeds).
      std::vector<double> qo, qn;
      for (int round = 0; round < rounds; ++round) qo.push_back(vo[round] / vg[round]), qn.push_back(vn[round] / vg[round]);
      const double ratio = median_of(qo), ratio_nhwc = median_of(qn);
      ratios[c.group].push_back(ratio);
      ratios_nhwc[c.group].push_back(ratio_nhwc);
      const char* unit = c.bandwidth ? "GB/s" : "GFLOP/s";
      char pgs[16] = "-", pos[16] = "-";
      if (!c.bandwidth) {
        std::snprintf(pgs, sizeof pgs, "%.0f%%", pg);
        std::snprintf(pos, sizeof pos, "%.0f%%", po);
      }
      std::printf("%-36s %-22s %5d | %9.3f %9.1f %6s | %9.3f %9.1f %6s | %6.2f | %9.3f %6.2f  %s\n", c.op.c_str(),
                  c.shape.c_str(), c.batch, tg * 1e3, rg, pgs, to * 1e3, ro, pos, ratio, tn * 1e3, ratio_nhwc, unit);
      if (csv)
        std::fprintf(csv, "%d,%s,%s,%s,%d,%.4f,%.4f,%.2f,%s,%.1f,%.3f,%.4f,%.3f\n", threads, c.group.c_str(),
                     c.op.c_str(), c.shape.c_str(), c.batch, tg * 1e3, to * 1e3, rg, unit, pg, ratio, tn * 1e3,
                     ratio_nhwc);
      std::fflush(stdout);
    }
    auto geomean = [](const std::vector<double>& v) {
      double lg = 0;
      for (double x : v) lg += std::log(x);
      return std::exp(lg / v.size());
    };
    for (auto& [group, v] : ratios)
      std::printf("geomean gradrt/oneDNN, %-10s threads=%d: %.2f vs oneDNN blocked, %.2f vs oneDNN NHWC  (%zu shapes)\n",
                  group.c_str(), threads, geomean(v), geomean(ratios_nhwc[group]), v.size());
    std::printf("\n");
  }
  if (csv) std::fclose(csv);
  return 0;
}

// A small op's call cost natively (issue 22 item 5): the kernel alone (the cpu backend called
// with resolved params, the floor), the op run without a plan (run_op's path before plans:
// attributes, validation and choice on every call), run_op (prepare + run behind the plan
// cache), and Plan::run, each with fresh outputs and into the caller's memory (output_memory).
// One thread (the pool is not part of a call's overhead); rounds interleave the variants, each
// round times enough calls for ~10 ms per variant; the table gives the median over rounds of
// the mean thread CPU time per call and the overhead above the kernel.
//   call_overhead [--rounds N]
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "conv_shape.h"
#include "gradrt/gradrt.h"
#include "op_context.h"
#include "registry.h"

namespace {

using namespace gradrt;

struct Host {
  DType dtype;
  std::vector<int64_t> shape;
  std::vector<float> f;
  std::vector<int32_t> i;
  TensorView view() const { return {dtype, shape, dtype == DType::int32 ? (const void*)i.data() : (const void*)f.data()}; }
};

Host floats(std::vector<int64_t> shape, std::mt19937& rng) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Host h{DType::float32, shape, std::vector<float>(size_t(n))};
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : h.f) v = u(rng);
  return h;
}
Host ints(std::vector<int32_t> v) { return {DType::int32, {int64_t(v.size())}, {}, v}; }

struct Case {
  std::string label, op;
  std::vector<std::pair<std::string, Host>> inputs;
  Attrs attrs;
  std::function<void(const Inputs&, std::vector<float>&)> kernel;  // the backend call alone
};

// The op run without a plan: an op context that runs the whole op function (what run_op did
// on every call before plans).
Status unplanned(const std::string& op, const Inputs& in, const Attrs& attrs, Outputs* out, const RunOptions& o) {
  out->clear();
  const OpInfo* info = find_op(op);
  OpContext ctx(*info, in, attrs, o, out);
  Status s = op_function(*info)(ctx);
  return s.ok() ? ctx.finish() : s;
}

// This thread's CPU time per call (every variant runs on the calling thread): steadier than
// wall time on a shared machine, where other tenants take the core away.
double per_call_us(const std::function<void()>& f, int calls) {
  timespec t0, t1;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  for (int i = 0; i < calls; ++i) f();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  return ((t1.tv_sec - t0.tv_sec) * 1e6 + (t1.tv_nsec - t0.tv_nsec) * 1e-3) / calls;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  for (int a = 1; a + 1 < argc; ++a)
    if (std::strcmp(argv[a], "--rounds") == 0) rounds = std::atoi(argv[a + 1]);
  std::mt19937 rng(1);
  const Attrs conv = {{"strides", AttrValue({1, 1, 1, 1})}, {"padding", "SAME"}};
  Exec one;
  std::vector<Case> cases;
  ConvSpec spec;
  spec.strides = {1, 1, 1, 1};
  spec.dilations = {1, 1, 1, 1};
  spec.padding = Padding::kSame;
  ConvParams cp, dp;
  Status rs = resolve_conv("bench", spec, {1, 8, 8, 16}, {3, 3, 16, 16}, nullptr, &cp, nullptr);
  std::vector<int64_t> ys;
  if (rs.ok()) rs = resolve_depthwise("bench", spec, {1, 8, 8, 16}, {3, 3, 16, 1}, nullptr, &dp, &ys);
  if (!rs.ok()) return std::fprintf(stderr, "%s\n", rs.to_string().c_str()), 1;
  auto f = [](const Inputs& in, const char* n) { return static_cast<const float*>(in.at(n).data); };
  cases.push_back({"8x8x16 3x3 -> 16", "Conv2DBackpropInput",
                   {{"input_sizes", ints({1, 8, 8, 16})}, {"filter", floats({3, 3, 16, 16}, rng)},
                    {"out_backprop", floats({1, 8, 8, 16}, rng)}}, conv,
                   [&](const Inputs& in, std::vector<float>& o) {
                     o.resize(size_t(cp.x_elements()));
                     (void)cpu_backend()->conv2d_backprop_input(one, cp, f(in, "filter"), f(in, "out_backprop"), o.data());
                   }});
  cases.push_back({"8x8x16 3x3 -> 16", "Conv2DBackpropFilter",
                   {{"input", floats({1, 8, 8, 16}, rng)}, {"filter_sizes", ints({3, 3, 16, 16})},
                    {"out_backprop", floats({1, 8, 8, 16}, rng)}}, conv,
                   [&](const Inputs& in, std::vector<float>& o) {
                     o.resize(size_t(cp.w_elements()));
                     (void)cpu_backend()->conv2d_backprop_filter(one, cp, f(in, "input"), f(in, "out_backprop"), o.data());
                   }});
  cases.push_back({"8x8x16 3x3", "DepthwiseConv2dNativeBackpropInput",
                   {{"input_sizes", ints({1, 8, 8, 16})}, {"filter", floats({3, 3, 16, 1}, rng)},
                    {"out_backprop", floats({1, 8, 8, 16}, rng)}}, conv,
                   [&](const Inputs& in, std::vector<float>& o) {
                     o.resize(size_t(dp.x_elements()));
                     (void)cpu_backend()->depthwise_conv2d_native_backprop_input(one, dp, f(in, "filter"), f(in, "out_backprop"), o.data());
                   }});

  RunOptions opts;
  opts.backend = "cpu";
  opts.threads = 1;
  char cpu[256] = "unknown CPU";
  if (FILE* fp = std::fopen("/proc/cpuinfo", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, fp))
      if (std::strncmp(line, "model name", 10) == 0) {
        std::snprintf(cpu, sizeof cpu, "%s", std::strchr(line, ':') + 2);
        cpu[std::strcspn(cpu, "\n")] = 0;
        break;
      }
    std::fclose(fp);
  }
  std::string isa;
  for (const BackendInfo& b : backends())
    if (b.name == "cpu") isa = b.detail;
  std::printf("call cost of small ops, 1 thread, %s, cpu backend %s; median over %d rounds of CPU us per call\n", cpu,
              isa.c_str(), rounds);
  std::printf("%-36s %-18s %8s | %14s %14s %14s %14s %14s\n", "op", "shape", "kernel", "unplanned", "run_op", "plan.run",
              "run_op into", "plan.run into");
  for (Case& c : cases) {
    Inputs in;
    for (const auto& [name, h] : c.inputs) in[name] = h.view();
    Plan plan;
    Status s = prepare(c.op, in, c.attrs, &plan, opts);
    if (!s.ok()) return std::fprintf(stderr, "%s\n", s.to_string().c_str()), 1;
    std::vector<float> kout, mem(1 << 16);
    Outputs out;
    RunOptions into = opts;
    into.output_memory = [&](std::string_view, DType, const std::vector<int64_t>&) -> void* { return mem.data(); };
    PlanRunOptions pinto;
    pinto.output_memory = into.output_memory;
    const std::vector<std::function<void()>> variants = {
        [&] { c.kernel(in, kout); },
        [&] { (void)unplanned(c.op, in, c.attrs, &out, opts); },
        [&] { (void)run_op(c.op, in, c.attrs, &out, opts); },
        [&] { (void)plan.run(in, &out); },
        [&] { (void)run_op(c.op, in, c.attrs, &out, into); },
        [&] { (void)plan.run(in, &out, pinto); },
    };
    std::vector<std::vector<double>> t(variants.size());
    const double once = per_call_us(variants[3], 200);
    const int calls = std::max(50, int(10000.0 / std::max(once, 0.1)));
    for (int r = 0; r < rounds; ++r)
      for (size_t v = 0; v < variants.size(); ++v) t[v].push_back(per_call_us(variants[v], calls));
    std::vector<double> med;
    for (auto& x : t) {
      std::sort(x.begin(), x.end());
      med.push_back(x[x.size() / 2]);
    }
    std::printf("%-36s %-18s %8.2f |", c.op.c_str(), c.label.c_str(), med[0]);
    for (size_t v = 1; v < med.size(); ++v) std::printf(" %6.2f (+%5.2f)", med[v], med[v] - med[0]);
    std::printf("\n");
  }
  std::printf("(+x: the call's cost above the kernel alone; \"into\": outputs into the caller's memory)\n");
  return 0;
}

// vulkan_bench: GPU time (timestamp queries around the dispatches of one submission) and wall
// time (upload + dispatch + read-back) of the vulkan kernels on a few ResNet/MobileNet-like
// shapes, next to the cpu backend's wall time. Uses a context of its own (vulkan/context.h),
// so it honours GRADRT_VULKAN_DEVICE like the backend does. The conv, depthwise and batch-norm
// gradients also run with float16 storage (rows "... f16": vulkan/ops/common.h f16_storage; the
// same shapes, the _f16 shaders, half the bytes) where the device has 16-bit storage; "MB h<->d"
// is what one call moves between host and device (the Context's counters).
//   vulkan_bench [--repeat N] [--only f16]   (--only f16: just the float32/float16 pairs)
// --only input: the sweep of Conv2DBackpropInput's variants (vulkan/ops/conv2d_backprop_input.cpp,
// GRADRT_VULKAN_INPUT) on the MobileNet/ResNet shapes, --rounds R rounds of every shape x variant
// interleaved, --repeat N timed calls each (median of all): GPU ms per variant and shape, and the
// check that each variant's dx has base's bits (split: its largest difference from base, relative
// to max |dx|). --variants a,b,... picks variants; --json FILE writes the rows for
// bench/input_sweep.py (cuDNN's times next to them); --batch-div D divides the batch (dry runs).
#include <algorithm>
#include <array>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "parallel.h"
#include "bench/conv_shapes.h"
#include "vulkan/context.h"
#include "vulkan/ops/common.h"
#include "vulkan/ops/ops.h"

namespace {

using gradrt::ConvParams;
using gradrt::Status;
using gradrt::bench::same_conv;

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Row {
  std::string op, shape;
  double flops;
  std::function<Status()> vulkan, cpu;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// --only input: Conv2DBackpropInput's variants, interleaved, on the step's shapes.
struct InputSweep {
  int rounds = 3, repeat = 5, batch_div = 1;
  std::string variants, json;  // variants: "" = every one (kInputVariants)
};

int input_sweep(gradrt::vk::Context& ctx, const InputSweep& o) {
  using gradrt::vk::InputVariant;
  const InputVariant saved = gradrt::vk::input_variant();
  std::vector<InputVariant> vars;
  if (o.variants.empty()) vars.assign(std::begin(gradrt::vk::kInputVariants), std::end(gradrt::vk::kInputVariants));
  for (size_t b = 0; !o.variants.empty() && b <= o.variants.size();) {
    const size_t e = std::min(o.variants.find(',', b), o.variants.size());
    InputVariant v;
    const std::string name = o.variants.substr(b, e - b);
    if (!gradrt::vk::parse_input_variant(name.c_str(), &v)) {
      std::printf("unknown variant %s\n", name.c_str());
      return 2;
    }
    vars.push_back(v);
    b = e + 1;
  }
  struct Shape {
    int64_t n, hw, ci, co, f, st;
    gradrt::ConvParams p;
    std::vector<float> w, dy, dx, base;
    std::vector<std::vector<double>> ms;  // per variant
    std::vector<double> diff;             // per variant: max |dx - base| / max |base|
  };
  // (batch, image side, dx channels, dy channels, filter, stride): the gradrt_step chains' input
  // gradients (cuDNN-timed there) and vulkan_bench's few-row and strided rows.
  std::vector<Shape> shapes;
  for (auto [n, hw, ci, co, f, st] : std::vector<std::array<int64_t, 6>>{
           {32, 56, 64, 64, 3, 1}, {8, 56, 64, 64, 3, 1}, {32, 56, 24, 144, 1, 1}, {8, 56, 24, 144, 1, 1},
           {32, 56, 144, 24, 1, 1}, {8, 56, 144, 24, 1, 1}, {8, 28, 128, 128, 3, 1}, {8, 14, 256, 256, 3, 1},
           {8, 56, 64, 128, 3, 2}}) {
    Shape s{std::max<int64_t>(1, n / o.batch_div), hw, ci, co, f, st, {}, {}, {}, {}, {}, {}, {}};
    s.p = same_conv(s.n, hw, ci, co, f, st, false);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1, 1);
    s.w.resize(s.p.w_elements());
    s.dy.resize(s.p.y_elements());
    for (auto& e : s.w) e = d(rng);
    for (auto& e : s.dy) e = d(rng);
    s.dx.resize(s.p.x_elements());
    s.ms.resize(vars.size());
    s.diff.assign(vars.size(), -1);
    shapes.push_back(std::move(s));
  }
  for (int r = 0; r < o.rounds; ++r)
    for (Shape& s : shapes)
      for (size_t v = 0; v < vars.size(); ++v) {
        gradrt::vk::set_input_variant(vars[v]);
        for (int i = 0; i <= o.repeat; ++i) {  // call 0: warm-up (pipeline), and the bits check
          const Status st = gradrt::vk::conv2d_backprop_input<float>(ctx, s.p, s.w.data(), s.dy.data(), s.dx.data());
          if (!st.ok()) {
            std::printf("%s: %s\n", gradrt::vk::input_variant_name(vars[v]), st.to_string().c_str());
            return 1;
          }
          if (i > 0) s.ms[v].push_back(ctx.last_gpu_ms());
          if (i == 0 && r == 0 && vars[v] == InputVariant::base) s.base = s.dx;
          if (i == 0 && r == 0 && !s.base.empty()) {
            double d = 0, m = 0;
            for (size_t j = 0; j < s.dx.size(); ++j) {
              d = std::max(d, double(std::abs(s.dx[j] - s.base[j])));
              m = std::max(m, double(std::abs(s.base[j])));
            }
            s.diff[v] = m > 0 ? d / m : d;
          }
        }
      }
  gradrt::vk::set_input_variant(saved);

  std::printf("Conv2DBackpropInput variants (GRADRT_VULKAN_INPUT=...): GPU ms, median of %d rounds x %d calls\n",
              o.rounds, o.repeat);
  std::printf("%-28s", "shape (x -> dy channels)");
  for (InputVariant v : vars) std::printf(" %9s", gradrt::vk::input_variant_name(v));
  std::printf(" %9s %10s  bits vs base (=: same; else max|diff|/max|dx|)\n", "best", "base/best");
  FILE* jf = o.json.empty() ? nullptr : std::fopen(o.json.c_str(), "w");
  for (Shape& s : shapes) {
    char shape[64];
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld f%lld s%lld -> %lld", (long long)s.n, (long long)s.hw,
                  (long long)s.hw, (long long)s.ci, (long long)s.f, (long long)s.st, (long long)s.co);
    std::printf("%-28s", shape);
    size_t best = 0;
    std::vector<double> med(vars.size());
    for (size_t v = 0; v < vars.size(); ++v) {
      med[v] = median(s.ms[v]);
      if (med[v] < med[best]) best = v;
      std::printf(" %9.4f", med[v]);
    }
    const double base_ms = vars[0] == InputVariant::base ? med[0] : 0;
    std::printf(" %9s %10.2f ", gradrt::vk::input_variant_name(vars[best]), base_ms > 0 ? base_ms / med[best] : 0.0);
    for (size_t v = 0; v < vars.size(); ++v) {
      if (s.diff[v] == 0) std::printf(" =");
      else if (s.diff[v] < 0) std::printf(" ?");
      else std::printf(" %.1e", s.diff[v]);
    }
    std::printf("\n");
    if (jf) {
      std::fprintf(jf, "{\"shape\":\"%s\",\"n\":%lld,\"h\":%lld,\"w\":%lld,\"ci\":%lld,\"co\":%lld,\"k\":%lld,"
                   "\"stride\":%lld,\"flops\":%.0f,\"ms\":{", shape, (long long)s.n, (long long)s.hw, (long long)s.hw,
                   (long long)s.ci, (long long)s.co, (long long)s.f, (long long)s.st,
                   2.0 * s.p.y_elements() * s.p.filter_h * s.p.filter_w * s.p.filter_in_c);
      for (size_t v = 0; v < vars.size(); ++v)
        std::fprintf(jf, "%s\"%s\":%.5f", v ? "," : "", gradrt::vk::input_variant_name(vars[v]), med[v]);
      std::fprintf(jf, "},\"rel_diff_vs_base\":{");
      for (size_t v = 0; v < vars.size(); ++v)
        std::fprintf(jf, "%s\"%s\":%.3g", v ? "," : "", gradrt::vk::input_variant_name(vars[v]), s.diff[v]);
      std::fprintf(jf, "}}\n");
    }
  }
  if (jf) std::fclose(jf);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  bool only_f16 = false;
  bool only_input = false;
  InputSweep sweep;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only_f16 = !std::strcmp(argv[++i], "f16");
      only_input = !std::strcmp(argv[i], "input");
    }
    if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) sweep.rounds = std::max(1, std::atoi(argv[++i]));
    if (!std::strcmp(argv[i], "--variants") && i + 1 < argc) sweep.variants = argv[++i];
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc) sweep.json = argv[++i];
    if (!std::strcmp(argv[i], "--batch-div") && i + 1 < argc) sweep.batch_div = std::max(1, std::atoi(argv[++i]));
  }
  sweep.repeat = repeat;

  std::unique_ptr<gradrt::vk::Context> ctx;
  Status s = gradrt::vk::Context::create({}, &ctx);
  if (!s.ok()) {
    std::printf("vulkan unavailable: %s\n", s.to_string().c_str());
    return 0;
  }
  ctx->set_timing(true);
  std::printf("device: %s%s\n", ctx->info().props.deviceName, ctx->timing() ? "" : " (no timestamps)");
  if (only_input) {
    const int rc = input_sweep(*ctx, sweep);
    ctx->save_pipeline_cache();
    return rc;
  }

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  auto fill = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& e : v) e = d(rng);
    return v;
  };
  gradrt::Backend* cpu = gradrt::cpu_backend();
  const gradrt::Exec exec{gradrt::default_threads()};  // resolved, as core does (0 is not a count)

  // Buffers live as long as the rows that point into them.
  std::vector<std::unique_ptr<std::vector<float>>> keep;
  auto buf = [&](std::vector<float> v) {
    keep.push_back(std::make_unique<std::vector<float>>(std::move(v)));
    return keep.back()->data();
  };

  // float16 copies of float buffers (binary16 bits), for the f16 rows.
  std::vector<std::unique_ptr<std::vector<uint16_t>>> keep16;
  auto half = [&](const float* v, int64_t n) {
    auto h = std::make_unique<std::vector<uint16_t>>(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) (*h)[i] = gradrt::float_to_half(v[i]);
    keep16.push_back(std::move(h));
    return keep16.back()->data();
  };
  const bool f16 = gradrt::vk::f16_storage(*ctx);
  if (!f16) std::printf("no f16 rows: float16 storage is off here (no storageBuffer16BitAccess, or v1/v4 set)\n");
  const std::function<Status()> no_cpu = [] { return Status(gradrt::Code::Unimplemented, "cpu: no f16 kernel"); };

  std::vector<Row> rows;
  for (auto [n, hw, ci, co, f, st] : std::vector<std::array<int64_t, 6>>{
           {8, 56, 64, 64, 3, 1}, {8, 28, 128, 128, 3, 1}, {8, 14, 256, 256, 3, 1}, {8, 56, 64, 128, 3, 2}}) {
    if (only_f16 && !f16) break;
    const ConvParams p = same_conv(n, hw, ci, co, f, st, false);
    const double flops = 2.0 * p.y_elements() * p.filter_h * p.filter_w * p.filter_in_c;
    char shape[96];
    std::snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld f%lld s%lld -> %lld", (long long)n, (long long)hw,
                  (long long)hw, (long long)ci, (long long)f, (long long)st, (long long)co);
    float *x = buf(fill(p.x_elements())), *w = buf(fill(p.w_elements())), *dy = buf(fill(p.y_elements()));
    float *dx = buf(std::vector<float>(p.x_elements())), *dw = buf(std::vector<float>(p.w_elements()));
    rows.push_back({"Conv2DBackpropInput", shape, flops,
                    [=, &ctx] { return gradrt::vk::conv2d_backprop_input<float>(*ctx, p, w, dy, dx); },
                    [=] { return cpu->conv2d_backprop_input(exec, p, w, dy, dx); }});
    rows.push_back({"Conv2DBackpropFilter", shape, flops,
                    [=, &ctx] { return gradrt::vk::conv2d_backprop_filter<float>(*ctx, p, x, dy, dw); },
                    [=] { return cpu->conv2d_backprop_filter(exec, p, x, dy, dw); }});
    if (f16) {
      const uint16_t *x16 = half(x, p.x_elements()), *w16 = half(w, p.w_elements()), *dy16 = half(dy, p.y_elements());
      uint16_t *dx16 = half(dx, p.x_elements()), *dw16 = half(dw, p.w_elements());
      rows.push_back({"Conv2DBackpropInput f16", shape, flops,
                      [=, &ctx] { return gradrt::vk::conv2d_backprop_input(*ctx, p, w16, dy16, dx16); }, no_cpu});
      rows.push_back({"Conv2DBackpropFilter f16", shape, flops,
                      [=, &ctx] { return gradrt::vk::conv2d_backprop_filter(*ctx, p, x16, dy16, dw16); }, no_cpu});
    }
  }
  {
    const ConvParams p = same_conv(8, 112, 32, 32, 3, 1, true);
    const double flops = 2.0 * p.y_elements() * 9;
    float *x = buf(fill(p.x_elements())), *w = buf(fill(p.dw_w_elements())), *dy = buf(fill(p.y_elements()));
    float *dx = buf(std::vector<float>(p.x_elements())), *dw = buf(std::vector<float>(p.dw_w_elements()));
    rows.push_back({"DepthwiseConv2dNativeBackpropInput", "8x112x112x32 f3", flops,
                    [=, &ctx] { return gradrt::vk::depthwise_conv2d_native_backprop_input<float>(*ctx, p, w, dy, dx); },
                    [=] { return cpu->depthwise_conv2d_native_backprop_input(exec, p, w, dy, dx); }});
    rows.push_back({"DepthwiseConv2dNativeBackpropFilter", "8x112x112x32 f3", flops,
                    [=, &ctx] { return gradrt::vk::depthwise_conv2d_native_backprop_filter<float>(*ctx, p, x, dy, dw); },
                    [=] { return cpu->depthwise_conv2d_native_backprop_filter(exec, p, x, dy, dw); }});
    if (f16) {
      const uint16_t *x16 = half(x, p.x_elements()), *w16 = half(w, p.dw_w_elements()), *dy16 = half(dy, p.y_elements());
      uint16_t *dx16 = half(dx, p.x_elements()), *dw16 = half(dw, p.dw_w_elements());
      rows.push_back({"DepthwiseConv2dNativeBackpropInput f16", "8x112x112x32 f3", flops,
                      [=, &ctx] { return gradrt::vk::depthwise_conv2d_native_backprop_input(*ctx, p, w16, dy16, dx16); },
                      no_cpu});
      rows.push_back({"DepthwiseConv2dNativeBackpropFilter f16", "8x112x112x32 f3", flops,
                      [=, &ctx] { return gradrt::vk::depthwise_conv2d_native_backprop_filter(*ctx, p, x16, dy16, dw16); },
                      no_cpu});
    }
  }
  {
    gradrt::BatchNormParams p;
    p.rows = 8 * 56 * 56;
    p.channels = 64;
    const int64_t e = p.rows * p.channels;
    float *dy = buf(fill(e)), *x = buf(fill(e)), *sc = buf(fill(64)), *m = buf(fill(64)), *v = buf(fill(64));
    for (int i = 0; i < 64; ++i) v[i] = 1.0f + std::abs(v[i]);
    float *dx = buf(std::vector<float>(e)), *ds = buf(std::vector<float>(64)), *dof = buf(std::vector<float>(64));
    rows.push_back({"FusedBatchNormGrad", "8x56x56x64", 10.0 * e,
                    [=, &ctx] { return gradrt::vk::fused_batch_norm_grad<float>(*ctx, p, dy, x, sc, m, v, dx, ds, dof); },
                    [=] { return cpu->fused_batch_norm_grad(exec, p, dy, x, sc, m, v, dx, ds, dof); }});
    if (f16) {
      const uint16_t *dy16 = half(dy, e), *x16 = half(x, e);
      uint16_t* dx16 = half(dx, e);
      rows.push_back({"FusedBatchNormGrad f16", "8x56x56x64", 10.0 * e,
                      [=, &ctx] { return gradrt::vk::fused_batch_norm_grad(*ctx, p, dy16, x16, sc, m, v, dx16, ds, dof); },
                      no_cpu});
    }
  }

  std::printf("%-40s %-20s %10s %10s %10s %12s %10s\n", "op", "shape", "gpu ms", "wall ms", "cpu ms", "gpu GFLOP/s",
              "MB h<->d");
  for (Row& r : rows) {
    std::vector<double> gpu, wall, cpu_ms;
    const gradrt::vk::Context::Counters c0 = ctx->counters();
    Status st = r.vulkan();  // warm-up: pipeline creation; its copies are the row's MB
    const gradrt::vk::Context::Counters c1 = ctx->counters();
    const double mb = double(c1.bytes_to_device - c0.bytes_to_device + c1.bytes_to_host - c0.bytes_to_host) / 1e6;
    for (int i = 0; i < repeat && st.ok(); ++i) {
      const double t0 = now_ms();
      st = r.vulkan();
      wall.push_back(now_ms() - t0);
      gpu.push_back(ctx->last_gpu_ms());
    }
    Status sc = r.cpu();
    for (int i = 0; i < repeat && sc.ok(); ++i) {
      const double t0 = now_ms();
      sc = r.cpu();
      cpu_ms.push_back(now_ms() - t0);
    }
    if (!st.ok()) {
      std::printf("%-40s %-20s %s\n", r.op.c_str(), r.shape.c_str(), st.to_string().c_str());
      continue;
    }
    const double g = median(gpu);
    std::printf("%-40s %-20s %10.3f %10.3f %10.3f %12.1f %10.2f\n", r.op.c_str(), r.shape.c_str(), g, median(wall),
                sc.ok() ? median(cpu_ms) : -1.0, g > 0 ? r.flops / g / 1e6 : 0.0, mb);
  }
  ctx->save_pipeline_cache();
  return 0;
}

// NCHW 1x1 stride-1 conv gradients run as per-image GEMMs on the channels-first data
// (core/ops/conv_1x1_nchw.cpp): every cpu ISA (and vulkan when present) against the reference
// backend run on NHWC copies (the test transposes; the reference never takes the new path),
// float32/float64/float16, batch > 1, odd sizes, sizes just below and above the pixel
// threshold; the cpu bits must not depend on the thread count and no plan may lack workspace.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "ops/ops.h"
#include "simd/kernels/table.h"
#include "util.h"
#include "variants.h"

namespace {

using gradrt::AttrValue;
using gradrt::Attrs;
using gradrt::DType;
using test::Host;

struct Shape {
  int64_t n, c, h, w, oc;
};

Attrs attrs(bool nchw, const char* padding) {
  const std::vector<int64_t> ones = {1, 1, 1, 1};
  return {{"strides", AttrValue(ones)}, {"padding", AttrValue(padding)}, {"data_format", AttrValue(nchw ? "NCHW" : "NHWC")}};
}

// Output 0 of op on `backend` at `threads`, as doubles (NCHW outputs stay NCHW).
std::vector<double> run_values(const std::string& op, const test::Named& in, const Attrs& a, const std::string& backend,
                               int threads, std::string* ran_on = nullptr) {
  test::Result r = test::run(op, in, a, backend, threads);
  REQUIRE_MESSAGE(r.status.ok(), op << " on " << backend << ": " << r.status.to_string());
  if (ran_on) *ran_on = r.backend;
  return r.vals();
}

}  // namespace

TEST_CASE("sweep: NCHW 1x1 gradients without transposes equal the reference on NHWC copies, every variant") {
  test::IsaGuard guard;
  const std::vector<Shape> shapes = {
      {3, 37, 19, 17, 45},  // odd everything, 323 pixels
      {2, 5, 16, 16, 3},   // 256 pixels: the smallest that takes the path
      {2, 6, 15, 17, 7},   // 255 pixels: keeps the transposes
      {1, 64, 16, 17, 32},  // batch 1
      {4, 1, 16, 19, 17},   // one input channel
      {2, 19, 29, 9, 1},    // one output channel
  };
  const DType dtypes[] = {DType::float32, DType::float64, DType::float16};
  std::mt19937 rng(2111);
  std::vector<test::Variant> variants = test::variants();
  const uint64_t fallbacks = gradrt::simd::workspace_fallbacks();
  int checked = 0;
  for (const Shape& s : shapes) {
    for (DType dtype : dtypes) {
      for (const char* padding : {"VALID", "SAME"}) {
        const std::string what = "x[" + std::to_string(s.n) + "," + std::to_string(s.c) + "," + std::to_string(s.h) +
                                 "," + std::to_string(s.w) + "] -> " + std::to_string(s.oc) + " " +
                                 gradrt::dtype_name(dtype) + " " + padding;
        CAPTURE(what);
        const Host x = test::random(dtype, {s.n, s.c, s.h, s.w}, rng);
        const Host w = test::random(dtype, {1, 1, s.c, s.oc}, rng);
        const Host dy = test::random(dtype, {s.n, s.oc, s.h, s.w}, rng);
        const Host x_nhwc = test::make(dtype, {s.n, s.h, s.w, s.c}, test::nchw_to_nhwc(x.values(), x.shape));
        const Host dy_nhwc = test::make(dtype, {s.n, s.h, s.w, s.oc}, test::nchw_to_nhwc(dy.values(), dy.shape));
        const auto sizes_nchw = test::ints({s.n, s.c, s.h, s.w}), sizes_nhwc = test::ints({s.n, s.h, s.w, s.c});
        const auto fsizes = test::ints({1, 1, s.c, s.oc});
        // The oracle: the reference backend on NHWC data; the input gradient transposed back here.
        const std::vector<double> want_dw =
            run_values("Conv2DBackpropFilter", {{"input", x_nhwc}, {"filter_sizes", fsizes}, {"out_backprop", dy_nhwc}},
                       attrs(false, padding), "reference", 1);
        const std::vector<double> want_dx_nhwc =
            run_values("Conv2DBackpropInput", {{"input_sizes", sizes_nhwc}, {"filter", w}, {"out_backprop", dy_nhwc}},
                       attrs(false, padding), "reference", 1);
        const Host dx_nhwc = test::make(DType::float64, {s.n, s.h, s.w, s.c}, want_dx_nhwc);
        const std::vector<double> want_dx = test::transpose_nhwc_to_nchw(dx_nhwc).values();
        const double dw_tol = test::tolerance(dtype, s.n * s.h * s.w), dx_tol = test::tolerance(dtype, s.oc);
        const test::Named filter_in = {{"input", x}, {"filter_sizes", fsizes}, {"out_backprop", dy}};
        const test::Named input_in = {{"input_sizes", sizes_nchw}, {"filter", w}, {"out_backprop", dy}};
        for (const test::Variant& v : variants) {
          CAPTURE(v.name);
          test::select(v);
          const std::string backend = v.gpu ? "vulkan" : "cpu";
          std::string ran_on;
          const std::vector<double> dw = run_values("Conv2DBackpropFilter", filter_in, attrs(true, padding), backend, 1, &ran_on);
          if (!v.gpu) CHECK_EQ(ran_on, "cpu");
          test::check_close(dw, want_dw, 4 * dw_tol, 4 * dw_tol, what + " dw on " + v.name);
          const std::vector<double> dx = run_values("Conv2DBackpropInput", input_in, attrs(true, padding), backend, 1);
          test::check_close(dx, want_dx, 4 * dx_tol, 4 * dx_tol, what + " dx on " + v.name);
          if (v.gpu) continue;
          for (int threads : {2, 3}) {  // the same bits at any thread count
            CHECK(run_values("Conv2DBackpropFilter", filter_in, attrs(true, padding), backend, threads) == dw);
            CHECK(run_values("Conv2DBackpropInput", input_in, attrs(true, padding), backend, threads) == dx);
          }
          ++checked;
        }
      }
    }
  }
  CHECK(checked > 0);
  CHECK(gradrt::simd::workspace_fallbacks() == fallbacks);  // run_op runs through plans
}

TEST_CASE("sweep: which NCHW conv gradients take the per-image GEMM path") {
  gradrt::ConvSpec spec;
  spec.nchw = true;
  gradrt::ConvParams p;
  p.batch = 2, p.in_h = p.out_h = 16, p.in_w = p.out_w = 17, p.in_c = p.filter_in_c = 3, p.out_c = 7;
  p.filter_h = p.filter_w = 1;
  using gradrt::Kernel;
  auto remap = [&](Kernel k, const gradrt::ConvParams& q, const char* backend = "cpu") {
    return gradrt::nchw_1x1_remap(k, spec, q, false, backend);
  };
  REQUIRE(remap(Kernel::conv2d_backprop_filter, p));
  CHECK(remap(Kernel::conv2d_backprop_filter, p)->kernel == Kernel::conv2d_backprop_input);
  CHECK(remap(Kernel::conv2d_backprop_input, p)->kernel == Kernel::conv2d);
  CHECK(remap(Kernel::conv2d_backprop_input, p)->p.out_c == 16 * 17);  // pixels
  CHECK(!remap(Kernel::conv2d, p));                                // forward: not remapped
  CHECK(!remap(Kernel::conv2d_backprop_filter, p, "reference"));   // the oracle keeps its path
  CHECK(!remap(Kernel::conv2d_backprop_filter, p, "vulkan"));      // no submission per image
  gradrt::ConvParams q = p;
  q.stride_h = 2;
  CHECK(!remap(Kernel::conv2d_backprop_filter, q));
  q = p;
  q.out_h = 6, q.pad_top = 1;  // explicit padding
  CHECK(!remap(Kernel::conv2d_backprop_input, q));
  q = p;
  q.groups = 3, q.filter_in_c = 1, q.out_c = 6;
  CHECK(!remap(Kernel::conv2d_backprop_filter, q));
  q = p;
  q.filter_h = 3;
  CHECK(!remap(Kernel::conv2d_backprop_filter, q));
  q = p;
  q.in_w = q.out_w = 15;  // 240 pixels
  CHECK(!remap(Kernel::conv2d_backprop_filter, q));
  spec.nchw = false;
  CHECK(!remap(Kernel::conv2d_backprop_filter, p));
}

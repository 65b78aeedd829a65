// Gradient checks in float64 on every backend: the adjoint identity
// <conv(x, w), dy> = <x, dx> = <w, dw> for the linear ops, and central finite
// differences through the forward ops for batch norm, fractional pooling, the relu family, BiasAdd and pooling.
#include <algorithm>
#include <functional>
#include <numeric>

#include "cases.h"
#include "coverage.h"

// The ops this file checks, for the coverage test (checked by its last test case).
GRADRT_TEST_COVERS("gradcheck", GRADRT_TEST_CONV_FAMILY, GRADRT_TEST_ELEMENTWISE_FAMILY, GRADRT_TEST_POOL_FAMILY,
                   "FusedBatchNorm", "FusedBatchNormGrad", "FractionalAvgPool", "FractionalAvgPoolGrad");

using namespace gradrt;
using test::Host;

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace


TEST_CASE("gradcheck: adjoint identity for Conv2D and DepthwiseConv2dNative gradients") {
  std::mt19937 rng(99);
  int checked = 0;
  for (int i = 0; i < 120; ++i) {
    test::ConvConfig cfg = test::random_conv(rng, i % 2 == 1);
    std::vector<int64_t> y_shape;
    if (!test::forward_shape(cfg, &y_shape)) continue;
    Host x = test::random(DType::float64, cfg.input_shape(), rng), w = test::random(DType::float64, cfg.filter_shape(), rng);
    Host dy = test::random(DType::float64, y_shape, rng);
    for (const std::string& backend : test::backends()) {
      if (backend == "vulkan") continue;  // float32 only there; covered by the sweep
      CAPTURE(backend);
      CAPTURE(cfg.describe());
      test::Result y = test::run(cfg.forward_op(), {{"input", x}, {"filter", w}}, cfg.attrs(), backend);
      test::Result dx = test::run(cfg.input_grad_op(), {{"input_sizes", test::ints(cfg.input_shape())}, {"filter", w}, {"out_backprop", dy}}, cfg.attrs(), backend);
      test::Result dw = test::run(cfg.filter_grad_op(), {{"input", x}, {"filter_sizes", test::ints(cfg.filter_shape())}, {"out_backprop", dy}}, cfg.attrs(), backend);
      REQUIRE(y.status.ok());
      REQUIRE(dx.status.ok());
      REQUIRE(dw.status.ok());
      for (const char* op : {cfg.forward_op(), cfg.input_grad_op(), cfg.filter_grad_op()}) test::ran("gradcheck", op);
      const double a = dot(y.vals(), dy.values()), b = dot(x.values(), dx.vals()), c = dot(w.values(), dw.vals());
      const double scale = 1e-10 * (1 + std::fabs(a));
      CHECK(std::fabs(a - b) <= scale);
      CHECK(std::fabs(a - c) <= scale);
    }
    ++checked;
  }
  CHECK(checked > 60);
}

TEST_CASE("gradcheck: FusedBatchNormGrad against finite differences of FusedBatchNorm") {
  std::mt19937 rng(5);
  for (bool training : {true, false}) {
    for (const char* format : {"NHWC", "NCHW"}) {
      CAPTURE(training);
      CAPTURE(format);
      const int64_t C = 3;
      std::vector<int64_t> shape = std::string(format) == "NHWC" ? std::vector<int64_t>{2, 3, 2, C} : std::vector<int64_t>{2, C, 3, 2};
      Host x = test::random(DType::float64, shape, rng, -2, 2), dy = test::random(DType::float64, shape, rng);
      Host scale = test::random(DType::float64, {C}, rng, 0.5, 1.5), offset = test::random(DType::float64, {C}, rng);
      Host pop_mean = test::random(DType::float64, {C}, rng), pop_var = test::random(DType::float64, {C}, rng, 0.5, 1.5);
      const Attrs attrs = {{"epsilon", AttrValue(0.001)}, {"is_training", AttrValue(training)}, {"data_format", AttrValue(format)}};
      // loss(x, scale, offset) = <FusedBatchNorm(x, scale, offset).y, dy>
      auto loss = [&](const Host& xv, const Host& s, const Host& o) {
        test::Result r = test::run("FusedBatchNorm", {{"x", xv}, {"scale", s}, {"offset", o}, {"mean", pop_mean}, {"variance", pop_var}}, attrs);
        REQUIRE(r.status.ok());
        return dot(r.vals(0), dy.values());
      };
      test::Result fwd = test::run("FusedBatchNorm", {{"x", x}, {"scale", scale}, {"offset", offset}, {"mean", pop_mean}, {"variance", pop_var}}, attrs);
      REQUIRE(fwd.status.ok());
      // The gradient op gets the forward's reserve spaces (training) or the population stats (inference).
      Host rs1 = training ? test::make(DType::float64, {C}, fwd.vals(3)) : pop_mean;
      Host rs2 = training ? test::make(DType::float64, {C}, fwd.vals(4)) : pop_var;
      auto numeric = [&](Host* p, int which) {  // which: 0 x, 1 scale, 2 offset
        std::vector<double> v = p->values(), g(v.size());
        const double h = 1e-5;
        for (size_t i = 0; i < v.size(); ++i) {
          std::vector<double> plus = v, minus = v;
          plus[i] += h;
          minus[i] -= h;
          Host hp = test::make(DType::float64, p->shape, plus), hm = test::make(DType::float64, p->shape, minus);
          double lp = which == 0 ? loss(hp, scale, offset) : which == 1 ? loss(x, hp, offset) : loss(x, scale, hp);
          double lm = which == 0 ? loss(hm, scale, offset) : which == 1 ? loss(x, hm, offset) : loss(x, scale, hm);
          g[i] = (lp - lm) / (2 * h);
        }
        return g;
      };
      std::vector<double> ndx = numeric(&x, 0), nds = numeric(&scale, 1), ndo = numeric(&offset, 2);
      for (const std::string& backend : test::backends()) {
        if (backend == "vulkan") continue;
        CAPTURE(backend);
        test::Result g = test::run("FusedBatchNormGrad", {{"y_backprop", dy}, {"x", x}, {"scale", scale},
                                                          {"reserve_space_1", rs1}, {"reserve_space_2", rs2}}, attrs, backend);
        REQUIRE_MESSAGE(g.status.ok(), g.status.to_string());
        test::ran("gradcheck", "FusedBatchNorm");
        test::ran("gradcheck", "FusedBatchNormGrad");
        test::check_close(g.vals(0), ndx, 1e-5, 1e-7, "x_backprop");
        test::check_close(g.vals(1), nds, 1e-5, 1e-7, "scale_backprop");
        test::check_close(g.vals(2), ndo, 1e-5, 1e-7, "offset_backprop");
      }
    }
  }
}

TEST_CASE("gradcheck: FractionalAvgPoolGrad is the adjoint of FractionalAvgPool with the same sequences") {
  std::mt19937 rng(8);
  for (int i = 0; i < 24; ++i) {
    bool overlapping = i % 2 == 0;
    Host value = test::random(DType::float64, {2, test::uniform(rng, 4, 15), test::uniform(rng, 4, 15), 3}, rng);
    Attrs a = {{"pooling_ratio", AttrValue(std::vector<double>{1.0, 1.0 + 0.1 * (i % 10), 1.3, 1.0})},
               {"pseudo_random", AttrValue(i % 3 == 0)}, {"overlapping", AttrValue(overlapping)},
               {"deterministic", AttrValue(true)}, {"seed", AttrValue(int64_t{i + 3})}, {"seed2", AttrValue(int64_t{1})}};
    for (const std::string& backend : test::backends()) {
      if (backend == "vulkan") continue;
      test::Result y = test::run("FractionalAvgPool", {{"value", value}}, a, backend);
      REQUIRE_MESSAGE(y.status.ok(), y.status.to_string());
      Host dy = test::random(DType::float64, y.out(0).shape(), rng);
      std::vector<double> rows = y.vals(1), cols = y.vals(2);
      test::Result dx = test::run("FractionalAvgPoolGrad",
                                  {{"orig_input_tensor_shape", test::ints(value.shape, DType::int64)}, {"out_backprop", dy},
                                   {"row_pooling_sequence", test::ints(std::vector<int64_t>(rows.begin(), rows.end()), DType::int64)},
                                   {"col_pooling_sequence", test::ints(std::vector<int64_t>(cols.begin(), cols.end()), DType::int64)}},
                                  {{"overlapping", AttrValue(overlapping)}}, backend);
      REQUIRE_MESSAGE(dx.status.ok(), dx.status.to_string());
      test::ran("gradcheck", "FractionalAvgPool");
      test::ran("gradcheck", "FractionalAvgPoolGrad");
      const double lhs = dot(y.vals(0), dy.values()), rhs = dot(value.values(), dx.vals());
      CHECK(std::fabs(lhs - rhs) <= 1e-10 * (1 + std::fabs(lhs)));
    }
  }
}

namespace {

// Central differences of loss(v) = <f(v), dy> for every element of v (float64, reference backend).
std::vector<double> numeric_gradient(const Host& v, const Host& dy, const std::function<test::Result(const Host&)>& f) {
  std::vector<double> base = v.values(), g(base.size());
  const double h = 1e-6;
  for (size_t i = 0; i < base.size(); ++i) {
    std::vector<double> plus = base, minus = base;
    plus[i] += h;
    minus[i] -= h;
    test::Result rp = f(test::make(DType::float64, v.shape, plus)), rm = f(test::make(DType::float64, v.shape, minus));
    REQUIRE(rp.status.ok());
    REQUIRE(rm.status.ok());
    g[i] = (dot(rp.vals(), dy.values()) - dot(rm.vals(), dy.values())) / (2 * h);
  }
  return g;
}

}  // namespace

TEST_CASE("gradcheck: ReluGrad and Relu6Grad against finite differences of Relu and Relu6") {
  std::mt19937 rng(31);
  for (bool six : {false, true}) {
    const std::string fwd = six ? "Relu6" : "Relu", grad = six ? "Relu6Grad" : "ReluGrad";
    // Features away from the kinks 0 and 6 (the derivative jumps there), on both sides of each.
    std::vector<double> x(40);
    for (double& e : x) {
      do e = std::uniform_real_distribution<double>(-4, 10)(rng);
      while (std::fabs(e) < 0.01 || std::fabs(e - 6) < 0.01);
    }
    const Host features = test::make(DType::float64, {5, 8}, x), dy = test::random(DType::float64, {5, 8}, rng);
    const std::vector<double> want = numeric_gradient(features, dy, [&](const Host& v) { return test::run(fwd, {{"features", v}}, {}); });
    const test::Result y = test::run(fwd, {{"features", features}}, {});
    REQUIRE(y.status.ok());
    const Host activations = test::make(DType::float64, {5, 8}, y.vals());
    for (const std::string& backend : test::backends()) {
      if (backend == "vulkan") continue;  // float64 may be missing there; covered by the sweep
      CAPTURE(backend);
      CAPTURE(grad);
      // features may be the forward's input or its output: the same gradient away from the kinks.
      for (const Host* f : {&features, &activations}) {
        test::Result g = test::run(grad, {{"gradients", dy}, {"features", *f}}, {}, backend);
        REQUIRE_MESSAGE(g.status.ok(), g.status.to_string());
        test::ran("gradcheck", fwd);
        test::ran("gradcheck", grad);
        test::check_close(g.vals(), want, 1e-6, 1e-6, grad);
      }
    }
  }
}

TEST_CASE("gradcheck: BiasAddGrad against finite differences of BiasAdd") {
  std::mt19937 rng(37);
  for (const char* format : {"NHWC", "NCHW"})
    for (const std::vector<int64_t>& shape : {std::vector<int64_t>{3, 5}, {2, 3, 4}, {2, 3, 2, 2}}) {
      CAPTURE(format);
      const Attrs attrs = {{"data_format", AttrValue(format)}};
      const int64_t C = std::string(format) == "NHWC" || shape.size() == 2 ? shape.back() : shape[1];
      const Host x = test::random(DType::float64, shape, rng), dy = test::random(DType::float64, shape, rng);
      const Host bias = test::random(DType::float64, {C}, rng);
      // d<BiasAdd(x, b), dy>/db, and d/dx (the identity: dy itself).
      const std::vector<double> db = numeric_gradient(bias, dy, [&](const Host& b) {
        return test::run("BiasAdd", {{"value", x}, {"bias", b}}, attrs);
      });
      const std::vector<double> dx = numeric_gradient(x, dy, [&](const Host& v) {
        return test::run("BiasAdd", {{"value", v}, {"bias", bias}}, attrs);
      });
      test::check_close(dx, dy.values(), 1e-6, 1e-6, "d/dvalue");
      for (const std::string& backend : test::backends()) {
        if (backend == "vulkan") continue;
        CAPTURE(backend);
        test::Result g = test::run("BiasAddGrad", {{"out_backprop", dy}}, attrs, backend);
        REQUIRE_MESSAGE(g.status.ok(), g.status.to_string());
        test::ran("gradcheck", "BiasAdd");
        test::ran("gradcheck", "BiasAddGrad");
        test::check_close(g.vals(), db, 1e-6, 1e-6, "BiasAddGrad");
      }
    }
}

// Pool attributes for the gradient checks: SAME or VALID (windows larger than the stride and,
// with SAME, than the input), NHWC or NCHW.
Attrs pool_attrs(std::mt19937& rng, int i) {
  const bool nchw = i % 4 == 3;
  const int64_t kh = test::uniform(rng, 1, 4), kw = test::uniform(rng, 1, 4), sh = test::uniform(rng, 1, 3),
                sw = test::uniform(rng, 1, 3);
  auto order = [&](int64_t h, int64_t w) { return nchw ? std::vector<int64_t>{1, 1, h, w} : std::vector<int64_t>{1, h, w, 1}; };
  return {{"ksize", AttrValue(order(kh, kw))}, {"strides", AttrValue(order(sh, sw))},
          {"padding", AttrValue(i % 2 ? "SAME" : "VALID")}, {"data_format", AttrValue(nchw ? "NCHW" : "NHWC")}};
}

TEST_CASE("gradcheck: AvgPoolGrad is the adjoint of AvgPool") {
  std::mt19937 rng(12);
  for (int i = 0; i < 24; ++i) {
    const Attrs a = pool_attrs(rng, i);
    Host value = test::random(DType::float64, {2, test::uniform(rng, 1, 7), test::uniform(rng, 1, 7), 3}, rng);
    for (const std::string& backend : test::backends()) {
      if (backend == "vulkan") continue;  // float32 only there; covered by the sweep
      CAPTURE(backend);
      CAPTURE(i);
      test::Result y = test::run("AvgPool", {{"value", value}}, a, backend);
      if (!y.status.ok()) break;  // VALID with a window larger than the input
      Host dy = test::random(DType::float64, y.out().shape(), rng);
      test::Result dx = test::run("AvgPoolGrad", {{"orig_input_shape", test::ints(value.shape)}, {"grad", dy}}, a, backend);
      REQUIRE_MESSAGE(dx.status.ok(), dx.status.to_string());
      test::ran("gradcheck", "AvgPool");
      test::ran("gradcheck", "AvgPoolGrad");
      const double lhs = dot(y.vals(), dy.values()), rhs = dot(value.values(), dx.vals());
      CHECK(std::fabs(lhs - rhs) <= 1e-10 * (1 + std::fabs(lhs)));
    }
  }
}

TEST_CASE("gradcheck: MaxPoolGrad against finite differences of MaxPool (distinct values: a stable argmax)") {
  std::mt19937 rng(13);
  for (int i = 0; i < 16; ++i) {
    const Attrs a = pool_attrs(rng, i);
    const std::vector<int64_t> shape = {1, test::uniform(rng, 1, 6), test::uniform(rng, 1, 6), 2};
    // A permutation of 0, 0.1, 0.2, ...: every gap 0.1, far above the step h.
    std::vector<double> v(static_cast<size_t>(shape[1] * shape[2] * shape[3]));
    std::iota(v.begin(), v.end(), 0.0);
    std::shuffle(v.begin(), v.end(), rng);
    for (double& e : v) e *= 0.1;
    Host x = test::make(DType::float64, shape, v);
    for (const std::string& backend : test::backends()) {
      if (backend == "vulkan") continue;
      CAPTURE(backend);
      CAPTURE(i);
      test::Result y = test::run("MaxPool", {{"input", x}}, a, backend);
      if (!y.status.ok()) break;
      Host dy = test::random(DType::float64, y.out().shape(), rng);
      Host yh = test::make(DType::float64, y.out().shape(), y.vals());
      test::Result g = test::run("MaxPoolGrad", {{"orig_input", x}, {"orig_output", yh}, {"grad", dy}}, a, backend);
      REQUIRE_MESSAGE(g.status.ok(), g.status.to_string());
      test::ran("gradcheck", "MaxPool");
      test::ran("gradcheck", "MaxPoolGrad");
      // d<MaxPool(x), dy>/dx_j by central differences.
      const double h = 1e-3;
      std::vector<double> numeric(v.size());
      for (size_t j = 0; j < v.size(); ++j) {
        std::vector<double> vp = v, vm = v;
        vp[j] += h;
        vm[j] -= h;
        test::Result yp = test::run("MaxPool", {{"input", test::make(DType::float64, shape, vp)}}, a, backend);
        test::Result ym = test::run("MaxPool", {{"input", test::make(DType::float64, shape, vm)}}, a, backend);
        numeric[j] = (dot(yp.vals(), dy.values()) - dot(ym.vals(), dy.values())) / (2 * h);
      }
      test::check_close(g.vals(), numeric, 1e-8, 1e-9, "MaxPoolGrad");
    }
  }
}

TEST_CASE("gradcheck: every op declared for the coverage test ran") { test::check_declared_ran("gradcheck"); }

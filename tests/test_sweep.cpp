// Every backend against the reference on random configurations (cases.h), every dtype;
// NCHW against NHWC on the reference itself (an independent check of the layout code).
#include "cases.h"
#include "checked.h"
#include "coverage.h"

// The ops this file checks, for the coverage test (checked by its last test case).
GRADRT_TEST_COVERS("sweep", GRADRT_TEST_CONV_FAMILY, GRADRT_TEST_ELEMENTWISE_FAMILY, GRADRT_TEST_POOL_FAMILY,
                   "FusedBatchNormV3", "FusedBatchNormGradV3", "FractionalAvgPool", "FractionalAvgPoolGrad");

using namespace gradrt;
using test::ConvConfig;
using test::Host;

namespace {

// Relative error as the issue states it: max |got - want| / max |want|.
double max_rel_error(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num = std::max(num, std::fabs(got[i] - want[i]));
    den = std::max(den, std::fabs(want[i]));
  }
  return den == 0 ? num : num / den;
}

double allowed(DType dtype) {
  switch (dtype) {
    case DType::float64: return 1e-9;
    case DType::float32: return 2e-4;
    default: return 2e-2;  // float16, bfloat16
  }
}

// Runs op on every backend and compares each output with the reference backend's.
void agree(const std::string& op, const test::Named& in, const Attrs& attrs, DType dtype, const std::string& what) {
  test::ran("sweep", op);
  test::Result want = test::run(op, in, attrs, "reference");
  REQUIRE_MESSAGE(want.status.ok(), what << ": " << want.status.to_string());
  for (const std::string& backend : test::backends()) {
    if (backend == "reference") continue;
    test::Result got = test::run(op, in, attrs, backend);
    if (test::device_lacks_dtype(got.status)) continue;
    REQUIRE_MESSAGE(got.status.ok(), what << " on " << backend << ": " << got.status.to_string());
    CHECK_EQ(got.backend, backend);
    REQUIRE(got.outputs.size() == want.outputs.size());
    for (size_t i = 0; i < want.outputs.size(); ++i) {
      CHECK(got.out(i).shape() == want.out(i).shape());
      CHECK(got.out(i).dtype() == want.out(i).dtype());
      if (want.out(i).num_elements() == 0 || got.out(i).num_elements() != want.out(i).num_elements()) continue;
      double err = max_rel_error(got.vals(i), want.vals(i));
      CHECK_MESSAGE(err <= allowed(dtype), what << " on " << backend << ", output " << want.outputs[i].first
                                                << ": relative error " << err);
    }
  }
}

const DType kDtypes[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16};

}  // namespace


TEST_CASE("sweep: conv and depthwise ops, every backend against the reference") {
  std::mt19937 rng(20261122);
  int run_cases = 0;
  for (int i = 0; i < 240; ++i) {
    ConvConfig cfg = test::random_conv(rng, i % 2 == 1);
    std::vector<int64_t> y_shape;
    if (!test::forward_shape(cfg, &y_shape)) continue;
    ++run_cases;
    DType dtype = kDtypes[i % 4];
    Host x = test::random(dtype, cfg.input_shape(), rng), w = test::random(dtype, cfg.filter_shape(), rng);
    Host dy = test::random(dtype, y_shape, rng);
    std::string what = cfg.describe() + " " + dtype_name(dtype);
    agree(cfg.forward_op(), {{"input", x}, {"filter", w}}, cfg.attrs(), dtype, what);
    agree(cfg.input_grad_op(), {{"input_sizes", test::ints(cfg.input_shape())}, {"filter", w}, {"out_backprop", dy}},
          cfg.attrs(), dtype, what);
    agree(cfg.filter_grad_op(), {{"input", x}, {"filter_sizes", test::ints(cfg.filter_shape())}, {"out_backprop", dy}},
          cfg.attrs(), dtype, what);
  }
  CHECK(run_cases > 120);
}

TEST_CASE("sweep: bfloat16 through T=bfloat16 on float32 tensors equals bfloat16 tensors") {
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    ConvConfig cfg = test::random_conv(rng, i % 2 == 1);
    std::vector<int64_t> y_shape;
    if (!test::forward_shape(cfg, &y_shape)) continue;
    Host w = test::random(DType::bfloat16, cfg.filter_shape(), rng), dy = test::random(DType::bfloat16, y_shape, rng);
    Host w32 = test::make(DType::float32, w.shape, w.values()), dy32 = test::make(DType::float32, dy.shape, dy.values());
    Attrs with_t = cfg.attrs();
    with_t["T"] = AttrValue("bfloat16");
    for (const std::string& backend : test::backends()) {
      auto sizes = test::ints(cfg.input_shape());
      test::Result a = test::run(cfg.input_grad_op(), {{"input_sizes", sizes}, {"filter", w}, {"out_backprop", dy}}, cfg.attrs(), backend);
      test::Result b = test::run(cfg.input_grad_op(), {{"input_sizes", sizes}, {"filter", w32}, {"out_backprop", dy32}}, with_t, backend);
      REQUIRE(a.status.ok());
      REQUIRE(b.status.ok());
      CHECK(b.out().dtype() == DType::float32);
      CHECK(a.vals() == b.vals());  // same rounding of the same float32 result
    }
  }
}

TEST_CASE("sweep: NCHW equals NHWC transposed (reference)") {
  std::mt19937 rng(11);
  for (int i = 0; i < 60; ++i) {
    ConvConfig cfg = test::random_conv(rng, i % 2 == 1);
    cfg.nchw = false;
    std::vector<int64_t> y_shape;
    if (!test::forward_shape(cfg, &y_shape)) continue;
    ConvConfig cf = cfg;
    cf.nchw = true;
    Host x = test::random(DType::float64, cfg.input_shape(), rng), w = test::random(DType::float64, cfg.filter_shape(), rng);
    Host dy = test::random(DType::float64, y_shape, rng);
    Host x_t = test::transpose_nhwc_to_nchw(x), dy_t = test::transpose_nhwc_to_nchw(dy);
    test::Result a = test::run(cfg.input_grad_op(), {{"input_sizes", test::ints(cfg.input_shape())}, {"filter", w}, {"out_backprop", dy}}, cfg.attrs());
    test::Result b = test::run(cf.input_grad_op(), {{"input_sizes", test::ints(cf.input_shape())}, {"filter", w}, {"out_backprop", dy_t}}, cf.attrs());
    REQUIRE(a.status.ok());
    REQUIRE_MESSAGE(b.status.ok(), b.status.to_string());
    test::check_close(test::nchw_to_nhwc(b.vals(), b.out().shape()), a.vals(), 1e-12, 1e-12, cfg.describe());
    a = test::run(cfg.filter_grad_op(), {{"input", x}, {"filter_sizes", test::ints(cfg.filter_shape())}, {"out_backprop", dy}}, cfg.attrs());
    b = test::run(cf.filter_grad_op(), {{"input", x_t}, {"filter_sizes", test::ints(cf.filter_shape())}, {"out_backprop", dy_t}}, cf.attrs());
    REQUIRE(a.status.ok());
    REQUIRE(b.status.ok());
    test::check_close(b.vals(), a.vals(), 1e-12, 1e-12, cfg.describe());
  }
}

TEST_CASE("sweep: FusedBatchNorm and FusedBatchNormGrad, every backend against the reference") {
  std::mt19937 rng(13);
  for (int i = 0; i < 48; ++i) {
    DType dtype = kDtypes[i % 4];
    bool training = i % 3 != 0, nchw = i % 2 == 0, five_d = i % 5 == 0;
    const char* format = five_d ? (nchw ? "NCDHW" : "NDHWC") : (nchw ? "NCHW" : "NHWC");
    int64_t C = test::uniform(rng, 1, 37);
    std::vector<int64_t> shape = {test::uniform(rng, 1, 3), test::uniform(rng, 1, 7), test::uniform(rng, 1, 9)};
    if (five_d) shape.push_back(test::uniform(rng, 1, 3));
    shape.insert(nchw ? shape.begin() + 1 : shape.end(), C);
    DType u = dtype == DType::float64 ? DType::float64 : DType::float32;
    Host x = test::random(dtype, shape, rng, -2, 3), dy = test::random(dtype, shape, rng);
    Host scale = test::random(u, {C}, rng, 0.5, 2), offset = test::random(u, {C}, rng);
    Host mean = test::random(u, {C}, rng), var = test::random(u, {C}, rng, 0.1, 2);
    Attrs a = {{"epsilon", AttrValue(0.001)}, {"is_training", AttrValue(training)}, {"data_format", AttrValue(format)},
               {"exponential_avg_factor", AttrValue(i % 4 == 1 ? 0.6 : 1.0)}};
    std::string what = std::string(format) + " " + dtype_name(dtype) + (training ? " training" : " inference");
    agree("FusedBatchNormV3", {{"x", x}, {"scale", scale}, {"offset", offset}, {"mean", mean}, {"variance", var}}, a, dtype, what);
    a.erase("exponential_avg_factor");
    agree("FusedBatchNormGradV3", {{"y_backprop", dy}, {"x", x}, {"scale", scale}, {"reserve_space_1", mean},
                                   {"reserve_space_2", var}, {"reserve_space_3", test::make(u, {0}, {})}},
          a, dtype, what);
  }
}

TEST_CASE("sweep: FractionalAvgPool and its gradient, every backend against the reference") {
  std::mt19937 rng(17);
  for (int i = 0; i < 40; ++i) {
    DType dtype = i % 2 ? DType::float32 : DType::float64;
    int64_t H = test::uniform(rng, 3, 13), W = test::uniform(rng, 3, 13);  // >= the largest ratio
    std::uniform_real_distribution<double> ratio(1.0, 2.6);
    Attrs a = {{"pooling_ratio", AttrValue(std::vector<double>{1.0, ratio(rng), ratio(rng), 1.0})},
               {"pseudo_random", AttrValue(i % 3 == 0)}, {"overlapping", AttrValue(i % 4 < 2)},
               {"deterministic", AttrValue(true)}, {"seed", AttrValue(int64_t{i + 1})}, {"seed2", AttrValue(int64_t{7})}};
    Host value = test::random(dtype, {test::uniform(rng, 1, 2), H, W, test::uniform(rng, 1, 19)}, rng);
    agree("FractionalAvgPool", {{"value", value}}, a, dtype, "pool");
    test::Result fwd = test::run("FractionalAvgPool", {{"value", value}}, a);
    REQUIRE(fwd.status.ok());
    Host dy = test::random(dtype, fwd.out(0).shape(), rng);
    std::vector<double> rows = fwd.vals(1), cols = fwd.vals(2);
    agree("FractionalAvgPoolGrad",
          {{"orig_input_tensor_shape", test::ints(value.shape, DType::int64)}, {"out_backprop", dy},
           {"row_pooling_sequence", test::ints(std::vector<int64_t>(rows.begin(), rows.end()), DType::int64)},
           {"col_pooling_sequence", test::ints(std::vector<int64_t>(cols.begin(), cols.end()), DType::int64)}},
          {{"overlapping", a["overlapping"]}}, dtype, "pool grad");
  }
}

TEST_CASE("sweep: Relu, Relu6 and their gradients, every backend against the reference") {
  std::mt19937 rng(19);
  for (int i = 0; i < 24; ++i) {
    const DType dtype = kDtypes[i % 4];
    std::vector<int64_t> shape;  // rank 0-4, an empty dimension now and then
    for (int64_t r = test::uniform(rng, 0, 4); r > 0; --r) shape.push_back(test::uniform(rng, i % 7 == 3 ? 0 : 1, 9));
    Host x = test::random(dtype, shape, rng, -8, 8), dy = test::random(dtype, shape, rng);
    const std::string what = shape_string(shape) + " " + dtype_name(dtype);
    for (const char* op : {"Relu", "Relu6"}) agree(op, {{"features", x}}, {}, dtype, what);
    for (const char* op : {"ReluGrad", "Relu6Grad"}) agree(op, {{"gradients", dy}, {"features", x}}, {}, dtype, what);
  }
}

TEST_CASE("sweep: BiasAdd and BiasAddGrad, every backend against the reference; NCHW equals NHWC transposed") {
  std::mt19937 rng(29);
  for (int i = 0; i < 32; ++i) {
    const DType dtype = kDtypes[i % 4];
    const bool nchw = i % 2 == 1;
    const int64_t C = test::uniform(rng, 1, 37);
    std::vector<int64_t> rest;  // the dimensions beside the channels': batch first
    for (int64_t r = test::uniform(rng, 1, 4); r > 0; --r) rest.push_back(test::uniform(rng, 1, 7));
    std::vector<int64_t> shape = rest;
    shape.insert(nchw ? shape.begin() + 1 : shape.end(), C);
    Host x = test::random(dtype, shape, rng, -2, 2), dy = test::random(dtype, shape, rng), bias = test::random(dtype, {C}, rng);
    const Attrs a = {{"data_format", AttrValue(nchw ? "NCHW" : "NHWC")}};
    const std::string what = shape_string(shape) + (nchw ? " NCHW " : " NHWC ") + dtype_name(dtype);
    agree("BiasAdd", {{"value", x}, {"bias", bias}}, a, dtype, what);
    agree("BiasAddGrad", {{"out_backprop", dy}}, a, dtype, what);
    if (!nchw || rest.size() < 2) continue;
    // The same data channels last, on the reference: equal sums (a different order: 1e-12).
    std::vector<int64_t> nhwc = rest;
    nhwc.push_back(C);
    const int64_t outer = rest[0], inner = dy.size() / (outer * C);
    const std::vector<double> v = dy.values();
    std::vector<double> t(v.size());
    for (int64_t n = 0; n < outer; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < inner; ++k) t[(n * inner + k) * C + c] = v[(n * C + c) * inner + k];
    test::Result cf = test::run("BiasAddGrad", {{"out_backprop", dy}}, a);
    test::Result cl = test::run("BiasAddGrad", {{"out_backprop", test::make(dtype, nhwc, t)}}, {});
    REQUIRE(cf.status.ok());
    REQUIRE(cl.status.ok());
    test::check_close(cf.vals(), cl.vals(), dtype == DType::float64 ? 1e-12 : 1e-2, 1e-6, what);
  }
}

TEST_CASE("sweep: MaxPool, AvgPool and their gradients, every backend against the reference, NCHW = NHWC") {
  std::mt19937 rng(20);
  int run_cases = 0;
  for (int i = 0; i < 48; ++i) {
    const DType dtype = kDtypes[i % 4];
    const bool nchw = i % 3 == 0, explicit_pads = i % 5 == 4;
    const int64_t N = test::uniform(rng, 1, 2), H = test::uniform(rng, 1, 9), W = test::uniform(rng, 1, 9),
                  C = test::uniform(rng, 1, 21);
    const int64_t kh = test::uniform(rng, 1, 4), kw = test::uniform(rng, 1, 4);
    const int64_t sh = test::uniform(rng, 1, 3), sw = test::uniform(rng, 1, 3);
    const int64_t t = test::uniform(rng, 0, kh - 1), b = test::uniform(rng, 0, kh - 1);
    const int64_t l = test::uniform(rng, 0, kw - 1), r = test::uniform(rng, 0, kw - 1);
    auto order = [](bool cf, int64_t n, int64_t h, int64_t w, int64_t c) {
      return cf ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c};
    };
    // The attributes in either layout; EXPLICIT (pads < window) only for the max pools.
    auto attrs = [&](bool cf, bool max) {
      Attrs a = {{"ksize", AttrValue(order(cf, 1, kh, kw, 1))}, {"strides", AttrValue(order(cf, 1, sh, sw, 1))},
                 {"padding", AttrValue(i % 2 ? "SAME" : "VALID")}, {"data_format", AttrValue(cf ? "NCHW" : "NHWC")}};
      if (max && explicit_pads) {
        a["padding"] = AttrValue("EXPLICIT");
        a["explicit_paddings"] = AttrValue(cf ? std::vector<int64_t>{0, 0, 0, 0, t, b, l, r}
                                              : std::vector<int64_t>{0, 0, t, b, l, r, 0, 0});
      }
      return a;
    };
    const std::string what = std::string(nchw ? "NCHW " : "NHWC ") + dtype_name(dtype) + " case " + std::to_string(i);
    // Half the cases draw from {0, 1, 2}: ties decide MaxPoolGrad's argmax.
    std::vector<double> ties(static_cast<size_t>(N * H * W * C));
    for (double& e : ties) e = double(test::uniform(rng, 0, 2));
    Host x = i % 2 ? test::random(dtype, order(nchw, N, H, W, C), rng) : test::make(dtype, order(nchw, N, H, W, C), ties);
    for (const bool max : {true, false}) {
      const char* fwd = max ? "MaxPool" : "AvgPool";
      const char* in_name = max ? "input" : "value";
      const Attrs a = attrs(nchw, max);
      test::Result y = test::run(fwd, {{in_name, x}}, a);
      if (!y.status.ok()) continue;  // an output size < 0 (VALID, window > input)
      ++run_cases;
      Host dy = test::random(dtype, y.out().shape(), rng);
      Host yh = test::make(dtype, y.out().shape(), y.vals());
      auto grad = [&](const Attrs& at, const Host& xx, const Host& yy, const Host& gg, const std::string& backend) {
        return max ? test::run("MaxPoolGrad", {{"orig_input", xx}, {"orig_output", yy}, {"grad", gg}}, at, backend)
                   : test::run("AvgPoolGrad", {{"orig_input_shape", test::ints(xx.shape)}, {"grad", gg}}, at, backend);
      };
      agree(fwd, {{in_name, x}}, a, dtype, what);
      if (max) agree("MaxPoolGrad", {{"orig_input", x}, {"orig_output", yh}, {"grad", dy}}, a, dtype, what);
      else agree("AvgPoolGrad", {{"orig_input_shape", test::ints(x.shape)}, {"grad", dy}}, a, dtype, what);
      if (!nchw || dtype != DType::float64) continue;
      // The same op in NHWC on the reference: the transposes around the kernel are right.
      auto nhwc = [](const Host& h) {
        return test::make(h.dtype, {h.shape[0], h.shape[2], h.shape[3], h.shape[1]}, test::nchw_to_nhwc(h.values(), h.shape));
      };
      const Attrs a2 = attrs(false, max);
      test::Result y2 = test::run(fwd, {{in_name, nhwc(x)}}, a2);
      REQUIRE_MESSAGE(y2.status.ok(), what << ": " << y2.status.to_string());
      test::check_close(test::nchw_to_nhwc(y.vals(), y.out().shape()), y2.vals(), 1e-12, 1e-12, what);
      test::Result g = grad(a, x, yh, dy, "reference"), g2 = grad(a2, nhwc(x), nhwc(yh), nhwc(dy), "reference");
      REQUIRE(g.status.ok());
      REQUIRE_MESSAGE(g2.status.ok(), what << ": " << g2.status.to_string());
      test::check_close(test::nchw_to_nhwc(g.vals(), g.out().shape()), g2.vals(), 1e-12, 1e-12, what);
    }
  }
  CHECK(run_cases > 60);
}

TEST_CASE("sweep: every op declared for the coverage test ran") { test::check_declared_ran("sweep"); }

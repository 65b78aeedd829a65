// TensorFlow's own test numbers and ops.md's derived worked examples, on every backend.
// Tensors are filled 1, 2, 3, ... as TF's _CreateNumpyTensor does.
#include "util.h"

#include "philox.h"

using namespace gradrt;
using test::Host;
using test::iota;
using test::ints;

namespace {

Attrs conv(std::vector<int64_t> strides, AttrValue padding, std::vector<int64_t> dilations = {1, 1, 1, 1}) {
  return {{"strides", AttrValue(strides)}, {"padding", padding}, {"dilations", AttrValue(dilations)}};
}

// Runs op on every backend and checks output 0 against want.
void expect(const std::string& op, const test::Named& in, const Attrs& attrs, const std::vector<double>& want,
            std::vector<int64_t> shape = {}, double rtol = 1e-6) {
  for (const std::string& backend : test::backends()) {
    CAPTURE(backend);
    test::Result r = test::run(op, in, attrs, backend);
    if (test::device_lacks_dtype(r.status)) continue;
    REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
    if (!shape.empty()) CHECK(r.out().shape() == shape);
    test::check_close(r.vals(), want, rtol, 1e-5, op + " on " + backend);
  }
}

struct ConvCase {
  std::vector<int64_t> sizes, filter, dy;
  std::vector<int64_t> strides;
  AttrValue padding;
  std::vector<double> dx;
};

AttrValue list_padding(int64_t t, int64_t b, int64_t l, int64_t r) {
  AttrValue v;
  v.kind = AttrValue::Kind::List;
  for (auto [x, y] : {std::pair{int64_t{0}, int64_t{0}}, {t, b}, {l, r}, {int64_t{0}, int64_t{0}}})
    v.list.push_back(AttrValue(std::vector<int64_t>{x, y}));
  return v;
}

}  // namespace

TEST_CASE("golden: Conv2DBackpropInput, TF conv_ops_test.py and ops.md 2.5") {
  const std::vector<ConvCase> cases = {
      {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 1}, "VALID", {1, 4, 4, 3, 10, 8}},
      {{1, 2, 3, 3}, {2, 2, 3, 3}, {1, 1, 2, 3}, {1, 1, 1, 1}, "VALID",
       {14, 32, 50, 100, 163, 226, 167, 212, 257, 122, 140, 158, 478, 541, 604, 437, 482, 527}},
      {{1, 3, 6, 1}, {2, 2, 1, 1}, {1, 2, 3, 1}, {1, 1, 2, 1}, "VALID",
       {1, 2, 2, 4, 3, 6, 7, 12, 11, 18, 15, 24, 12, 16, 15, 20, 18, 24}},
      {{1, 4, 4, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME", {1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}},
      {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 1, 1, 2}, {1, 1, 1, 1}, "VALID", {5, 11, 17, 23}},
      {{1, 2, 3, 1}, {2, 2, 1, 2}, {1, 3, 4, 2}, {1, 1, 1, 1}, list_padding(1, 1, 1, 1), {164, 236, 308, 452, 524, 596}},
      {{1, 5, 3, 1}, {3, 2, 1, 1}, {1, 4, 8, 1}, {1, 3, 1, 1}, list_padding(1, 8, 4, 2),
       {31, 38, 45, 49, 60, 71, 37, 40, 43, 87, 94, 101, 137, 148, 159}},
      {{1, 3, 3, 1}, {2, 2, 1, 1}, {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME", {1, 4, 7, 7, 23, 33, 19, 53, 63}},
      {{1, 5, 5, 1}, {3, 3, 1, 1}, {1, 3, 3, 1}, {1, 2, 2, 1}, "SAME",
       {5, 14, 10, 24, 15, 16, 40, 26, 60, 36, 20, 44, 25, 54, 30, 46, 100, 56, 120, 66, 35, 74, 40, 84, 45}},
  };
  for (const ConvCase& c : cases) {
    for (DType dtype : {DType::float32, DType::float64, DType::float16}) {
      CAPTURE(dtype_name(dtype));
      double rtol = dtype == DType::float16 ? 2e-3 : 1e-6;
      expect("Conv2DBackpropInput", {{"input_sizes", ints(c.sizes)}, {"filter", iota(dtype, c.filter)},
                                     {"out_backprop", iota(dtype, c.dy)}},
             conv(c.strides, c.padding), c.dx, c.sizes, rtol);
      // V2 reads only the shape of `input`.
      expect("Conv2DBackpropInputV2", {{"input", Host{dtype, c.sizes, std::vector<unsigned char>(
                                                         test::make(dtype, c.sizes, std::vector<double>(c.dx.size(), 7)).bytes)}},
                                       {"filter", iota(dtype, c.filter)}, {"out_backprop", iota(dtype, c.dy)}},
             conv(c.strides, c.padding), c.dx, c.sizes, rtol);
    }
  }
  // 2-value input_sizes: N from out_backprop, C from the filter.
  expect("Conv2DBackpropInput", {{"input_sizes", ints({2, 2})}, {"filter", iota(DType::float32, {2, 2, 1, 2})},
                                 {"out_backprop", iota(DType::float32, {1, 1, 1, 2})}},
         conv({1, 1, 1, 1}, "VALID"), {5, 11, 17, 23}, {1, 2, 2, 1});
  // Dilation [2, 1] (GPU semantics), VALID.
  expect("Conv2DBackpropInput", {{"input_sizes", ints({1, 3, 6, 1})}, {"filter", iota(DType::float32, {2, 2, 1, 1})},
                                 {"out_backprop", iota(DType::float32, {1, 1, 5, 1})}},
         conv({1, 1, 1, 1}, "VALID", {1, 2, 1, 1}), {1, 4, 7, 10, 13, 10, 0, 0, 0, 0, 0, 0, 3, 10, 17, 24, 31, 20});
  // Empty batch: empty result; empty out_backprop width: zeros (CVE-2022-35999's regression test).
  expect("Conv2DBackpropInput", {{"input_sizes", ints({0, 2, 3, 1})}, {"filter", iota(DType::float32, {2, 2, 1, 1})},
                                 {"out_backprop", iota(DType::float32, {0, 1, 2, 1})}},
         conv({1, 1, 1, 1}, "VALID"), {}, {0, 2, 3, 1});
  expect("Conv2DBackpropInput", {{"input_sizes", ints({3, 1, 1, 2})}, {"filter", iota(DType::float32, {1, 3, 2, 3})},
                                 {"out_backprop", iota(DType::float32, {3, 1, 0, 3})}},
         conv({1, 1, 2, 1}, "VALID"), std::vector<double>(6, 0.0), {3, 1, 1, 2});
}

TEST_CASE("golden: Conv2DBackpropFilter, TF conv_ops_test.py and ops.md 3.5") {
  const std::vector<ConvCase> cases = {  // here `sizes` is the input shape and dx the filter gradient
      {{1, 2, 3, 1}, {2, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 1}, "VALID", {5, 8, 14, 17}},
      {{1, 2, 3, 3}, {2, 2, 3, 3}, {1, 1, 2, 3}, {1, 1, 1, 1}, "VALID",
       {17, 22, 27, 22, 29, 36, 27, 36, 45, 32, 43, 54, 37, 50, 63, 42, 57, 72,
        62, 85, 108, 67, 92, 117, 72, 99, 126, 77, 106, 135, 82, 113, 144, 87, 120, 153}},
      {{1, 3, 6, 1}, {2, 2, 1, 1}, {1, 2, 3, 1}, {1, 1, 2, 1}, "VALID", {161, 182, 287, 308}},
      {{1, 4, 4, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME", {78}},
      {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 1, 1, 2}, {1, 1, 1, 1}, "VALID", {1, 2, 2, 4, 3, 6, 4, 8}},
      {{1, 2, 3, 1}, {2, 2, 1, 2}, {1, 3, 4, 2}, {1, 1, 1, 1}, list_padding(1, 1, 1, 1),
       {401, 422, 359, 380, 233, 254, 191, 212}},
      {{1, 3, 3, 1}, {2, 2, 1, 1}, {1, 3, 3, 1}, {1, 1, 1, 1}, "SAME", {285, 186, 154, 94}},
  };
  for (const ConvCase& c : cases) {
    for (DType dtype : {DType::float32, DType::float64}) {
      expect("Conv2DBackpropFilter", {{"input", iota(dtype, c.sizes)}, {"filter_sizes", ints(c.filter)},
                                      {"out_backprop", iota(dtype, c.dy)}},
             conv(c.strides, c.padding), c.dx, c.filter);
      expect("Conv2DBackpropFilterV2", {{"input", iota(dtype, c.sizes)}, {"filter", iota(dtype, c.filter, -3)},
                                        {"out_backprop", iota(dtype, c.dy)}},
             conv(c.strides, c.padding), c.dx, c.filter);
    }
  }
  expect("Conv2DBackpropFilter", {{"input", iota(DType::float32, {1, 3, 6, 1})}, {"filter_sizes", ints({2, 2, 1, 1})},
                                  {"out_backprop", iota(DType::float32, {1, 1, 5, 1})}},
         conv({1, 1, 1, 1}, "VALID", {1, 2, 1, 1}), {55, 70, 235, 250});
  // Empty out_depth: empty result; empty batch: zeros.
  expect("Conv2DBackpropFilter", {{"input", iota(DType::float32, {1, 2, 3, 1})}, {"filter_sizes", ints({2, 2, 1, 0})},
                                  {"out_backprop", iota(DType::float32, {1, 1, 2, 0})}},
         conv({1, 1, 1, 1}, "VALID"), {}, {2, 2, 1, 0});
  expect("Conv2DBackpropFilter", {{"input", iota(DType::float32, {0, 2, 3, 1})}, {"filter_sizes", ints({2, 2, 1, 1})},
                                  {"out_backprop", iota(DType::float32, {0, 1, 2, 1})}},
         conv({1, 1, 1, 1}, "VALID"), {0, 0, 0, 0}, {2, 2, 1, 1});
}

TEST_CASE("golden: Conv2D forward fixes the layout convention") {
  // Depthwise's forward hand test (ops.md 4.4) and a grouped conv2d equivalent of it:
  // depthwise == grouped conv with G = C and the filter reshaped to [FH, FW, 1, C*M].
  std::vector<double> want = {196, 216, 272, 296, 252, 280, 344, 376};
  expect("DepthwiseConv2dNative", {{"input", iota(DType::float32, {1, 2, 3, 2})}, {"filter", iota(DType::float32, {2, 2, 2, 2})}},
         conv({1, 1, 1, 1}, "VALID"), want, {1, 1, 2, 4});
  expect("Conv2D", {{"input", iota(DType::float32, {1, 2, 3, 2})}, {"filter", iota(DType::float32, {2, 2, 1, 4})}},
         conv({1, 1, 1, 1}, "VALID"), want, {1, 1, 2, 4});
}

TEST_CASE("golden: Depthwise backprops, ops.md 4.4 DW-A/B/C") {
  struct DwCase {
    std::vector<int64_t> input, filter, dy;
    int64_t stride;
    AttrValue padding;
    std::vector<double> dx, dw;
  };
  const std::vector<DwCase> cases = {
      {{1, 2, 3, 2}, {2, 2, 2, 2}, {1, 1, 2, 4}, 1, "VALID",
       {5, 25, 34, 106, 61, 113, 29, 81, 146, 282, 149, 233},
       {16, 20, 34, 40, 28, 36, 54, 64, 52, 68, 94, 112, 64, 84, 114, 136}},
      {{1, 4, 4, 2}, {3, 3, 2, 1}, {1, 2, 2, 2}, 2, "SAME",
       {1, 4, 3, 8, 8, 20, 9, 16, 7, 16, 9, 20, 32, 56, 27, 40, 18, 40, 30, 56, 88, 144, 66, 96, 35, 48, 45, 60, 104, 136, 63, 80},
       {248, 312, 280, 352, 110, 144, 376, 472, 408, 512, 158, 208, 80, 124, 88, 136, 21, 44}},
      {{1, 2, 2, 1}, {2, 2, 1, 2}, {1, 2, 2, 2}, 1, list_padding(1, 0, 0, 1), {34, 124, 61, 166},
       {19, 22, 10, 12, 50, 60, 22, 28}},
  };
  for (const DwCase& c : cases) {
    Attrs a = {{"strides", AttrValue(std::vector<int64_t>{1, c.stride, c.stride, 1})}, {"padding", c.padding}};
    expect("DepthwiseConv2dNativeBackpropInput", {{"input_sizes", ints(c.input)}, {"filter", iota(DType::float32, c.filter)},
                                                  {"out_backprop", iota(DType::float32, c.dy)}},
           a, c.dx, c.input);
    expect("DepthwiseConv2dNativeBackpropFilter", {{"input", iota(DType::float32, c.input)}, {"filter_sizes", ints(c.filter)},
                                                   {"out_backprop", iota(DType::float32, c.dy)}},
           a, c.dw, c.filter);
  }
}

TEST_CASE("golden: Philox4x32-10 known answers and FractionalAvgPool sequences (ops.md 5.4, 5.7)") {
  Philox zero(Philox::Block{0, 0, 0, 0}, {0, 0});
  CHECK(zero.next_block() == Philox::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  Philox ones(Philox::Block{~0u, ~0u, ~0u, ~0u}, {~0u, ~0u});
  CHECK(ones.next_block() == Philox::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  Philox pi(Philox::Block{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0});
  CHECK(pi.next_block() == Philox::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});

  struct SeqCase {
    int64_t seed, seed2, h, w;
    double rh, rw;
    bool pseudo;
    std::vector<int64_t> rows, cols;
  };
  const double r2 = std::sqrt(2.0), r3 = std::sqrt(3.0);
  const std::vector<SeqCase> cases = {
      {87654321, 341261001, 7, 13, r2, r3, true, {0, 1, 3, 5, 7}, {0, 2, 4, 6, 7, 9, 11, 13}},
      {87654321, 341261001, 7, 13, r2, r3, false, {0, 2, 3, 5, 7}, {0, 2, 4, 6, 7, 9, 11, 13}},
      {87654321, 341261005, 7, 13, r2, r3, false, {0, 2, 4, 6, 7}, {0, 2, 4, 6, 8, 10, 12, 13}},
      {1, 0, 10, 10, 1.5, 1.5, true, {0, 2, 4, 5, 7, 9, 10}, {0, 2, 4, 5, 7, 9, 10}},
      {1, 0, 10, 10, 1.5, 1.5, false, {0, 1, 3, 5, 7, 8, 10}, {0, 2, 4, 5, 6, 8, 10}},
      {0, 1, 10, 10, 1.5, 1.5, true, {0, 2, 3, 5, 7, 8, 10}, {0, 2, 4, 6, 7, 9, 10}},
      {0, 1, 10, 10, 1.5, 1.5, false, {0, 2, 4, 5, 6, 8, 10}, {0, 2, 4, 6, 7, 9, 10}},
      {1, 1, 10, 10, 1.5, 1.5, true, {0, 2, 3, 5, 7, 8, 10}, {0, 1, 3, 5, 6, 8, 10}},
      {1, 1, 10, 10, 1.5, 1.5, false, {0, 2, 3, 4, 6, 8, 10}, {0, 2, 4, 5, 7, 8, 10}},
      {12345, 67890, 10, 10, 1.5, 1.5, true, {0, 2, 4, 6, 7, 9, 10}, {0, 2, 4, 6, 7, 9, 10}},
      {12345, 67890, 10, 10, 1.5, 1.5, false, {0, 2, 3, 5, 7, 9, 10}, {0, 1, 3, 5, 7, 8, 10}},
      {87654321, 341261001, 20, 30, r3, r2, true, {0, 1, 3, 5, 7, 9, 11, 12, 14, 16, 18, 20},
       {0, 2, 3, 4, 6, 7, 9, 10, 12, 13, 14, 16, 17, 19, 20, 22, 23, 24, 26, 27, 29, 30}},
      {87654321, 341261001, 20, 30, r3, r2, false, {0, 2, 4, 6, 7, 9, 11, 13, 15, 16, 18, 20},
       {0, 2, 3, 5, 6, 7, 9, 10, 12, 13, 14, 15, 16, 17, 19, 21, 22, 24, 26, 27, 28, 30}},
      {87654321, 341261005, 17, 23, std::sqrt(13.0), std::sqrt(7.0), false, {0, 4, 9, 13, 17},
       {0, 3, 6, 9, 12, 15, 18, 20, 23}},
      {87654321, 341261005, 17, 23, std::sqrt(13.0), std::sqrt(7.0), true, {0, 4, 8, 12, 17},
       {0, 3, 6, 9, 11, 14, 17, 20, 23}},
  };
  std::mt19937 rng(5);
  for (const SeqCase& c : cases) {
    CAPTURE(c.seed);
    CAPTURE(c.seed2);
    CAPTURE(c.pseudo);
    Host value = test::random(DType::float64, {1, c.h, c.w, 2}, rng);
    Attrs a = {{"pooling_ratio", AttrValue(std::vector<double>{1.0, c.rh, c.rw, 1.0})},
               {"pseudo_random", AttrValue(c.pseudo)}, {"overlapping", AttrValue(true)},
               {"deterministic", AttrValue(true)}, {"seed", AttrValue(c.seed)}, {"seed2", AttrValue(c.seed2)}};
    for (const std::string& backend : test::backends()) {
      test::Result r = test::run("FractionalAvgPool", {{"value", value}}, a, backend);
      REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
      std::vector<double> rows = r.vals(1), cols = r.vals(2);
      CHECK(std::vector<int64_t>(rows.begin(), rows.end()) == c.rows);
      CHECK(std::vector<int64_t>(cols.begin(), cols.end()) == c.cols);
    }
  }
}

TEST_CASE("golden: FractionalAvgPoolGrad, ops.md 5.10 doc example") {
  Attrs overlap = {{"overlapping", AttrValue(true)}}, disjoint = {{"overlapping", AttrValue(false)}};
  test::Named in = {{"orig_input_tensor_shape", ints({1, 1, 5, 1}, DType::int64)},
                    {"out_backprop", test::make(DType::float32, {1, 1, 2, 1}, {3, 6})},
                    {"row_pooling_sequence", ints({0, 1}, DType::int64)},
                    {"col_pooling_sequence", ints({0, 2, 4}, DType::int64)}};
  expect("FractionalAvgPoolGrad", in, overlap, {1, 1, 3, 2, 2}, {1, 1, 5, 1});
  expect("FractionalAvgPoolGrad", in, disjoint, {1.5, 1.5, 3, 3, 0}, {1, 1, 5, 1});
  // Window 3, stride 2 on 7x7 == sequence [0, 2, 4, 7] with overlapping (the test class docstring):
  // the gradient then equals AvgPoolGrad, which this builds by hand.
  std::mt19937 rng(3);
  Host dy = test::random(DType::float64, {1, 3, 3, 1}, rng);
  std::vector<double> g = dy.values(), want(49, 0.0);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      int r1 = r == 2 ? 6 : 2 * r + 2, c1 = c == 2 ? 6 : 2 * c + 2;  // the last cell is clamped to H-1
      int count = (r1 - 2 * r + 1) * (c1 - 2 * c + 1);
      for (int i = 2 * r; i <= r1; ++i)
        for (int j = 2 * c; j <= c1; ++j) want[i * 7 + j] += g[r * 3 + c] / count;
    }
  expect("FractionalAvgPoolGrad", {{"orig_input_tensor_shape", ints({1, 7, 7, 1}, DType::int64)}, {"out_backprop", dy},
                                   {"row_pooling_sequence", ints({0, 2, 4, 7}, DType::int64)},
                                   {"col_pooling_sequence", ints({0, 2, 4, 7}, DType::int64)}},
         overlap, want, {1, 7, 7, 1}, 1e-12);
  // Long sequences (more rows than any fixed cap): 1500 rows pooled in pairs.
  {
    std::vector<int64_t> rows;
    for (int64_t r = 0; r <= 1500; r += 2) rows.push_back(r);
    Host g = test::random(DType::float64, {1, 750, 1, 1}, rng);
    std::vector<double> gv = g.values(), half(1500);
    for (int i = 0; i < 1500; ++i) half[i] = gv[i / 2] / 2;
    expect("FractionalAvgPoolGrad", {{"orig_input_tensor_shape", ints({1, 1500, 1, 1}, DType::int64)}, {"out_backprop", g},
                                     {"row_pooling_sequence", ints(rows, DType::int64)},
                                     {"col_pooling_sequence", ints({0, 1}, DType::int64)}},
           disjoint, half, {1, 1500, 1, 1}, 1e-12);
  }
  // Integer dtype: TF's double buffer, truncated on the cast.
  expect("FractionalAvgPoolGrad", {{"orig_input_tensor_shape", ints({1, 1, 5, 1}, DType::int64)},
                                   {"out_backprop", test::make(DType::int64, {1, 1, 2, 1}, {3, 7})},
                                   {"row_pooling_sequence", ints({0, 1}, DType::int64)},
                                   {"col_pooling_sequence", ints({0, 2, 4}, DType::int64)}},
         overlap, {1, 1, 3, 2, 2}, {1, 1, 5, 1});
}

TEST_CASE("golden: FusedBatchNorm forward, ops.md 6.5") {
  const Host x = iota(DType::float32, {1, 2, 2, 2});
  const Host scale = test::make(DType::float32, {2}, {1, 2}), offset = test::make(DType::float32, {2}, {0.5, -0.5});
  const Host none = test::make(DType::float32, {0}, {});
  auto attrs = [](bool training, double factor, const char* format) {
    return Attrs{{"epsilon", AttrValue(0.001)}, {"is_training", AttrValue(training)},
                 {"exponential_avg_factor", AttrValue(factor)}, {"data_format", AttrValue(format)}};
  };
  for (const std::string& backend : test::backends()) {
    CAPTURE(backend);
    for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
      CAPTURE(op);
      test::Result r = test::run(op, {{"x", x}, {"scale", scale}, {"offset", offset}, {"mean", none}, {"variance", none}},
                                 attrs(true, 1.0, "NHWC"), backend);
      REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
      test::check_close(r.vals(0), {-0.841507, -3.183013, 0.052831, -1.394338, 0.947169, 0.394338, 1.841507, 2.183013}, 1e-5, 1e-6, "y");
      test::check_close(r.vals(1), {4, 5}, 1e-6, 0, "batch_mean");
      test::check_close(r.vals(2), {6.666667, 6.666667}, 1e-6, 0, "batch_variance");
      test::check_close(r.vals(3), {4, 5}, 1e-6, 0, "reserve_space_1");
      test::check_close(r.vals(4), {5, 5}, 1e-6, 0, "reserve_space_2");
    }
    const Host old_mean = test::make(DType::float32, {2}, {1, 1}), old_var = test::make(DType::float32, {2}, {2, 2});
    test::Result r = test::run("FusedBatchNormV3", {{"x", x}, {"scale", scale}, {"offset", offset}, {"mean", old_mean},
                                                    {"variance", old_var}},
                               attrs(true, 0.5, "NHWC"), backend);
    REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
    test::check_close(r.vals(1), {2.5, 3.0}, 1e-6, 0, "running mean");
    test::check_close(r.vals(2), {4.333333, 4.333333}, 1e-6, 0, "running variance");
    CHECK(r.out(5).shape() == std::vector<int64_t>{0});

    r = test::run("FusedBatchNorm", {{"x", iota(DType::float32, {1, 2, 2, 2})}, {"scale", scale}, {"offset", offset},
                                     {"mean", none}, {"variance", none}},
                  attrs(true, 1.0, "NCHW"), backend);
    REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
    test::check_close(r.vals(0), {-0.841104, 0.052965, 0.947035, 1.841104, -3.182209, -1.394070, 0.394070, 2.182209}, 1e-5, 1e-6, "y NCHW");
    test::check_close(r.vals(1), {2.5, 6.5}, 1e-6, 0, "mean NCHW");
    test::check_close(r.vals(2), {1.666667, 1.666667}, 1e-6, 0, "variance NCHW");

    r = test::run("FusedBatchNorm", {{"x", x}, {"scale", scale}, {"offset", offset},
                                     {"mean", test::make(DType::float32, {2}, {3, 6})},
                                     {"variance", test::make(DType::float32, {2}, {4, 1})}},
                  attrs(false, 1.0, "NHWC"), backend);
    REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
    test::check_close(r.vals(0), {-0.499875, -8.496003, 0.5, -4.498001, 1.499875, -0.5, 2.49975, 3.498001}, 1e-5, 1e-6, "y inference");
    test::check_close(r.vals(1), {3, 6}, 0, 0, "inference mean");
    test::check_close(r.vals(2), {4, 1}, 0, 0, "inference variance");

    r = test::run("FusedBatchNorm", {{"x", test::make(DType::float32, {1, 1, 1, 1}, {5})}, {"scale", test::make(DType::float32, {1}, {1})},
                                     {"offset", test::make(DType::float32, {1}, {0})}, {"mean", none}, {"variance", none}},
                  attrs(true, 1.0, "NHWC"), backend);
    REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
    test::check_close(r.vals(0), {0}, 0, 1e-6, "y 1x1");
    test::check_close(r.vals(1), {5}, 0, 0, "mean 1x1");
    test::check_close(r.vals(2), {0}, 0, 0, "variance 1x1");
  }
}

TEST_CASE("golden: FusedBatchNormGrad, ops.md 6.12") {
  const Host x = iota(DType::float32, {1, 2, 2, 2});
  const Host dy = test::make(DType::float32, {1, 2, 2, 2}, {1, 0, 2, -1, 0, 3, -1, 1});
  const Host scale = test::make(DType::float32, {2}, {1, 2});
  struct Case {
    bool training;
    const char* format;
    std::vector<double> rs1, rs2, dx, dscale;
  };
  const std::vector<Case> cases = {
      {true, "NHWC", {4, 5}, {5, 5}, {-0.312911, 0.268114, 0.491922, -1.252135, -0.044753, 1.699304, -0.134258, -0.715282}, {-3.577351, 3.130182}},
      {false, "NHWC", {3, 6}, {4, 1}, {0.499938, 0, 0.999875, -1.999001, 0, 5.997002, -0.499938, 1.999001}, {-2.999625, 3.998001}},
      {true, "NCHW", {2.5, 6.5}, {1.25, 1.25}, {-0.088978, -0.625706, 1.519775, -0.805091, -1.609111, 3.933978, -3.039908, 0.715041}, {-1.788139, -0.447035}},
  };
  for (const std::string& backend : test::backends()) {
    for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
      for (const Case& c : cases) {
        CAPTURE(backend);
        CAPTURE(op);
        CAPTURE(c.format);
        test::Named in = {{"y_backprop", dy}, {"x", x}, {"scale", scale}, {"reserve_space_1", test::make(DType::float32, {2}, c.rs1)},
                          {"reserve_space_2", test::make(DType::float32, {2}, c.rs2)}};
        if (std::string(op) == "FusedBatchNormGradV3") in.push_back({"reserve_space_3", test::make(DType::float32, {0}, {})});
        test::Result r = test::run(op, in, {{"epsilon", AttrValue(0.001)}, {"is_training", AttrValue(c.training)},
                                            {"data_format", AttrValue(c.format)}}, backend);
        REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
        test::check_close(r.vals(0), c.dx, 2e-5, 2e-6, "x_backprop");
        test::check_close(r.vals(1), c.dscale, 2e-5, 2e-6, "scale_backprop");
        test::check_close(r.vals(2), {2, 3}, 1e-6, 0, "offset_backprop");
        CHECK(r.out(3).shape() == std::vector<int64_t>{0});
        CHECK(r.out(4).shape() == std::vector<int64_t>{0});
      }
    }
  }
}

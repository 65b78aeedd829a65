// Hostile inputs (issue 6): every advisory proof-of-concept of ops.md §7 (rows 1-15), the
// TensorFlow crash reports listed after it, the error-path tests that ops.md names, and
// our own malformed inputs. Each case runs on every available backend (reference, cpu,
// vulkan when gradrt::backends() says it can run) and asserts either the exact status
// code, a message naming the op and the argument, and no outputs; or the defined
// zero/empty result of policy 3.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "tests/util.h"

namespace {

using gradrt::AttrValue;
using gradrt::Attrs;
using gradrt::Code;
using gradrt::DType;
using gradrt::Status;
using test::Host;
using test::Named;

constexpr int64_t kBig = int64_t{1} << 31;

// ---------------------------------------------------------------- tensors

// A tensor with a shape and no data (valid when the shape has no elements; otherwise the
// op must refuse it). Dimensions may be anything, negative or huge.
Host shaped(DType dtype, std::vector<int64_t> shape) { return Host{dtype, std::move(shape), {}}; }

Host filled(DType dtype, std::vector<int64_t> shape, double v) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return test::make(dtype, std::move(shape), std::vector<double>(static_cast<size_t>(n), v));
}

Host f32(std::vector<int64_t> shape, std::vector<double> v) { return test::make(DType::float32, std::move(shape), v); }

// An exact integer vector (test::ints goes through double).
Host ivec(std::vector<int64_t> values, DType dtype = DType::int32) {
  Host h{dtype, {static_cast<int64_t>(values.size())}, {}};
  h.bytes.resize(values.size() * gradrt::dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::int64) {
      std::memcpy(h.bytes.data() + 8 * i, &values[i], 8);
    } else {
      int32_t v = static_cast<int32_t>(values[i]);
      std::memcpy(h.bytes.data() + 4 * i, &v, 4);
    }
  }
  return h;
}
Host i64(std::vector<int64_t> values) { return ivec(std::move(values), DType::int64); }

// ---------------------------------------------------------------- attributes

AttrValue ilist(std::vector<int64_t> v) { return AttrValue(v); }
AttrValue flist(std::vector<double> v) { return AttrValue(v); }
AttrValue pairs(std::vector<std::vector<int64_t>> v) {  // [[0,0],[t,b],[l,r],[0,0]]
  AttrValue a;
  a.kind = AttrValue::Kind::List;
  for (auto& p : v) a.list.push_back(AttrValue(p));
  return a;
}

Attrs conv(std::vector<int64_t> strides, const char* padding) {
  return {{"strides", ilist(std::move(strides))}, {"padding", AttrValue(padding)}};
}
Attrs with(Attrs a, const std::string& name, AttrValue v) {
  a[name] = std::move(v);
  return a;
}

// ---------------------------------------------------------------- running

struct Outcome {
  std::string backend;
  Status status;
  gradrt::Outputs outputs;
};

// GRADRT_HOSTILE_DUMP=FILE appends every case to FILE as one JSON line (the test's name, op,
// attrs, inputs with their bytes in hex, or "hex": null for a tensor given only a shape, and the
// reference backend's status): tf/tests/test_hostile_tf.py replays them in TensorFlow.
void dump_case(const std::string& op, const Named& inputs, const Attrs& attrs, const Status& status) {
  const char* path = std::getenv("GRADRT_HOSTILE_DUMP");
  if (!path || !*path) return;
  auto json = [](const std::string& s) { return AttrValue(s).to_json(); };
  std::string line = "{\"test\":" + json(doctest::getContextOptions()->currentTest->m_name) + ",\"op\":" + json(op) +
                     ",\"attrs\":{";
  for (const auto& [name, value] : attrs) line += (line.back() == '{' ? "" : ",") + json(name) + ":" + value.to_json();
  line += "},\"inputs\":[";
  for (const auto& [name, host] : inputs) {
    line += (line.back() == '[' ? "{" : ",{") + std::string("\"name\":") + json(name) +
            ",\"dtype\":" + json(gradrt::dtype_name(host.dtype)) + ",\"shape\":" + AttrValue(host.shape).to_json() +
            ",\"hex\":";
    bool has_elements = true;  // (no product: hostile shapes overflow int64)
    for (int64_t d : host.shape) has_elements = has_elements && d != 0;
    if (host.bytes.empty() && has_elements) {
      line += "null}";
      continue;
    }
    std::string hex;
    for (unsigned char b : host.bytes) hex += "0123456789abcdef"[b >> 4], hex += "0123456789abcdef"[b & 15];
    line += json(hex) + "}";
  }
  line += "],\"code\":" + json(gradrt::code_name(status.code())) + ",\"message\":" + json(status.message()) + "}\n";
  std::ofstream(path, std::ios::app) << line;
}

std::vector<Outcome> run_all(const std::string& op, const Named& inputs, const Attrs& attrs) {
  gradrt::Inputs in;
  for (const auto& [name, host] : inputs) in[name] = host.view();
  std::vector<Outcome> all;
  for (const std::string& backend : test::backends()) {
    Outcome o;
    o.backend = backend;
    // A stale entry: run_op must leave `outputs` empty on failure, whatever it held.
    gradrt::Tensor junk;
    REQUIRE(gradrt::Tensor::allocate(DType::float32, {1}, &junk).ok());
    o.outputs.emplace_back("stale", std::move(junk));
    gradrt::RunOptions options;
    options.backend = backend;
    o.status = gradrt::run_op(op, in, attrs, &o.outputs, options);
    if (backend == "reference") dump_case(op, inputs, attrs, o.status);
    all.push_back(std::move(o));
  }
  return all;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The op fails with `code` on every backend; the message names the op and each needle
// (the argument and the rule); no output is produced.
void expect_error(const std::string& op, const Named& inputs, const Attrs& attrs, Code code,
                  const std::vector<std::string>& needles) {
  for (const Outcome& o : run_all(op, inputs, attrs)) {
    CAPTURE(o.backend);
    CAPTURE(o.status.to_string());
    CHECK(o.status.code() == code);
    CHECK(o.outputs.empty());
    CHECK(!o.status.message().empty());
    CHECK(contains(o.status.message(), op));
    for (const std::string& n : needles) {
      CAPTURE(n);
      CHECK(contains(o.status.message(), n));
    }
  }
}

// The op succeeds on every backend with these output shapes; returns the outcomes.
std::vector<Outcome> expect_ok(const std::string& op, const Named& inputs, const Attrs& attrs,
                               const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<Outcome> all = run_all(op, inputs, attrs);
  for (const Outcome& o : all) {
    CAPTURE(o.backend);
    CAPTURE(o.status.to_string());
    REQUIRE(o.status.ok());
    REQUIRE(o.outputs.size() >= shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) CHECK(o.outputs[i].second.shape() == shapes[i]);
  }
  return all;
}

bool all_zero_bits(const gradrt::Tensor& t) {
  const auto* p = static_cast<const unsigned char*>(t.data());
  for (size_t i = 0; i < t.num_bytes(); ++i)
    if (p[i] != 0) return false;
  return true;
}

// Output i is all zeros (+0.0 bit patterns: "never uninitialised memory") on every backend.
void expect_zeros(const std::vector<Outcome>& all, size_t i) {
  for (const Outcome& o : all) {
    CAPTURE(o.backend);
    CAPTURE(o.outputs[i].first);
    CHECK(o.outputs[i].second.num_elements() > 0);
    CHECK(all_zero_bits(o.outputs[i].second));
  }
}

void expect_empty(const std::vector<Outcome>& all, size_t i) {
  for (const Outcome& o : all) {
    CAPTURE(o.backend);
    CHECK(o.outputs[i].second.num_elements() == 0);
  }
}

// Restores the element limit when a test case ends.
struct LimitGuard {
  int64_t saved = gradrt::max_tensor_elements();
  ~LimitGuard() { gradrt::set_max_tensor_elements(saved); }
};

const DType F = DType::float32;
const DType D = DType::float64;

}  // namespace

// ====================================================================== ops.md §7 advisories

TEST_CASE("hostile: advisory 1 (CVE-2021-29524) Conv2DBackpropFilter zero-size input, stride 66") {
  // input [0,0,1,0], filter_sizes [1,1,1,1], out_backprop [0,0,1,1], strides [1,66,18,1], SAME:
  // the sum over an empty batch is zeros (policy 3); TF divided by a zero work size.
  auto r = expect_ok("Conv2DBackpropFilter",
                     {{"input", shaped(F, {0, 0, 1, 0})}, {"filter_sizes", ivec({1, 1, 1, 1})},
                      {"out_backprop", shaped(F, {0, 0, 1, 1})}},
                     conv({1, 66, 18, 1}, "SAME"), {{1, 1, 1, 1}});
  expect_zeros(r, 0);
}

TEST_CASE("hostile: advisory 2 (CVE-2021-29525) Conv2DBackpropInput empty filter") {
  // input_sizes [52,1,1,5], filter [0,1,5,0], out_backprop [52,1,1,0]: out_backprop has no
  // elements, so the output is zeros (TF after CVE-2022-35999), never a division by zero.
  auto r = expect_ok("Conv2DBackpropInput",
                     {{"input_sizes", ivec({52, 1, 1, 5})}, {"filter", shaped(F, {0, 1, 5, 0})},
                      {"out_backprop", shaped(F, {52, 1, 1, 0})}},
                     conv({1, 1, 1, 1}, "SAME"), {{52, 1, 1, 5}});
  expect_zeros(r, 0);
}

TEST_CASE("hostile: advisory 3 (CVE-2021-29526) Conv2D all-zero shapes") {
  expect_error("Conv2D", {{"input", shaped(F, {0, 0, 0, 0})}, {"filter", shaped(F, {0, 0, 0, 0})}},
               conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument, {"filter depth", "must be > 0"});
}

TEST_CASE("hostile: advisory 4 (CVE-2021-29538) Conv2DBackpropFilter all [0,0,0,0]") {
  // filter_sizes [0,0,0,0] has filter depth 0: TF's §1.4 check 5 runs before the empty-filter
  // early return, so this is a clean InvalidArgument (no division by the zero depth).
  Attrs a = with(conv({1, 1, 1, 1}, "SAME"), "use_cudnn_on_gpu", AttrValue(false));
  expect_error("Conv2DBackpropFilter",
               {{"input", shaped(F, {0, 0, 0, 0})}, {"filter_sizes", ivec({0, 0, 0, 0})},
                {"out_backprop", shaped(F, {0, 0, 0, 0})}},
               a, Code::InvalidArgument, {"filter depth"});
  // An empty filter with a positive depth: the empty result, returned early.
  auto r = expect_ok("Conv2DBackpropFilter",
                     {{"input", shaped(F, {0, 0, 0, 1})}, {"filter_sizes", ivec({0, 0, 1, 0})},
                      {"out_backprop", shaped(F, {0, 0, 0, 0})}},
                     a, {{0, 0, 1, 0}});
  expect_empty(r, 0);
}

TEST_CASE("hostile: advisory 5 (CVE-2021-29540) Conv2DBackpropFilter size mismatch") {
  Host x = f32({1, 1, 1, 2}, {1, 2});
  expect_error("Conv2DBackpropFilter",
               {{"input", x}, {"filter_sizes", ivec({1, 1, 1, 1})}, {"out_backprop", f32({1, 1, 1, 1}, {1})}},
               conv({1, 66, 49, 1}, "VALID"), Code::InvalidArgument, {"groups"});
  expect_error("Conv2DBackpropFilter",
               {{"input", shaped(F, {0, 1, 1, 5})}, {"filter_sizes", ivec({3, 8, 1, 1})},
                {"out_backprop", shaped(F, {0, 1, 1, 1})}},
               conv({1, 1, 1, 1}, "VALID"), Code::InvalidArgument, {"filter"});
  // The same mismatch without groups: out_backprop's size does not match the computed one.
  expect_error("Conv2DBackpropFilter",
               {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({3, 3, 1, 1})},
                {"out_backprop", f32({1, 1, 1, 1}, {1})}},
               conv({1, 1, 1, 1}, "VALID"), Code::InvalidArgument, {"Size of out_backprop doesn't match computed"});
}

TEST_CASE("hostile: advisory 6 (CVE-2021-29550) FractionalAvgPool ratio just above 1") {
  Host v{DType::int32, {1, 1, 1, 1}, {}};
  v.bytes = {60, 0, 0, 0};
  expect_error("FractionalAvgPool", {{"value", v}}, {{"pooling_ratio", flist({1.0, 1.0000014345305555, 1.0, 1.0})}},
               Code::InvalidArgument, {"Pooling ratio is higher than input dimension size for dimension 1"});
}

TEST_CASE("hostile: advisory 7 (CVE-2021-29578) FractionalAvgPoolGrad short sequences") {
  Host dy{DType::int64, {1, 1, 1, 1}, {}};
  dy.bytes.assign(8, 0);
  dy.bytes[0] = 2;
  // As published: depth 1 vs the original's 3 is refused first (policy 4).
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 3, 2, 3})}, {"out_backprop", dy},
                {"row_pooling_sequence", i64({1})}, {"col_pooling_sequence", i64({1})}},
               {{"overlapping", AttrValue(false)}}, Code::InvalidArgument, {"out_backprop", "depth"});
  // With matching depth, the sequence length check of the fix fires.
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 3, 2, 1})}, {"out_backprop", dy},
                {"row_pooling_sequence", i64({1})}, {"col_pooling_sequence", i64({1})}},
               {{"overlapping", AttrValue(false)}}, Code::InvalidArgument,
               {"row_seq_tensor must have at least 2 elements, but got 1"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 3, 2, 1})}, {"out_backprop", dy},
                {"row_pooling_sequence", i64({0, 3})}, {"col_pooling_sequence", i64({0})}},
               {{"overlapping", AttrValue(false)}}, Code::InvalidArgument,
               {"col_seq_tensor must have at least 2 elements, but got 1"});
}

TEST_CASE("hostile: advisory 8 (CVE-2021-29583) FusedBatchNorm parameter sizes") {
  Attrs a = {{"epsilon", AttrValue(0.0)},
             {"exponential_avg_factor", AttrValue(0.0)},
             {"data_format", AttrValue("NHWC")},
             {"is_training", AttrValue(false)}};
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    CAPTURE(op);
    Host one = f32({1}, {0});
    expect_error(op,
                 {{"x", filled(F, {10, 10, 10, 6}, 0)}, {"scale", one}, {"offset", one}, {"mean", one}, {"variance", one}},
                 a, Code::InvalidArgument,
                 {"scale must have the same number of elements as the channels of x, got 1 and 6"});
    Host none = shaped(F, {0});
    expect_error(op,
                 {{"x", filled(F, {10, 10, 10, 1}, 0)}, {"scale", none}, {"offset", none}, {"mean", none},
                  {"variance", none}},
                 a, Code::InvalidArgument,
                 {"scale must have the same number of elements as the channels of x, got 0 and 1"});
  }
}

TEST_CASE("hostile: advisory 9 (CVE-2021-37651) FractionalAvgPoolGrad zero batch, bad sequences") {
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({0, 1, 2, 3})}, {"out_backprop", filled(D, {1, 2, 2, 1}, 541)},
                {"row_pooling_sequence", i64({0, 0, 0, 0, 0})}, {"col_pooling_sequence", i64({-2, 0, 0, 2, 0})}},
               {{"overlapping", AttrValue(true)}}, Code::InvalidArgument, {"Batch dimension of input must not be 0"});
  // Batch fixed: then the negative column entry is refused.
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 2, 2, 1})}, {"out_backprop", filled(D, {1, 2, 2, 1}, 541)},
                {"row_pooling_sequence", i64({0, 1, 2, 2, 2})}, {"col_pooling_sequence", i64({-2, 0, 0, 2, 0})}},
               {{"overlapping", AttrValue(true)}}, Code::InvalidArgument,
               {"Column sequence tensor values must not be negative"});
}

TEST_CASE("hostile: advisory 10 (CVE-2021-41223) FusedBatchNormGrad unvalidated sizes") {
  std::vector<double> dy(9);
  for (int i = 0; i < 9; ++i) dy[i] = i;
  Attrs a = {{"epsilon", AttrValue(1.0)}, {"data_format", AttrValue("NCHW")}, {"is_training", AttrValue(true)}};
  for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    CAPTURE(op);
    Named in = {{"y_backprop", f32({1, 1, 3, 3}, dy)},
                {"x", f32({1, 1, 1, 2}, {0, 1})},
                {"scale", f32({2}, {1, 1})},
                {"reserve_space_1", f32({2}, {1, 1})},
                {"reserve_space_2", f32({3}, {1, 1, 1})}};
    if (std::string(op) == "FusedBatchNormGradV3") in.push_back({"reserve_space_3", shaped(F, {0})});
    expect_error(op, in, a, Code::InvalidArgument, {"x and y_backprop must have same shape"});
  }
}

TEST_CASE("hostile: advisory 11 (CVE-2022-21730) testNegativeSeqValuesForGradOp") {
  Host dy = test::iota(F, {1, 2, 3, 2});
  Attrs a = {{"overlapping", AttrValue(true)}};
  // As published (orig batch 2 vs out_backprop batch 1): refused by the batch check.
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({2, 2, 2, 2})}, {"out_backprop", dy},
                {"row_pooling_sequence", i64({-10, 1, 2, 3})}, {"col_pooling_sequence", i64({1, 2, 3, 4})}},
               a, Code::InvalidArgument, {"out_backprop", "batch"});
  // Consistent shapes: the negative row entry itself is refused.
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 2, 3, 2})}, {"out_backprop", dy},
                {"row_pooling_sequence", i64({-10, 1, 2, 3})}, {"col_pooling_sequence", i64({0, 1, 2, 3})}},
               a, Code::InvalidArgument, {"Row sequence tensor values must not be negative"});
}

TEST_CASE("hostile: advisory 12 (CVE-2022-35963) testInvalidSeqRaiseErrorForFractionalAvgPoolGrad") {
  const int64_t v = -1879048192;
  Attrs a = {{"overlapping", AttrValue(true)}};
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({v, v, v, v})}, {"out_backprop", shaped(D, {0, 0, 0, 0})},
                {"row_pooling_sequence", i64({1, 1, 1, 1})}, {"col_pooling_sequence", i64({1, 1, 1, 1})}},
               a, Code::InvalidArgument, {"out_backprop must be positive"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({v, v, v, v})}, {"out_backprop", filled(D, {1, 1, 1, 1}, 1)},
                {"row_pooling_sequence", i64({1, 1, 1, 1})}, {"col_pooling_sequence", i64({1, 1, 1, 1})}},
               a, Code::InvalidArgument, {"Expected a non-negative size, got -1879048192"});
}

TEST_CASE("hostile: advisory 13 (CVE-2022-35999) testConv2DBackpropInputDegenerateBackpropInput") {
  auto r = expect_ok("Conv2DBackpropInput",
                     {{"input_sizes", ivec({3, 1, 1, 2})}, {"filter", filled(F, {1, 3, 2, 3}, 1)},
                      {"out_backprop", shaped(F, {3, 1, 0, 3})}},
                     conv({1, 1, 2, 1}, "VALID"), {{3, 1, 1, 2}});
  expect_zeros(r, 0);
  // V2 and NCHW spell the same degenerate case.
  r = expect_ok("Conv2DBackpropInputV2",
                {{"input", filled(F, {3, 1, 1, 2}, 7)}, {"filter", filled(F, {1, 3, 2, 3}, 1)},
                 {"out_backprop", shaped(F, {3, 1, 0, 3})}},
                conv({1, 1, 2, 1}, "VALID"), {{3, 1, 1, 2}});
  expect_zeros(r, 0);
  r = expect_ok("Conv2DBackpropInput",
                {{"input_sizes", ivec({3, 2, 1, 1})}, {"filter", filled(F, {1, 3, 2, 3}, 1)},
                 {"out_backprop", shaped(F, {3, 3, 1, 0})}},
                with(conv({1, 1, 1, 2}, "VALID"), "data_format", AttrValue("NCHW")), {{3, 2, 1, 1}});
  expect_zeros(r, 0);
}

TEST_CASE("hostile: advisory 14 (CVE-2022-35969) testConv2DBackpropInputInvalidOutBackpropRaiseError") {
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({65534, 65534})}, {"filter", filled(F, {3, 3, 2, 2}, 0.159749106)},
                {"out_backprop", f32({}, {0})}},
               conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument, {"out_backprop must be 4-dimensional"});
}

TEST_CASE("hostile: advisory 15 (CVE-2023-25801) FractionalAvgPool batch/channel ratio") {
  Host v = filled(F, {3, 30, 50, 3}, 0);
  for (auto ratio : {std::vector<double>{2, 1.5, 1.5, 1}, std::vector<double>{1, 1.5, 1.5, 2},
                     std::vector<double>{2, 3, 1.5, 1}, std::vector<double>{2, 1.5, 1.5, 2}}) {
    CAPTURE(ratio[0]);
    CAPTURE(ratio[3]);
    expect_error("FractionalAvgPool", {{"value", v}},
                 {{"pooling_ratio", flist(ratio)}, {"pseudo_random", AttrValue(true)}, {"overlapping", AttrValue(true)}},
                 Code::Unimplemented, {"not yet supported on the batch nor channel dimension"});
  }
}

// ====================================================================== TF crash reports after §7

TEST_CASE("hostile: tf#78428 Conv2DBackpropInput huge input_sizes and low-rank filter") {
  // Huge depth with an empty filter: the output would have 2.5e13 elements.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", i64({1, 5, 5, 999999999999})}, {"filter", shaped(F, {3, 3, 999999999999, 0})},
                {"out_backprop", shaped(F, {1, 5, 5, 0})}},
               conv({1, 1, 1, 1}, "SAME"), Code::ResourceExhausted, {"output"});
  // Its product overflows int64.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", i64({1, 5, 5, int64_t{1} << 62})}, {"filter", filled(F, {3, 3, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 5, 5, 1}, 1)}},
               conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument, {"input_sizes", "overflows"});
  // 2-value input_sizes with a filter of rank < 4: the filter rank is checked before dim 2 is read.
  for (auto fshape : {std::vector<int64_t>{}, std::vector<int64_t>{3}, std::vector<int64_t>{3, 3},
                      std::vector<int64_t>{3, 3, 1}}) {
    CAPTURE(fshape.size());
    expect_error("Conv2DBackpropInput",
                 {{"input_sizes", ivec({5, 5})}, {"filter", filled(F, fshape, 1)}, {"out_backprop", shaped(F, {1, 5, 5, 0})}},
                 conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument, {"filter must be 4-dimensional"});
  }
}

TEST_CASE("hostile: tf#127293 Conv2DBackpropInput input_sizes of 3 entries or rank 0") {
  Named base = {{"filter", filled(F, {3, 3, 3, 2}, 1)}, {"out_backprop", filled(F, {1, 8, 8, 2}, 1)}};
  Named a = base;
  a.push_back({"input_sizes", ivec({8, 8, 3})});
  expect_error("Conv2DBackpropInput", a, conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
               {"input_sizes must contain 4 values or 2 values, but got: 3"});
  Named b = base;
  Host scalar{DType::int32, {}, {8, 0, 0, 0}};
  b.push_back({"input_sizes", scalar});
  expect_error("Conv2DBackpropInput", b, conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
               {"input_sizes", "1-dimensional"});
  Named c = base;
  c.push_back({"input_sizes", shaped(DType::int32, {0})});
  expect_error("Conv2DBackpropInput", c, conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
               {"input_sizes must contain 4 values or 2 values, but got: 0"});
  Named d = base;
  Host two_d{DType::int32, {2, 2}, std::vector<unsigned char>(16, 1)};
  d.push_back({"input_sizes", two_d});
  expect_error("Conv2DBackpropInput", d, conv({1, 1, 1, 1}, "SAME"), Code::InvalidArgument,
               {"input_sizes", "1-dimensional"});
}

TEST_CASE("hostile: tf#62950 tf#63076 tf#104881 strides/dilations of the wrong length") {
  struct Op {
    const char* name;
    Named inputs;
  };
  std::vector<Op> ops = {
      {"Conv2DBackpropInput",
       {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
        {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}}},
      {"Conv2DBackpropFilter",
       {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({2, 2, 1, 1})},
        {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}}},
      {"DepthwiseConv2dNativeBackpropInput",
       {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
        {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}}},
      {"DepthwiseConv2dNativeBackpropFilter",
       {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({2, 2, 1, 1})},
        {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}}},
      {"Conv2D", {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter", filled(F, {2, 2, 1, 1}, 1)}}},
      {"DepthwiseConv2dNative", {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter", filled(F, {2, 2, 1, 1}, 1)}}},
  };
  for (const Op& op : ops) {
    CAPTURE(op.name);
    for (auto s : {std::vector<int64_t>{1, 1, 1}, std::vector<int64_t>{}, std::vector<int64_t>{1},
                   std::vector<int64_t>{1, 1, 1, 1, 1}}) {
      CAPTURE(s.size());
      expect_error(op.name, op.inputs, conv(s, "SAME"), Code::InvalidArgument, {"strides", "4 entries"});
      expect_error(op.name, op.inputs, with(conv({1, 1, 1, 1}, "SAME"), "dilations", ilist(s)), Code::InvalidArgument,
                   {"dilations", "4 entries"});
    }
  }
}

TEST_CASE("hostile: tf#126484 DepthwiseConv2dNativeBackpropFilter empty out_backprop gives zeros") {
  for (const char* fmt : {"NHWC", "NCHW"}) {
    CAPTURE(fmt);
    bool nchw = std::string(fmt) == "NCHW";
    auto r = expect_ok("DepthwiseConv2dNativeBackpropFilter",
                       {{"input", shaped(F, nchw ? std::vector<int64_t>{0, 2, 4, 4} : std::vector<int64_t>{0, 4, 4, 2})},
                        {"filter_sizes", ivec({3, 3, 2, 1})},
                        {"out_backprop", shaped(F, nchw ? std::vector<int64_t>{0, 2, 4, 4} : std::vector<int64_t>{0, 4, 4, 2})}},
                       with(conv({1, 1, 1, 1}, "SAME"), "data_format", AttrValue(fmt)), {{3, 3, 2, 1}});
    expect_zeros(r, 0);
  }
  // Depth multiplier 0: the filter gradient itself is empty.
  auto r = expect_ok("DepthwiseConv2dNativeBackpropFilter",
                     {{"input", filled(F, {1, 4, 4, 2}, 1)}, {"filter_sizes", ivec({3, 3, 2, 0})},
                      {"out_backprop", shaped(F, {1, 4, 4, 0})}},
                     conv({1, 1, 1, 1}, "SAME"), {{3, 3, 2, 0}});
  expect_empty(r, 0);
}

TEST_CASE("hostile: tf#57495 empty batch on every conv gradient") {
  auto r = expect_ok("Conv2DBackpropInput",
                     {{"input_sizes", ivec({0, 4, 4, 2})}, {"filter", filled(F, {3, 3, 2, 3}, 1)},
                      {"out_backprop", shaped(F, {0, 2, 2, 3})}},
                     conv({1, 2, 2, 1}, "SAME"), {{0, 4, 4, 2}});
  expect_empty(r, 0);
  r = expect_ok("Conv2DBackpropFilter",
                {{"input", shaped(F, {0, 4, 4, 2})}, {"filter_sizes", ivec({3, 3, 2, 3})},
                 {"out_backprop", shaped(F, {0, 2, 2, 3})}},
                conv({1, 2, 2, 1}, "SAME"), {{3, 3, 2, 3}});
  expect_zeros(r, 0);
  r = expect_ok("Conv2DBackpropFilterV2",
                {{"input", shaped(F, {0, 4, 4, 2})}, {"filter", filled(F, {3, 3, 2, 3}, 5)},
                 {"out_backprop", shaped(F, {0, 2, 2, 3})}},
                conv({1, 2, 2, 1}, "SAME"), {{3, 3, 2, 3}});
  expect_zeros(r, 0);
  r = expect_ok("DepthwiseConv2dNativeBackpropInput",
                {{"input_sizes", ivec({0, 4, 4, 2})}, {"filter", filled(F, {3, 3, 2, 2}, 1)},
                 {"out_backprop", shaped(F, {0, 2, 2, 4})}},
                conv({1, 2, 2, 1}, "SAME"), {{0, 4, 4, 2}});
  expect_empty(r, 0);
}

TEST_CASE("hostile: tf#34062 FusedBatchNorm with all non-channel dims 1") {
  auto r = expect_ok("FusedBatchNormV3",
                     {{"x", f32({1, 1, 1, 1}, {5})}, {"scale", f32({1}, {1})}, {"offset", f32({1}, {0.25})},
                      {"mean", shaped(F, {0})}, {"variance", shaped(F, {0})}},
                     {{"epsilon", AttrValue(0.001)}}, {{1, 1, 1, 1}, {1}, {1}, {1}, {1}, {0}});
  for (const Outcome& o : r) {
    CAPTURE(o.backend);
    CHECK(test::values(o.outputs[0].second)[0] == doctest::Approx(0.25));  // y = offset
    CHECK(test::values(o.outputs[1].second)[0] == 5);
    CHECK(test::values(o.outputs[2].second)[0] == 0);  // var * 1 / max(0, 1)
  }
}

// ====================================================================== error-path tests named in ops.md

TEST_CASE("hostile: testOpEdgeCases negative explicit padding (list form and EXPLICIT)") {
  Attrs list_form = {{"strides", ilist({1, 1, 1, 1})}, {"padding", pairs({{0, 0}, {-1, 0}, {0, 0}, {0, 0}})}};
  Attrs explicit_form = {{"strides", ilist({1, 1, 1, 1})},
                         {"padding", AttrValue("EXPLICIT")},
                         {"explicit_paddings", ilist({0, 0, -1, 0, 0, 0, 0, 0})}};
  for (const Attrs& a : {list_form, explicit_form}) {
    expect_error("Conv2DBackpropInput",
                 {{"input_sizes", ivec({32, 20, 20, 3})}, {"filter", filled(F, {18, 18, 3, 2}, 1)},
                  {"out_backprop", filled(F, {32, 3, 2, 2}, 1)}},
                 a, Code::InvalidArgument, {"All elements of explicit_paddings must be nonnegative"});
    expect_error("Conv2DBackpropFilter",
                 {{"input", filled(F, {32, 20, 20, 3}, 1)}, {"filter_sizes", ivec({18, 18, 3, 2})},
                  {"out_backprop", filled(F, {32, 3, 2, 2}, 1)}},
                 a, Code::InvalidArgument, {"All elements of explicit_paddings must be nonnegative"});
  }
}

TEST_CASE("hostile: explicit padding validation (ops.md 1.2)") {
  Named in = {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
              {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}};
  Attrs a = conv({1, 1, 1, 1}, "EXPLICIT");
  expect_error("Conv2DBackpropInput", in, a, Code::InvalidArgument,
               {"explicit_paddings attribute must contain 8 values, but got: 0"});
  expect_error("Conv2DBackpropInput", in, with(a, "explicit_paddings", ilist({0, 0, 1, 0, 1, 0})),
               Code::InvalidArgument, {"explicit_paddings attribute must contain 8 values, but got: 6"});
  expect_error("Conv2DBackpropInput", in, with(a, "explicit_paddings", ilist({1, 0, 0, 1, 0, 1, 0, 0})),
               Code::InvalidArgument, {"Nonzero explicit padding in the batch or depth dimensions"});
  expect_error("Conv2DBackpropInput", in, with(a, "explicit_paddings", ilist({0, 0, 0, 1, 0, 1, 0, 2})),
               Code::InvalidArgument, {"Nonzero explicit padding in the batch or depth dimensions"});
  expect_error("Conv2DBackpropInput", in, with(conv({1, 1, 1, 1}, "SAME"), "explicit_paddings", ilist({0, 0, 0, 1, 0, 1, 0, 0})),
               Code::InvalidArgument, {"explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT"});
  // Huge explicit pads: the window arithmetic is checked, not wrapped.
  const int64_t huge = std::numeric_limits<int64_t>::max() - 1;
  expect_error("Conv2DBackpropInput", in, with(a, "explicit_paddings", ilist({0, 0, huge, huge, 0, 0, 0, 0})),
               Code::InvalidArgument, {"overflows"});
  expect_error("Conv2D", {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter", filled(F, {2, 2, 1, 1}, 1)}},
               with(a, "explicit_paddings", ilist({0, 0, int64_t{1} << 20, int64_t{1} << 20, int64_t{1} << 20, 0, 0, 0})),
               Code::ResourceExhausted, {"output"});
  // padding list form: wrong shapes.
  expect_error("Conv2DBackpropInput", in, {{"strides", ilist({1, 1, 1, 1})}, {"padding", pairs({{0, 0}, {1, 1}, {1, 1}})}},
               Code::InvalidArgument, {"padding", "4"});
  expect_error("Conv2DBackpropInput", in,
               {{"strides", ilist({1, 1, 1, 1})}, {"padding", pairs({{0, 0}, {1, 1, 1}, {1, 1}, {0, 0}})}},
               Code::InvalidArgument, {"padding", "2 integers"});
}

TEST_CASE("hostile: testEagerShapeErrors (FusedBatchNorm forward)") {
  Host x = filled(F, {2, 2, 2, 2}, 1), two = filled(F, {2}, 1), three = filled(F, {3}, 1), none = shaped(F, {0});
  Attrs train = {{"is_training", AttrValue(true)}}, infer = {{"is_training", AttrValue(false)}};
  for (const char* op : {"FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3"}) {
    CAPTURE(op);
    expect_error(op, {{"x", x}, {"scale", three}, {"offset", two}, {"mean", none}, {"variance", none}}, train,
                 Code::InvalidArgument, {"scale must have the same number of elements"});
    expect_error(op, {{"x", x}, {"scale", two}, {"offset", three}, {"mean", none}, {"variance", none}}, train,
                 Code::InvalidArgument, {"offset must have the same number of elements"});
    expect_error(op, {{"x", x}, {"scale", two}, {"offset", two}, {"mean", none}, {"variance", two}}, infer,
                 Code::InvalidArgument, {"When is_training=false, mean must have the same number of elements"});
    expect_error(op, {{"x", x}, {"scale", two}, {"offset", two}, {"mean", two}, {"variance", none}}, infer,
                 Code::InvalidArgument, {"When is_training=false, variance must have the same number of elements"});
    Attrs half = with(train, "exponential_avg_factor", AttrValue(0.5));
    expect_error(op, {{"x", x}, {"scale", two}, {"offset", two}, {"mean", none}, {"variance", two}}, half,
                 Code::InvalidArgument, {"When exponential_avg_factor != 1, mean must have the same number of elements"});
    expect_error(op, {{"x", x}, {"scale", two}, {"offset", two}, {"mean", two}, {"variance", none}}, half,
                 Code::InvalidArgument, {"When exponential_avg_factor != 1, variance must have the same number of elements"});
    // mean/variance are 1-D even when unused (ops.md 6.3 step 2).
    expect_error(op, {{"x", x}, {"scale", two}, {"offset", two}, {"mean", f32({}, {0})}, {"variance", none}}, train,
                 Code::InvalidArgument, {"mean must be 1-dimensional"});
    expect_error(op, {{"x", x}, {"scale", f32({1, 2}, {1, 1})}, {"offset", two}, {"mean", none}, {"variance", none}},
                 train, Code::InvalidArgument, {"scale must be 1-dimensional"});
    expect_error(op, {{"x", filled(F, {2, 2, 2}, 1)}, {"scale", two}, {"offset", two}, {"mean", none}, {"variance", none}},
                 train, Code::InvalidArgument, {"x must be 4-dimensional"});
  }
}

TEST_CASE("hostile: testEagerShapeGradErrors (FusedBatchNormGrad)") {
  Host x = filled(F, {2, 2, 2, 2}, 1), two = filled(F, {2}, 1), three = filled(F, {3}, 1);
  for (const char* op : {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"}) {
    CAPTURE(op);
    bool v3 = std::string(op) == "FusedBatchNormGradV3";
    auto in = [&](Host dy, Host scale, Host rs1, Host rs2) {
      Named n = {{"y_backprop", dy}, {"x", x}, {"scale", scale}, {"reserve_space_1", rs1}, {"reserve_space_2", rs2}};
      if (v3) n.push_back({"reserve_space_3", shaped(F, {0})});
      return n;
    };
    expect_error(op, in(filled(F, {2, 2, 2, 3}, 1), two, two, two), {}, Code::InvalidArgument,
                 {"x and y_backprop must have same shape"});
    expect_error(op, in(x, three, two, two), {}, Code::InvalidArgument, {"scale must have the same number of elements"});
    expect_error(op, in(x, two, three, two), {}, Code::InvalidArgument,
                 {"reserve_space_1 must have the same number of elements"});
    expect_error(op, in(x, two, two, three), {}, Code::InvalidArgument,
                 {"reserve_space_2 must have the same number of elements"});
    expect_error(op, in(x, two, two, f32({1, 2}, {1, 1})), {}, Code::InvalidArgument,
                 {"reserve_space_2 must be 1-dimensional"});
    expect_error(op, in(filled(F, {2, 2, 2}, 1), two, two, two), {}, Code::InvalidArgument,
                 {"y_backprop must be 4-dimensional"});
  }
  // V3 without its sixth input.
  expect_error("FusedBatchNormGradV3",
               {{"y_backprop", x}, {"x", x}, {"scale", two}, {"reserve_space_1", two}, {"reserve_space_2", two}}, {},
               Code::InvalidArgument, {"missing input 'reserve_space_3'"});
}

TEST_CASE("hostile: testPoolingRatio* (FractionalAvgPool)") {
  Host small{DType::int64, {1, 1, 1, 4}, {}};
  for (int64_t v : {1, 4, 2, 3}) {
    unsigned char b[8];
    std::memcpy(b, &v, 8);
    small.bytes.insert(small.bytes.end(), b, b + 8);
  }
  expect_error("FractionalAvgPool", {{"value", small}}, {{"pooling_ratio", flist({1, 1.44, 1.73, 1})}},
               Code::InvalidArgument, {"Pooling ratio is higher than input dimension size for dimension 1"});
  Host zeros = filled(F, {3, 30, 30, 3}, 0);
  expect_error("FractionalAvgPool", {{"value", zeros}}, {{"pooling_ratio", flist({1, -1, 3, 1})}},
               Code::InvalidArgument, {"pooling_ratio cannot be smaller than 1"});
  expect_error("FractionalAvgPool", {{"value", zeros}}, {{"pooling_ratio", flist({1, 0.5, 3, 1})}},
               Code::InvalidArgument, {"pooling_ratio cannot be smaller than 1"});
  expect_error("FractionalAvgPool", {{"value", zeros}}, {{"pooling_ratio", flist({1, std::nan(""), 3, 1})}},
               Code::InvalidArgument, {"pooling_ratio"});
  expect_error("FractionalAvgPool", {{"value", zeros}}, {{"pooling_ratio", flist({1, 2, 2})}}, Code::InvalidArgument,
               {"pooling_ratio field must specify 4 dimensions"});
  expect_error("FractionalAvgPool", {{"value", zeros}}, {{"pooling_ratio", flist({1, 2, 2, 1, 1})}},
               Code::InvalidArgument, {"pooling_ratio field must specify 4 dimensions"});
  expect_error("FractionalAvgPool", {{"value", zeros}}, {}, Code::InvalidArgument, {"pooling_ratio"});
  // Huge but valid ratios: larger than every dim.
  expect_error("FractionalAvgPool", {{"value", zeros}}, {{"pooling_ratio", flist({1, 1e300, 2, 1})}},
               Code::InvalidArgument, {"Pooling ratio is higher than input dimension size for dimension 1"});
  expect_error("FractionalAvgPool", {{"value", zeros}}, {{"pooling_ratio", flist({1, 2, 2, 1})}, {"seed", AttrValue(1)}},
               Code::InvalidArgument, {"Both seed and seed2 should be 0 if deterministic is false."});
  expect_error("FractionalAvgPool", {{"value", filled(F, {30, 30, 3}, 0)}}, {{"pooling_ratio", flist({1, 2, 2, 1})}},
               Code::InvalidArgument, {"tensor_in must be 4-dimensional"});
  // Every zero-sized dimension is smaller than its ratio (>= 1).
  for (int d = 0; d < 4; ++d) {
    std::vector<int64_t> s = {2, 4, 4, 2};
    s[d] = 0;
    CAPTURE(d);
    expect_error("FractionalAvgPool", {{"value", shaped(F, s)}}, {{"pooling_ratio", flist({1, 1.5, 1.5, 1})}},
                 Code::InvalidArgument, {"Pooling ratio is higher than input dimension size for dimension " + std::to_string(d)});
  }
  // float16 is not a FractionalAvgPool dtype.
  expect_error("FractionalAvgPool", {{"value", filled(DType::float16, {1, 4, 4, 1}, 0)}},
               {{"pooling_ratio", flist({1, 2, 2, 1})}}, Code::InvalidArgument, {"value", "dtype"});
}

// ====================================================================== FractionalAvgPoolGrad (ops.md 5.9 + policy 4)

TEST_CASE("hostile: FractionalAvgPoolGrad sequences out of order, out of range, too short") {
  Host dy = test::iota(F, {1, 2, 2, 1});
  Attrs a = {{"overlapping", AttrValue(false)}};
  auto run = [&](std::vector<int64_t> orig, std::vector<int64_t> rows, std::vector<int64_t> cols, Host g,
                 std::vector<std::string> needles) {
    expect_error("FractionalAvgPoolGrad",
                 {{"orig_input_tensor_shape", i64(orig)}, {"out_backprop", g}, {"row_pooling_sequence", i64(rows)},
                  {"col_pooling_sequence", i64(cols)}},
                 a, Code::InvalidArgument, needles);
  };
  run({1, 4, 4, 1}, {0, 3, 2}, {0, 2, 4}, dy, {"row_pooling_sequence", "non-decreasing"});
  run({1, 4, 4, 1}, {0, 2, 4}, {4, 2, 0}, dy, {"col_pooling_sequence", "non-decreasing"});
  run({1, 4, 4, 1}, {0, 2, 5}, {0, 2, 4}, dy, {"row_pooling_sequence", "past the input size"});
  run({1, 4, 4, 1}, {0, 2, 4}, {0, 2, int64_t{1} << 62}, dy, {"col_pooling_sequence", "past the input size"});
  run({1, 4, 4, 1}, {0, 2}, {0, 2, 4}, dy, {"row_seq_tensor must have at least 3 elements, but got 2"});
  run({1, 4, 4, 1}, {}, {0, 2, 4}, dy, {"row_seq_tensor must have at least 3 elements, but got 0"});
  run({1, 4, 4, 1}, {0, 2, 4}, {0, 2, std::numeric_limits<int64_t>::min()}, dy,
      {"Column sequence tensor values must not be negative"});
  // A first cell [0, 0) ends at -1 when not overlapping: TF refuses it (found by tf/tests).
  run({1, 4, 4, 1}, {0, 0, 4}, {0, 2, 4}, dy, {"Row sequence tensor values must not be negative", "cell 0"});
  // out_backprop larger than the original (policy 4: H' <= H, W' <= W).
  run({1, 1, 4, 1}, {0, 1, 1}, {0, 2, 4}, dy, {"out_backprop", "exceed"});
  // batch / depth must equal the original's.
  run({2, 4, 4, 1}, {0, 2, 4}, {0, 2, 4}, dy, {"out_backprop", "batch"});
  run({1, 4, 4, 3}, {0, 2, 4}, {0, 2, 4}, dy, {"out_backprop", "depth"});
  // orig_input_tensor_shape malformed.
  run({1, 4, 4}, {0, 2, 4}, {0, 2, 4}, dy, {"original input tensor shape must be"});
  run({1, 4, 4, 1, 1}, {0, 2, 4}, {0, 2, 4}, dy, {"original input tensor shape must be"});
  run({1, -4, 4, 1}, {0, 2, 4}, {0, 2, 4}, dy, {"Expected a non-negative size"});
  run({1, kBig, kBig, kBig}, {0, 2, 4}, {0, 2, 4}, dy, {"orig_input_tensor_shape", "overflows"});
  run({1, 0, 4, 1}, {0, 2, 4}, {0, 2, 4}, dy, {"Rows dimension of input must not be 0"});
  run({1, 4, 0, 1}, {0, 2, 4}, {0, 2, 4}, dy, {"Columns dimension of input must not be 0"});
  run({1, 4, 4, 0}, {0, 2, 4}, {0, 2, 4}, dy, {"Depth dimension of input must not be 0"});
  // Sequences of the wrong dtype / rank, out_backprop of the wrong rank or empty.
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 4, 4, 1})}, {"out_backprop", dy},
                {"row_pooling_sequence", f32({3}, {0, 2, 4})}, {"col_pooling_sequence", i64({0, 2, 4})}},
               a, Code::InvalidArgument, {"row_pooling_sequence", "int32 or int64"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 4, 4, 1})}, {"out_backprop", dy},
                {"row_pooling_sequence", i64({0, 2, 4})}, {"col_pooling_sequence", Host{DType::int64, {1, 3}, std::vector<unsigned char>(24, 0)}}},
               a, Code::InvalidArgument, {"col_pooling_sequence", "1-dimensional"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 4, 4, 1})}, {"out_backprop", test::iota(F, {2, 2, 1})},
                {"row_pooling_sequence", i64({0, 2, 4})}, {"col_pooling_sequence", i64({0, 2, 4})}},
               a, Code::InvalidArgument, {"out_backprop must be 4-dimensional"});
  for (int d = 0; d < 4; ++d) {
    std::vector<int64_t> s = {1, 2, 2, 1};
    s[d] = 0;
    CAPTURE(d);
    expect_error("FractionalAvgPoolGrad",
                 {{"orig_input_tensor_shape", i64({1, 4, 4, 1})}, {"out_backprop", shaped(F, s)},
                  {"row_pooling_sequence", i64({0, 2, 4})}, {"col_pooling_sequence", i64({0, 2, 4})}},
                 a, Code::InvalidArgument, {"out_backprop must be positive for all dimension"});
  }
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 4, 4, 1})}, {"out_backprop", dy},
                {"row_pooling_sequence", shaped(DType::int64, {2000})}, {"col_pooling_sequence", i64({0, 2, 4})}},
               a, Code::InvalidArgument, {"row_pooling_sequence"});
}

TEST_CASE("hostile: FractionalAvgPoolGrad longer sequences and empty cells are well-defined") {
  // Extra sequence entries are ignored (TF accepts them); equal entries make an empty cell
  // in non-overlapping mode, whose gradient goes nowhere; uncovered input cells get 0.
  Host dy = f32({1, 1, 2, 1}, {3, 6});
  auto r = expect_ok("FractionalAvgPoolGrad",
                     {{"orig_input_tensor_shape", i64({1, 1, 5, 1})}, {"out_backprop", dy},
                      {"row_pooling_sequence", i64({0, 1, 1, 1})}, {"col_pooling_sequence", i64({0, 2, 4, 5, 5})}},
                     {{"overlapping", AttrValue(false)}}, {{1, 1, 5, 1}});
  for (const Outcome& o : r) {
    CAPTURE(o.backend);
    test::check_close(test::values(o.outputs[0].second), {1.5, 1.5, 3, 3, 0}, 1e-6, 1e-6, o.backend);
  }
  r = expect_ok("FractionalAvgPoolGrad",
                {{"orig_input_tensor_shape", i64({1, 1, 5, 1})}, {"out_backprop", dy},
                 {"row_pooling_sequence", i64({0, 1})}, {"col_pooling_sequence", i64({0, 2, 2})}},
                {{"overlapping", AttrValue(false)}}, {{1, 1, 5, 1}});
  for (const Outcome& o : r) {
    CAPTURE(o.backend);
    test::check_close(test::values(o.outputs[0].second), {1.5, 1.5, 0, 0, 0}, 1e-6, 1e-6, o.backend);
  }
}

// ====================================================================== our own

TEST_CASE("hostile: huge, negative and overflowing dimensions") {
  Attrs same = conv({1, 1, 1, 1}, "SAME");
  // Output beyond max_tensor_elements: ResourceExhausted before allocating.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", i64({1, kBig, kBig, 1})}, {"filter", shaped(F, {1, 1, 1, 0})},
                {"out_backprop", shaped(F, {1, kBig, kBig, 0})}},
               same, Code::ResourceExhausted, {"output"});
  expect_error("Conv2DBackpropFilter",
               {{"input", shaped(F, {1, 4, 4, 0})}, {"filter_sizes", i64({kBig, kBig, 1, 1})},
                {"out_backprop", shaped(F, {1, 4, 4, 0})}},
               same, Code::InvalidArgument, {"out_depth"});
  expect_error("Conv2DBackpropFilter",
               {{"input", shaped(F, {0, 4, 4, 1})}, {"filter_sizes", i64({kBig, kBig, 1, 1})},
                {"out_backprop", shaped(F, {0, 4, 4, 1})}},
               same, Code::ResourceExhausted, {"output"});
  expect_error("DepthwiseConv2dNativeBackpropFilter",
               {{"input", shaped(F, {0, 4, 4, 1})}, {"filter_sizes", i64({kBig, kBig, 1, 1})},
                {"out_backprop", shaped(F, {0, 4, 4, 1})}},
               same, Code::ResourceExhausted, {"output"});
  expect_error("DepthwiseConv2dNativeBackpropInput",
               {{"input_sizes", i64({kBig, kBig, 1, 1})}, {"filter", shaped(F, {1, 1, 1, 0})},
                {"out_backprop", shaped(F, {kBig, kBig, 1, 0})}},
               same, Code::ResourceExhausted, {"output"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, kBig, kBig, 1})}, {"out_backprop", filled(F, {1, 1, 1, 1}, 1)},
                {"row_pooling_sequence", i64({0, kBig})}, {"col_pooling_sequence", i64({0, kBig})}},
               {}, Code::ResourceExhausted, {"output"});
  // Products that overflow int64 (given shapes and shape vectors).
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", i64({kBig, kBig, kBig, 4})}, {"filter", filled(F, {1, 1, 4, 1}, 1)},
                {"out_backprop", filled(F, {1, 1, 1, 1}, 1)}},
               same, Code::InvalidArgument, {"input_sizes", "overflows"});
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", i64({1, 1, 1, 1})}, {"filter", shaped(F, {kBig, kBig, kBig, 0})},
                {"out_backprop", filled(F, {1, 1, 1, 1}, 1)}},
               same, Code::InvalidArgument, {"filter", "overflows"});
  expect_error("Conv2DBackpropFilter",
               {{"input", filled(F, {1, 1, 1, 1}, 1)}, {"filter_sizes", i64({kBig, kBig, kBig, 0})},
                {"out_backprop", filled(F, {1, 1, 1, 0}, 1)}},
               same, Code::InvalidArgument, {"filter_sizes", "overflows"});
  expect_error("FusedBatchNormV3",
               {{"x", shaped(F, {0, kBig, kBig, kBig})}, {"scale", shaped(F, {kBig})}, {"offset", shaped(F, {kBig})},
                {"mean", shaped(F, {0})}, {"variance", shaped(F, {0})}},
               {}, Code::InvalidArgument, {"'x'", "overflows"});
  // Negative dimensions: in a shape vector and in a tensor's own shape.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, -1, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"Dimension 1 of input_sizes must be >= 0"});
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({-5, -5})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"input_sizes", ">= 0"});
  expect_error("Conv2DBackpropFilter",
               {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({2, -2, 1, 1})},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"Dimension 1 of filter_sizes must be >= 0"});
  expect_error("DepthwiseConv2dNativeBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, -1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"Dimension 3 of input_sizes must be >= 0"});
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", shaped(F, {-2, 2, 1, 1})},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"'filter'", "must be >= 0"});
  expect_error("FusedBatchNormGradV2",
               {{"y_backprop", shaped(F, {2, -2, 2, 2})}, {"x", shaped(F, {2, -2, 2, 2})}, {"scale", filled(F, {2}, 1)},
                {"reserve_space_1", filled(F, {2}, 1)}, {"reserve_space_2", filled(F, {2}, 1)}},
               {}, Code::InvalidArgument, {"'y_backprop'", "must be >= 0"});
  expect_error("FractionalAvgPool", {{"value", shaped(F, {1, -4, 4, 1})}}, {{"pooling_ratio", flist({1, 2, 2, 1})}},
               Code::InvalidArgument, {"'value'", "must be >= 0"});
  // A tensor with elements but no data.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", shaped(F, {2, 2, 1, 1})},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"'filter' has no data"});
  // Huge filter against a small input: negative output size under VALID, no wrap-around.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", shaped(F, {kBig, kBig, 1, 0})},
                {"out_backprop", shaped(F, {1, 1, 1, 0})}},
               conv({1, 1, 1, 1}, "VALID"), Code::InvalidArgument, {"Computed output size would be negative"});
  // Huge dilation: the effective filter size overflows.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {3, 3, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               with(same, "dilations", ilist({1, std::numeric_limits<int64_t>::max(), 1, 1})), Code::InvalidArgument,
               {"overflows"});
  // Huge stride: a clean InvalidArgument (computed size 1, or the checked arithmetic refusing it).
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {3, 3, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               conv({1, std::numeric_limits<int64_t>::max(), 1, 1}, "SAME"), Code::InvalidArgument, {"stride"});
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {3, 3, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               conv({1, std::numeric_limits<int64_t>::max(), 1, 1}, "VALID"), Code::InvalidArgument, {"stride"});
}

TEST_CASE("hostile: zero and negative strides and dilations; batch and depth strides") {
  Named bi = {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
              {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}};
  Named bf = {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({2, 2, 1, 1})},
              {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}};
  Named di = {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
              {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}};
  Named df = {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({2, 2, 1, 1})},
              {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}};
  Named fwd = {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter", filled(F, {2, 2, 1, 1}, 1)}};
  struct Case {
    const char* op;
    const Named* in;
    Code batch_depth;  // TF: Unimplemented for Conv2D / Conv2DBackpropInput, else InvalidArgument
  };
  for (const Case& c : {Case{"Conv2DBackpropInput", &bi, Code::Unimplemented},
                        Case{"Conv2DBackpropFilter", &bf, Code::InvalidArgument},
                        Case{"DepthwiseConv2dNativeBackpropInput", &di, Code::InvalidArgument},
                        Case{"DepthwiseConv2dNativeBackpropFilter", &df, Code::InvalidArgument},
                        Case{"Conv2D", &fwd, Code::Unimplemented},
                        Case{"DepthwiseConv2dNative", &fwd, Code::InvalidArgument}}) {
    CAPTURE(c.op);
    for (const char* fmt : {"NHWC", "NCHW"}) {
      CAPTURE(fmt);
      bool nchw = std::string(fmt) == "NCHW";
      int h = nchw ? 2 : 1, w = nchw ? 3 : 2, ch = nchw ? 1 : 3;
      for (const char* attr : {"strides", "dilations"}) {
        CAPTURE(attr);
        auto attrs = [&](int index, int64_t value) {
          std::vector<int64_t> v = {1, 1, 1, 1};
          v[index] = value;
          return with(with(conv({1, 1, 1, 1}, "SAME"), "data_format", AttrValue(fmt)), attr, ilist(v));
        };
        for (int64_t bad : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
          expect_error(c.op, *c.in, attrs(h, bad), Code::InvalidArgument,
                       {std::string(attr) + "[" + std::to_string(h) + "] must be > 0, got " + std::to_string(bad)});
          expect_error(c.op, *c.in, attrs(w, bad), Code::InvalidArgument,
                       {std::string(attr) + "[" + std::to_string(w) + "] must be > 0, got " + std::to_string(bad)});
        }
        expect_error(c.op, *c.in, attrs(0, 2), c.batch_depth, {attr, "batch and depth"});
        expect_error(c.op, *c.in, attrs(ch, 2), c.batch_depth, {attr, "batch and depth"});
        expect_error(c.op, *c.in, attrs(0, 0), c.batch_depth, {attr, "batch and depth"});
        expect_error(c.op, *c.in, attrs(ch, -1), c.batch_depth, {attr, "batch and depth"});
      }
    }
  }
}

TEST_CASE("hostile: NaN and Inf data propagate identically on every backend") {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  // 1x1 filter, stride 1: dx = dy * w, elementwise.
  Host dy = f32({1, 2, 2, 1}, {nan, inf, -inf, 1});
  auto r = expect_ok("Conv2DBackpropInput",
                     {{"input_sizes", ivec({1, 2, 2, 1})}, {"filter", f32({1, 1, 1, 1}, {2})}, {"out_backprop", dy}},
                     conv({1, 1, 1, 1}, "VALID"), {{1, 2, 2, 1}});
  for (const Outcome& o : r) {
    CAPTURE(o.backend);
    auto v = test::values(o.outputs[0].second);
    CHECK(std::isnan(v[0]));
    CHECK(v[1] == inf);
    CHECK(v[2] == -inf);
    CHECK(v[3] == 2);
  }
  // Inf * 0 in a filter gradient: NaN, not a crash or a skipped term.
  r = expect_ok("Conv2DBackpropFilter",
                {{"input", f32({1, 1, 2, 1}, {inf, 1})}, {"filter_sizes", ivec({1, 1, 1, 1})},
                 {"out_backprop", f32({1, 1, 2, 1}, {0, 1})}},
                conv({1, 1, 1, 1}, "VALID"), {{1, 1, 1, 1}});
  for (const Outcome& o : r) CHECK(std::isnan(test::values(o.outputs[0].second)[0]));
  // Batch norm gradient with NaN in x and Inf variance: every output is produced, no trap.
  Named bn = {{"y_backprop", f32({1, 1, 2, 2}, {1, 1, 1, 1})},
              {"x", f32({1, 1, 2, 2}, {nan, 1, 2, 3})},
              {"scale", f32({2}, {1, 1})},
              {"reserve_space_1", f32({2}, {0, 0})},
              {"reserve_space_2", f32({2}, {inf, 1})}};
  for (bool training : {true, false}) {
    r = expect_ok("FusedBatchNormGradV2", bn, {{"is_training", AttrValue(training)}}, {{1, 1, 2, 2}, {2}, {2}, {0}, {0}});
    for (const Outcome& o : r) {
      CAPTURE(o.backend);
      CHECK(std::isnan(test::values(o.outputs[1].second)[0]));  // scale_backprop of channel 0 sees the NaN
      CHECK(test::values(o.outputs[2].second)[0] == 2);         // offset_backprop = sum dy
    }
  }
  // Forward batch norm with NaN epsilon and Inf data.
  r = expect_ok("FusedBatchNormV3",
                {{"x", f32({1, 1, 2, 1}, {inf, 1})}, {"scale", f32({1}, {1})}, {"offset", f32({1}, {0})},
                 {"mean", shaped(F, {0})}, {"variance", shaped(F, {0})}},
                {{"epsilon", AttrValue(nan)}}, {{1, 1, 2, 1}, {1}, {1}, {1}, {1}, {0}});
  for (const Outcome& o : r) CHECK(std::isnan(test::values(o.outputs[0].second)[1]));
  // Fractional pooling gradient of NaN.
  r = expect_ok("FractionalAvgPoolGrad",
                {{"orig_input_tensor_shape", i64({1, 2, 2, 1})}, {"out_backprop", f32({1, 1, 1, 1}, {nan})},
                 {"row_pooling_sequence", i64({0, 2})}, {"col_pooling_sequence", i64({0, 2})}},
                {{"overlapping", AttrValue(false)}}, {{1, 2, 2, 1}});
  for (const Outcome& o : r)
    for (double v : test::values(o.outputs[0].second)) CHECK(std::isnan(v));
}

TEST_CASE("hostile: empty tensors of every operand") {
  Attrs same = conv({1, 1, 1, 1}, "SAME");
  // Conv2DBackpropInput: empty output, empty filter (out_c 0), empty out_backprop spatial.
  auto r = expect_ok("Conv2DBackpropInput",
                     {{"input_sizes", ivec({1, 0, 4, 2})}, {"filter", filled(F, {3, 3, 2, 3}, 1)},
                      {"out_backprop", shaped(F, {1, 0, 4, 3})}},
                     same, {{1, 0, 4, 2}});
  expect_empty(r, 0);
  r = expect_ok("Conv2DBackpropInput",
                {{"input_sizes", ivec({1, 4, 4, 2})}, {"filter", shaped(F, {3, 3, 2, 0})},
                 {"out_backprop", shaped(F, {1, 4, 4, 0})}},
                same, {{1, 4, 4, 2}});
  expect_zeros(r, 0);
  r = expect_ok("Conv2DBackpropInput",
                {{"input_sizes", ivec({1, 4, 4, 2})}, {"filter", shaped(F, {0, 3, 2, 3})},
                 {"out_backprop", filled(F, {1, 4, 4, 3}, 1)}},
                same, {{1, 4, 4, 2}});
  expect_zeros(r, 0);
  r = expect_ok("Conv2DBackpropInputV2",
                {{"input", shaped(F, {2, 4, 0, 2})}, {"filter", filled(F, {3, 3, 2, 3}, 1)},
                 {"out_backprop", shaped(F, {2, 4, 0, 3})}},
                same, {{2, 4, 0, 2}});
  expect_empty(r, 0);
  // Input depth 0 (and thus filter depth 0): TF's "filter depth must be > 0".
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 0})}, {"filter", shaped(F, {3, 3, 0, 3})},
                {"out_backprop", filled(F, {1, 4, 4, 3}, 1)}},
               same, Code::InvalidArgument, {"filter depth"});
  // Conv2DBackpropFilter: empty filter (empty result), empty input spatial (zeros).
  r = expect_ok("Conv2DBackpropFilter",
                {{"input", filled(F, {1, 4, 4, 2}, 1)}, {"filter_sizes", ivec({3, 3, 2, 0})},
                 {"out_backprop", shaped(F, {1, 4, 4, 0})}},
                same, {{3, 3, 2, 0}});
  expect_empty(r, 0);
  r = expect_ok("Conv2DBackpropFilter",
                {{"input", shaped(F, {1, 0, 4, 2})}, {"filter_sizes", ivec({3, 3, 2, 3})},
                 {"out_backprop", shaped(F, {1, 0, 4, 3})}},
                same, {{3, 3, 2, 3}});
  expect_zeros(r, 0);
  // filter_sizes with no entries.
  expect_error("Conv2DBackpropFilter",
               {{"input", filled(F, {1, 4, 4, 2}, 1)}, {"filter_sizes", shaped(DType::int32, {0})},
                {"out_backprop", filled(F, {1, 4, 4, 3}, 1)}},
               same, Code::InvalidArgument, {"filter_sizes"});
  expect_error("DepthwiseConv2dNativeBackpropFilter",
               {{"input", filled(F, {1, 4, 4, 2}, 1)}, {"filter_sizes", shaped(DType::int32, {0})},
                {"out_backprop", filled(F, {1, 4, 4, 2}, 1)}},
               same, Code::InvalidArgument, {"filter_sizes"});
  expect_error("DepthwiseConv2dNativeBackpropInput",
               {{"input_sizes", shaped(DType::int32, {0})}, {"filter", filled(F, {3, 3, 2, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 2}, 1)}},
               same, Code::InvalidArgument, {"input_sizes"});
  // Depthwise: empty output channels (C = 0).
  r = expect_ok("DepthwiseConv2dNativeBackpropInput",
                {{"input_sizes", ivec({1, 4, 4, 0})}, {"filter", shaped(F, {3, 3, 0, 2})},
                 {"out_backprop", shaped(F, {1, 4, 4, 0})}},
                same, {{1, 4, 4, 0}});
  expect_empty(r, 0);
  r = expect_ok("DepthwiseConv2dNativeBackpropInput",
                {{"input_sizes", ivec({1, 4, 4, 2})}, {"filter", shaped(F, {3, 3, 2, 0})},
                 {"out_backprop", shaped(F, {1, 4, 4, 0})}},
                same, {{1, 4, 4, 2}});
  expect_zeros(r, 0);
  // Forward conv ops with empty operands.
  r = expect_ok("Conv2D", {{"input", shaped(F, {0, 4, 4, 2})}, {"filter", filled(F, {3, 3, 2, 3}, 1)}}, same,
                {{0, 4, 4, 3}});
  expect_empty(r, 0);
  r = expect_ok("Conv2D", {{"input", filled(F, {1, 4, 4, 2}, 1)}, {"filter", shaped(F, {0, 3, 2, 3})}}, same,
                {{1, 4, 4, 3}});
  expect_zeros(r, 0);
  r = expect_ok("DepthwiseConv2dNative", {{"input", shaped(F, {1, 4, 0, 2})}, {"filter", filled(F, {3, 3, 2, 1}, 1)}},
                same, {{1, 4, 0, 2}});
  expect_empty(r, 0);
  // FusedBatchNormGrad: empty x -> empty dx, zero scale/offset gradients; zero channels.
  for (const char* fmt : {"NHWC", "NCHW"}) {
    CAPTURE(fmt);
    bool nchw = std::string(fmt) == "NCHW";
    std::vector<int64_t> xs = nchw ? std::vector<int64_t>{0, 3, 2, 2} : std::vector<int64_t>{0, 2, 2, 3};
    for (bool training : {true, false}) {
      r = expect_ok("FusedBatchNormGradV3",
                    {{"y_backprop", shaped(F, xs)}, {"x", shaped(F, xs)}, {"scale", filled(F, {3}, 1)},
                     {"reserve_space_1", filled(F, {3}, 1)}, {"reserve_space_2", filled(F, {3}, 1)},
                     {"reserve_space_3", shaped(F, {0})}},
                    {{"data_format", AttrValue(fmt)}, {"is_training", AttrValue(training)}},
                    {xs, {3}, {3}, {0}, {0}});
      expect_empty(r, 0);
      expect_zeros(r, 1);
      expect_zeros(r, 2);
    }
  }
  r = expect_ok("FusedBatchNormGrad",
                {{"y_backprop", shaped(F, {2, 2, 2, 0})}, {"x", shaped(F, {2, 2, 2, 0})}, {"scale", shaped(F, {0})},
                 {"reserve_space_1", shaped(F, {0})}, {"reserve_space_2", shaped(F, {0})}},
                {}, {{2, 2, 2, 0}, {0}, {0}, {0}, {0}});
  // FusedBatchNorm forward: empty x -> empty y, NaN statistics (ops.md 6.3 step 6).
  r = expect_ok("FusedBatchNormV3",
                {{"x", shaped(F, {0, 2, 2, 2})}, {"scale", filled(F, {2}, 1)}, {"offset", filled(F, {2}, 0)},
                 {"mean", shaped(F, {0})}, {"variance", shaped(F, {0})}},
                {}, {{0, 2, 2, 2}, {2}, {2}, {2}, {2}, {0}});
  for (const Outcome& o : r) {
    CHECK(std::isnan(test::values(o.outputs[1].second)[0]));
    CHECK(std::isnan(test::values(o.outputs[2].second)[1]));
  }
}

TEST_CASE("hostile: mismatched and unsupported dtypes") {
  Attrs same = conv({1, 1, 1, 1}, "SAME");
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(D, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"out_backprop", "float32", "float64"});
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", f32({4}, {1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"input_sizes", "int32 or int64"});
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(DType::int32, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(DType::int32, {1, 4, 4, 1}, 1)}},
               same, Code::Unimplemented, {"int32"});
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(DType::int64, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(DType::int64, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"filter", "int64"});
  expect_error("Conv2DBackpropInputV2",
               {{"input", filled(D, {1, 4, 4, 1}, 1)}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"'input'", "float32"});
  expect_error("Conv2DBackpropFilter",
               {{"input", filled(DType::int32, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({2, 2, 1, 1})},
                {"out_backprop", filled(DType::int32, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"input", "int32"});
  expect_error("Conv2DBackpropFilterV2",
               {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter", filled(DType::float16, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"'filter'", "float16"});
  expect_error("DepthwiseConv2dNativeBackpropFilter",
               {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter_sizes", ivec({2, 2, 1, 1})},
                {"out_backprop", filled(DType::bfloat16, {1, 4, 4, 1}, 1)}},
               same, Code::InvalidArgument, {"out_backprop", "bfloat16"});
  // T attribute disagreeing with the tensors, or not a dtype.
  Named conv_in = {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                   {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}};
  expect_error("Conv2DBackpropInput", conv_in, with(same, "T", AttrValue("float64")), Code::InvalidArgument, {"T"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "T", AttrValue("complex64")), Code::InvalidArgument, {"'T'"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "T", AttrValue(int64_t{1})), Code::InvalidArgument, {"'T'"});
  // Batch norm: FusedBatchNorm/Grad V1 are float32 only in TF (float64 is a gradrt extension);
  // V2/V3 take float32 parameters with half data.
  Host h = filled(DType::float16, {1, 2, 2, 2}, 1);
  expect_error("FusedBatchNormGradV2",
               {{"y_backprop", h}, {"x", h}, {"scale", filled(DType::float16, {2}, 1)},
                {"reserve_space_1", filled(F, {2}, 0)}, {"reserve_space_2", filled(F, {2}, 1)}},
               {}, Code::InvalidArgument, {"scale", "float32"});
  expect_error("FusedBatchNormGrad",
               {{"y_backprop", h}, {"x", h}, {"scale", filled(F, {2}, 1)}, {"reserve_space_1", filled(F, {2}, 0)},
                {"reserve_space_2", filled(F, {2}, 1)}},
               {}, Code::InvalidArgument, {"x", "float16"});
  expect_error("FusedBatchNormGradV2",
               {{"y_backprop", filled(F, {1, 2, 2, 2}, 1)}, {"x", h}, {"scale", filled(F, {2}, 1)},
                {"reserve_space_1", filled(F, {2}, 0)}, {"reserve_space_2", filled(F, {2}, 1)}},
               {}, Code::InvalidArgument, {"y_backprop", "float16"});
  expect_error("FusedBatchNormV3",
               {{"x", filled(DType::int32, {1, 2, 2, 2}, 1)}, {"scale", filled(F, {2}, 1)}, {"offset", filled(F, {2}, 1)},
                {"mean", shaped(F, {0})}, {"variance", shaped(F, {0})}},
               {}, Code::InvalidArgument, {"x", "int32"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", f32({4}, {1, 2, 2, 1})}, {"out_backprop", filled(F, {1, 1, 1, 1}, 1)},
                {"row_pooling_sequence", i64({0, 2})}, {"col_pooling_sequence", i64({0, 2})}},
               {}, Code::InvalidArgument, {"orig_input_tensor_shape", "int32 or int64"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 2, 2, 1})}, {"out_backprop", filled(DType::bfloat16, {1, 1, 1, 1}, 1)},
                {"row_pooling_sequence", i64({0, 2})}, {"col_pooling_sequence", i64({0, 2})}},
               {}, Code::InvalidArgument, {"out_backprop", "bfloat16"});
}

TEST_CASE("hostile: missing, unknown and duplicate-meaning inputs; unknown ops and backends") {
  Attrs same = conv({1, 1, 1, 1}, "SAME");
  Host sizes = ivec({1, 4, 4, 1}), w = filled(F, {2, 2, 1, 1}, 1), dy = filled(F, {1, 4, 4, 1}, 1);
  expect_error("Conv2DBackpropInput", {{"input_sizes", sizes}, {"out_backprop", dy}}, same, Code::InvalidArgument,
               {"missing input 'filter'"});
  expect_error("Conv2DBackpropInput", {{"filter", w}, {"out_backprop", dy}}, same, Code::InvalidArgument,
               {"missing input 'input_sizes'"});
  expect_error("Conv2DBackpropInput", {{"input_sizes", sizes}, {"filter", w}}, same, Code::InvalidArgument,
               {"missing input 'out_backprop'"});
  expect_error("Conv2DBackpropInput", {}, same, Code::InvalidArgument, {"missing input"});
  // V1's input name on V2 (and the reverse) is an unknown input.
  expect_error("Conv2DBackpropInputV2", {{"input_sizes", sizes}, {"filter", w}, {"out_backprop", dy}}, same,
               Code::InvalidArgument, {"unknown input 'input_sizes'"});
  expect_error("Conv2DBackpropFilter",
               {{"input", dy}, {"filter", w}, {"filter_sizes", ivec({2, 2, 1, 1})}, {"out_backprop", dy}}, same,
               Code::InvalidArgument, {"unknown input 'filter'"});
  expect_error("FusedBatchNormGradV2",
               {{"y_backprop", dy}, {"x", dy}, {"scale", filled(F, {1}, 1)}, {"reserve_space_1", filled(F, {1}, 1)},
                {"reserve_space_2", filled(F, {1}, 1)}, {"reserve_space_3", shaped(F, {0})}},
               {}, Code::InvalidArgument, {"unknown input 'reserve_space_3'"});
  expect_error("FractionalAvgPool", {{"value", dy}, {"", dy}}, {{"pooling_ratio", flist({1, 2, 2, 1})}},
               Code::InvalidArgument, {"unknown input ''"});
  // Unknown op: NotFound naming it.
  for (const char* op : {"Conv2DBackpropInputV3", "", "conv2d_backprop_input", "MaxPoolGrad"}) {
    gradrt::Outputs out;
    Status s = gradrt::run_op(op, {}, {}, &out);
    CAPTURE(op);
    CHECK(s.code() == Code::NotFound);
    CHECK(contains(s.message(), std::string("'") + op + "'"));
    CHECK(out.empty());
  }
  // Unknown backend: NotFound naming it; an impossible thread count: InvalidArgument.
  gradrt::Inputs in = {{"input_sizes", sizes.view()}, {"filter", w.view()}, {"out_backprop", dy.view()}};
  gradrt::Outputs out;
  gradrt::RunOptions o;
  o.backend = "tpu";
  Status s = gradrt::run_op("Conv2DBackpropInput", in, same, &out, o);
  CHECK(s.code() == Code::NotFound);
  CHECK(contains(s.message(), "tpu"));
  CHECK(out.empty());
  o.backend = "cpu";
  o.threads = -3;
  s = gradrt::run_op("Conv2DBackpropInput", in, same, &out, o);
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(contains(s.message(), "threads"));
  CHECK(out.empty());
  // A null outputs pointer.
  s = gradrt::run_op("Conv2DBackpropInput", in, same, nullptr);
  CHECK(s.code() == Code::InvalidArgument);
  // Vulkan when it cannot run: Unavailable (or it runs).
  bool vk = false;
  for (const auto& b : gradrt::backends()) vk = vk || (b.name == "vulkan" && b.available);
  if (!vk) {
    o.backend = "vulkan";
    o.threads = 0;
    s = gradrt::run_op("Conv2DBackpropInput", in, same, &out, o);
    CHECK(s.code() == Code::Unavailable);
    CHECK(out.empty());
  }
}

TEST_CASE("hostile: unknown attributes and wrong attribute types") {
  Named conv_in = {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                   {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}};
  Attrs same = conv({1, 1, 1, 1}, "SAME");
  expect_error("Conv2DBackpropInput", conv_in, with(same, "stride", ilist({1, 1, 1, 1})), Code::InvalidArgument,
               {"unknown attribute 'stride'"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "", AttrValue(1)), Code::InvalidArgument,
               {"unknown attribute ''"});
  // use_cudnn_on_gpu belongs to the conv ops, not the depthwise ones.
  expect_error("DepthwiseConv2dNativeBackpropInput", conv_in, with(same, "use_cudnn_on_gpu", AttrValue(true)),
               Code::InvalidArgument, {"unknown attribute 'use_cudnn_on_gpu'"});
  expect_error("Conv2DBackpropInput", conv_in, {{"padding", AttrValue("SAME")}}, Code::InvalidArgument,
               {"missing required attribute 'strides'"});
  expect_error("Conv2DBackpropInput", conv_in, {{"strides", ilist({1, 1, 1, 1})}}, Code::InvalidArgument,
               {"padding"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "strides", AttrValue("1,1,1,1")), Code::InvalidArgument,
               {"attribute 'strides' must be a list of integers"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "strides", flist({1, 1.5, 1, 1})), Code::InvalidArgument,
               {"attribute 'strides' must be a list of integers"});
  AttrValue nested = ilist({1, 1, 1});
  nested.list.push_back(ilist({1}));
  expect_error("Conv2DBackpropInput", conv_in, with(same, "strides", nested), Code::InvalidArgument,
               {"attribute 'strides' must be a list of integers"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "strides", flist({1, 1e300, 1, 1})), Code::InvalidArgument,
               {"attribute 'strides' must be a list of integers"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "padding", AttrValue(int64_t{3})), Code::InvalidArgument,
               {"padding"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "padding", AttrValue("same")), Code::InvalidArgument,
               {"padding"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "data_format", AttrValue(int64_t{1})), Code::InvalidArgument,
               {"'data_format' must be a string"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "data_format", AttrValue("NDHWC")), Code::InvalidArgument,
               {"data_format"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "use_cudnn_on_gpu", AttrValue(int64_t{1})),
               Code::InvalidArgument, {"'use_cudnn_on_gpu' must be true or false"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "explicit_paddings", AttrValue("none")), Code::InvalidArgument,
               {"explicit_paddings"});
  expect_error("Conv2DBackpropInput", conv_in, with(same, "dilations", AttrValue()), Code::InvalidArgument,
               {"dilations"});
  Host x = filled(F, {1, 2, 2, 2}, 1), c = filled(F, {2}, 1);
  Named bn = {{"y_backprop", x}, {"x", x}, {"scale", c}, {"reserve_space_1", c}, {"reserve_space_2", c}};
  expect_error("FusedBatchNormGradV2", bn, {{"epsilon", AttrValue("0.001")}}, Code::InvalidArgument,
               {"'epsilon' must be a number"});
  expect_error("FusedBatchNormGradV2", bn, {{"is_training", AttrValue(int64_t{1})}}, Code::InvalidArgument,
               {"'is_training' must be true or false"});
  expect_error("FusedBatchNormGradV2", bn, {{"exponential_avg_factor", AttrValue(1.0)}}, Code::InvalidArgument,
               {"unknown attribute 'exponential_avg_factor'"});
  expect_error("FusedBatchNormGradV2", bn, {{"data_format", AttrValue("NDHWC")}}, Code::InvalidArgument,
               {"data_format"});
  Named fp = {{"value", filled(F, {1, 4, 4, 1}, 1)}};
  expect_error("FractionalAvgPool", fp, {{"pooling_ratio", AttrValue(2.0)}}, Code::InvalidArgument,
               {"'pooling_ratio' must be a list of numbers"});
  AttrValue mixed = flist({1, 2, 2});
  mixed.list.push_back(AttrValue("1"));
  expect_error("FractionalAvgPool", fp, {{"pooling_ratio", mixed}}, Code::InvalidArgument,
               {"'pooling_ratio' must be a list of numbers"});
  expect_error("FractionalAvgPool", fp, {{"pooling_ratio", flist({1, 2, 2, 1})}, {"seed", AttrValue(1.5)}},
               Code::InvalidArgument, {"'seed' must be an integer"});
  expect_error("FractionalAvgPool", fp, {{"pooling_ratio", flist({1, 2, 2, 1})}, {"overlapping", AttrValue("true")}},
               Code::InvalidArgument, {"'overlapping' must be true or false"});
  Named fpg = {{"orig_input_tensor_shape", i64({1, 2, 2, 1})}, {"out_backprop", filled(F, {1, 1, 1, 1}, 1)},
               {"row_pooling_sequence", i64({0, 2})}, {"col_pooling_sequence", i64({0, 2})}};
  expect_error("FractionalAvgPoolGrad", fpg, {{"overlapping", AttrValue(int64_t{0})}}, Code::InvalidArgument,
               {"'overlapping' must be true or false"});
  expect_error("FractionalAvgPoolGrad", fpg, {{"pooling_ratio", flist({1, 2, 2, 1})}}, Code::InvalidArgument,
               {"unknown attribute 'pooling_ratio'"});
}

TEST_CASE("hostile: ResourceExhausted with a small max_tensor_elements, no partial output") {
  LimitGuard guard;
  gradrt::set_max_tensor_elements(10);
  Attrs same = conv({1, 1, 1, 1}, "SAME");
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::ResourceExhausted, {"output", "16 elements", "limit of 10"});
  expect_error("Conv2DBackpropFilter",
               {{"input", filled(F, {1, 2, 2, 3}, 1)}, {"filter_sizes", ivec({2, 2, 3, 1})},
                {"out_backprop", filled(F, {1, 2, 2, 1}, 1)}},
               same, Code::ResourceExhausted, {"output"});
  expect_error("DepthwiseConv2dNativeBackpropInput",
               {{"input_sizes", ivec({1, 4, 4, 1})}, {"filter", filled(F, {2, 2, 1, 1}, 1)},
                {"out_backprop", filled(F, {1, 4, 4, 1}, 1)}},
               same, Code::ResourceExhausted, {"output"});
  expect_error("DepthwiseConv2dNativeBackpropFilter",
               {{"input", filled(F, {1, 2, 2, 4}, 1)}, {"filter_sizes", ivec({2, 2, 4, 1})},
                {"out_backprop", filled(F, {1, 2, 2, 4}, 1)}},
               same, Code::ResourceExhausted, {"output"});
  expect_error("Conv2D", {{"input", filled(F, {1, 4, 4, 1}, 1)}, {"filter", filled(F, {2, 2, 1, 1}, 1)}}, same,
               Code::ResourceExhausted, {"output"});
  expect_error("FractionalAvgPoolGrad",
               {{"orig_input_tensor_shape", i64({1, 4, 4, 1})}, {"out_backprop", filled(F, {1, 1, 1, 1}, 1)},
                {"row_pooling_sequence", i64({0, 4})}, {"col_pooling_sequence", i64({0, 4})}},
               {}, Code::ResourceExhausted, {"output"});
  // The first output fits, a later one does not: nothing is returned.
  // FractionalAvgPool: output [1,10,1,1] (10 elements), row_pooling_sequence 11.
  expect_error("FractionalAvgPool", {{"value", filled(F, {1, 10, 1, 1}, 1)}}, {{"pooling_ratio", flist({1, 1, 1, 1})}},
               Code::ResourceExhausted, {"row_pooling_sequence"});
  // FusedBatchNorm: y is empty, the statistics [20] are not.
  expect_error("FusedBatchNormV3",
               {{"x", shaped(F, {0, 1, 1, 20})}, {"scale", filled(F, {20}, 1)}, {"offset", filled(F, {20}, 0)},
                {"mean", shaped(F, {0})}, {"variance", shaped(F, {0})}},
               {}, Code::ResourceExhausted, {"batch_mean"});
  // FusedBatchNormGrad: x_backprop is empty, scale_backprop [20] is not.
  Host c20 = filled(F, {20}, 1);
  expect_error("FusedBatchNormGradV2",
               {{"y_backprop", shaped(F, {0, 1, 1, 20})}, {"x", shaped(F, {0, 1, 1, 20})}, {"scale", c20},
                {"reserve_space_1", c20}, {"reserve_space_2", c20}},
               {}, Code::ResourceExhausted, {"scale_backprop"});
  // At the limit exactly: fine.
  auto r = expect_ok("Conv2DBackpropInput",
                     {{"input_sizes", ivec({1, 2, 5, 1})}, {"filter", filled(F, {1, 1, 1, 1}, 1)},
                      {"out_backprop", filled(F, {1, 2, 5, 1}, 1)}},
                     same, {{1, 2, 5, 1}});
  // The typed API reports the same and leaves its output untouched.
  gradrt::Tensor dx;
  Host sizes = ivec({1, 4, 4, 1}), w = filled(F, {2, 2, 1, 1}, 1), dy = filled(F, {1, 4, 4, 1}, 1);
  Status s = gradrt::conv2d_backprop_input(sizes.view(), w.view(), dy.view(),
                                           gradrt::ConvAttrs().Strides({1, 1, 1, 1}).Padding("SAME"), &dx);
  CHECK(s.code() == Code::ResourceExhausted);
  CHECK(dx.num_elements() == 0);
  CHECK(dx.data() == nullptr);
  // Tensor::allocate itself.
  gradrt::Tensor t;
  CHECK(gradrt::Tensor::allocate(F, {11}, &t).code() == Code::ResourceExhausted);
  CHECK(t.data() == nullptr);
  CHECK(gradrt::Tensor::allocate(F, {10}, &t).ok());
  CHECK(gradrt::Tensor::allocate(F, {-1}, &t).code() == Code::InvalidArgument);
  CHECK(gradrt::Tensor::allocate(F, {kBig, kBig, kBig}, &t).code() == Code::InvalidArgument);
  CHECK(gradrt::Tensor::allocate(F, {0, kBig, kBig, kBig}, &t).code() == Code::InvalidArgument);
}

TEST_CASE("hostile: the T=bfloat16 attribute with non-float32 storage") {
  Named in = {{"input_sizes", ivec({1, 2, 2, 1})}, {"filter", filled(D, {1, 1, 1, 1}, 1)},
              {"out_backprop", filled(D, {1, 2, 2, 1}, 1)}};
  expect_error("Conv2DBackpropInput", in, with(conv({1, 1, 1, 1}, "SAME"), "T", AttrValue("bfloat16")),
               Code::InvalidArgument, {"T=bfloat16", "float64"});
}

TEST_CASE("hostile: integer FractionalAvgPoolGrad beyond the dtype's range saturates") {
  // Overlapping cells add INT32_MAX/2 + INT32_MAX into input row 1: more than int32 holds.
  // TF's cast is undefined there; gradrt saturates (and truncates toward zero in range).
  Host dy{DType::int32, {1, 2, 1, 1}, {}};
  for (int32_t v : {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::max()}) {
    unsigned char b[4];
    std::memcpy(b, &v, 4);
    dy.bytes.insert(dy.bytes.end(), b, b + 4);
  }
  auto r = expect_ok("FractionalAvgPoolGrad",
                     {{"orig_input_tensor_shape", i64({1, 2, 1, 1})}, {"out_backprop", dy},
                      {"row_pooling_sequence", i64({0, 1, 2})}, {"col_pooling_sequence", i64({0, 1})}},
                     {{"overlapping", AttrValue(true)}}, {{1, 2, 1, 1}});
  for (const Outcome& o : r) {
    CAPTURE(o.backend);
    auto v = test::values(o.outputs[0].second);
    CHECK(v[0] == 1073741823);
    CHECK(v[1] == std::numeric_limits<int32_t>::max());
  }
  Host dy64{DType::int64, {1, 2, 1, 1}, {}};
  for (int64_t v : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min()}) {
    unsigned char b[8];
    std::memcpy(b, &v, 8);
    dy64.bytes.insert(dy64.bytes.end(), b, b + 8);
  }
  r = expect_ok("FractionalAvgPoolGrad",
                {{"orig_input_tensor_shape", i64({1, 2, 1, 1})}, {"out_backprop", dy64},
                 {"row_pooling_sequence", i64({0, 1, 2})}, {"col_pooling_sequence", i64({0, 1})}},
                {{"overlapping", AttrValue(true)}}, {{1, 2, 1, 1}});
  for (const Outcome& o : r) {
    CAPTURE(o.backend);
    const auto* p = o.outputs[0].second.data_as<int64_t>();
    CHECK(p[0] == std::numeric_limits<int64_t>::min() / 2);
    CHECK(p[1] == std::numeric_limits<int64_t>::min());
  }
}

TEST_CASE("hostile: a raised element limit never wraps the byte count") {
  LimitGuard guard;
  gradrt::set_max_tensor_elements(std::numeric_limits<int64_t>::max());
  gradrt::Tensor t;
  // 2^61 float64 = 2^64 bytes, 2^62 float32 = 2^64 bytes: refused, not a wrapped-around small buffer.
  CHECK(gradrt::Tensor::allocate(D, {int64_t{1} << 61}, &t).code() == Code::ResourceExhausted);
  CHECK(gradrt::Tensor::allocate(F, {int64_t{1} << 62}, &t).code() == Code::ResourceExhausted);
  CHECK(gradrt::Tensor::allocate(DType::float16, {int64_t{1} << 61, 2}, &t).code() == Code::ResourceExhausted);
  CHECK(gradrt::Tensor::allocate(DType::float16, {int64_t{1} << 62, 2}, &t).code() == Code::InvalidArgument);
  CHECK(t.data() == nullptr);
  // Through an op: the output of Conv2DBackpropInput with an empty filter.
  expect_error("Conv2DBackpropInput",
               {{"input_sizes", i64({int64_t{1} << 61, 1, 1, 1})}, {"filter", shaped(D, {1, 1, 1, 0})},
                {"out_backprop", shaped(D, {int64_t{1} << 61, 1, 1, 0})}},
               conv({1, 1, 1, 1}, "SAME"), Code::ResourceExhausted, {"output"});
}

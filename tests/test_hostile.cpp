// Hostile inputs (issue 6): every advisory proof-of-concept of ops.md §7 (rows 1-15), the
// TensorFlow crash reports listed after it, the error-path tests that ops.md names, and our
// own malformed inputs: the cases are data (tests/data/hostile/*.json, also read by
// web/test/errors.test.mjs). Each case runs on every available backend (reference, cpu,
// vulkan when gradrt::backends() says it can run) and asserts either the exact status code,
// a message naming the op and each expected fragment, and no outputs; or the output shapes
// and the defined zero/empty/NaN results of policy 3. What is not an op call (run options,
// Tensor::allocate, the typed API) stays here as code.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "data.h"
#include "gradrt/gradrt.h"

namespace {

using gradrt::Code;
using gradrt::DType;
using gradrt::Status;
using test::Json;

constexpr int64_t kBig = int64_t{1} << 31;
const DType F = DType::float32;
const DType D = DType::float64;

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

Code code_from_name(const std::string& name) {
  for (Code c : {Code::OK, Code::InvalidArgument, Code::ResourceExhausted, Code::Unimplemented, Code::NotFound,
                 Code::Unavailable, Code::Internal})
    if (name == gradrt::code_name(c)) return c;
  FAIL("unknown status code " << name);
  return Code::Internal;
}

// Restores the element limit when a case ends.
struct LimitGuard {
  int64_t saved = gradrt::max_tensor_elements();
  ~LimitGuard() { gradrt::set_max_tensor_elements(saved); }
};

bool all_zero_bits(const gradrt::Tensor& t) {  // +0.0 bit patterns: "never uninitialised memory"
  const auto* p = static_cast<const unsigned char*>(t.data());
  for (size_t i = 0; i < t.num_bytes(); ++i)
    if (p[i] != 0) return false;
  return true;
}

// The "ok" part of a case: output shapes, then "zeros" / "empty" output indices, whole-output
// "values" and single-element "checks" (index absent: every element).
void check_ok(const Json& ok, const gradrt::Outputs& outputs) {
  const Json& shapes = ok.at("shapes");
  REQUIRE(outputs.size() >= shapes.items.size());
  for (size_t i = 0; i < shapes.items.size(); ++i) CHECK(outputs[i].second.shape() == shapes.items[i].integers());
  if (const Json* zeros = ok.find("zeros"))
    for (const Json& i : zeros->items) {
      const gradrt::Tensor& t = outputs.at(size_t(i.integer())).second;
      CHECK(t.num_elements() > 0);
      CHECK(all_zero_bits(t));
    }
  if (const Json* empty = ok.find("empty"))
    for (const Json& i : empty->items) CHECK(outputs.at(size_t(i.integer())).second.num_elements() == 0);
  if (const Json* values = ok.find("values"))
    for (const Json& v : values->items) {
      const Json *rtol = v.find("rtol"), *atol = v.find("atol");
      test::check_values(outputs.at(size_t(v.at("output").integer())).second, v.at("values"), rtol ? rtol->number() : 0,
                         atol ? atol->number() : 0, "output " + std::to_string(v.at("output").integer()));
    }
  if (const Json* checks = ok.find("checks"))
    for (const Json& c : checks->items) {
      const std::vector<double> got = test::values(outputs.at(size_t(c.at("output").integer())).second);
      const double want = c.at("value").number(), tol = c.find("tol") ? c.at("tol").number() : 0;
      CAPTURE(c.at("output").integer());
      for (size_t k = 0; k < got.size(); ++k) {
        if (c.find("index") && int64_t(k) != c.at("index").integer()) continue;
        CAPTURE(k);
        if (std::isnan(want)) CHECK(std::isnan(got[k]));
        else CHECK(std::fabs(got[k] - want) <= tol * std::max(1.0, std::fabs(want)));
      }
    }
}

void run_case(const Json& c) {
  const std::string op = c.at("op").s;
  gradrt::Inputs in;
  std::vector<test::Host> hosts;
  hosts.reserve(c.at("inputs").fields.size());
  for (const auto& [name, t] : c.at("inputs").fields) {
    hosts.push_back(test::tensor_from_json(t));
    in[name] = hosts.back().view();
  }
  const gradrt::Attrs attrs = test::attrs_from_json(c.at("attrs"));
  LimitGuard guard;
  if (const Json* limit = c.find("max_tensor_elements")) gradrt::set_max_tensor_elements(limit->integer());
  for (const std::string& backend : test::backends()) {
    CAPTURE(backend);
    gradrt::Outputs outputs;
    // A stale entry: run_op must leave `outputs` empty on failure, whatever it held.
    gradrt::Tensor junk;
    REQUIRE(gradrt::Tensor::allocate(F, {1}, &junk).ok());
    outputs.emplace_back("stale", std::move(junk));
    gradrt::RunOptions options;
    options.backend = backend;
    const Status s = gradrt::run_op(op, in, attrs, &outputs, options);
    CAPTURE(s.to_string());
    if (const Json* error = c.find("error")) {
      CHECK(s.code() == code_from_name(error->at("code").s));
      CHECK(outputs.empty());
      CHECK(!s.message().empty());
      CHECK(contains(s.message(), op));
      for (const Json& fragment : error->at("message").items) {
        CAPTURE(fragment.s);
        CHECK(contains(s.message(), fragment.s));
      }
    } else {
      REQUIRE(s.ok());
      check_ok(c.at("ok"), outputs);
    }
  }
}

}  // namespace

TEST_CASE("hostile: every case of tests/data/hostile on every backend") {
  int cases = 0;
  for (const auto& [file, doc] : test::load_data("hostile"))
    for (const Json& c : doc.at("cases").items) {
      const std::string where = file + ": " + c.at("name").s;
      CAPTURE(where);
      run_case(c);
      ++cases;
    }
  MESSAGE(cases << " hostile cases");
  CHECK(cases > 0);
}

TEST_CASE("hostile: unknown backends, impossible thread counts, null outputs") {
  test::Host sizes = test::ints({1, 4, 4, 1}), w = test::make(F, {2, 2, 1, 1}, std::vector<double>(4, 1)),
             dy = test::make(F, {1, 4, 4, 1}, std::vector<double>(16, 1));
  const gradrt::Attrs same = {{"strides", gradrt::AttrValue({1, 1, 1, 1})}, {"padding", gradrt::AttrValue("SAME")}};
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

TEST_CASE("hostile: Tensor::allocate and the typed API under the element limit") {
  LimitGuard guard;
  gradrt::set_max_tensor_elements(10);
  // The typed API reports ResourceExhausted and leaves its output untouched.
  gradrt::Tensor dx;
  test::Host sizes = test::ints({1, 4, 4, 1}), w = test::make(F, {2, 2, 1, 1}, std::vector<double>(4, 1)),
             dy = test::make(F, {1, 4, 4, 1}, std::vector<double>(16, 1));
  Status s = gradrt::conv2d_backprop_input(sizes.view(), w.view(), dy.view(),
                                           gradrt::ConvAttrs().Strides({1, 1, 1, 1}).Padding("SAME"), &dx);
  CHECK(s.code() == Code::ResourceExhausted);
  CHECK(dx.num_elements() == 0);
  CHECK(dx.data() == nullptr);
  gradrt::Tensor t;
  CHECK(gradrt::Tensor::allocate(F, {11}, &t).code() == Code::ResourceExhausted);
  CHECK(t.data() == nullptr);
  CHECK(gradrt::Tensor::allocate(F, {10}, &t).ok());
  CHECK(gradrt::Tensor::allocate(F, {-1}, &t).code() == Code::InvalidArgument);
  CHECK(gradrt::Tensor::allocate(F, {kBig, kBig, kBig}, &t).code() == Code::InvalidArgument);
  CHECK(gradrt::Tensor::allocate(F, {0, kBig, kBig, kBig}, &t).code() == Code::InvalidArgument);
  // A raised limit never wraps the byte count: 2^61 float64 = 2^64 bytes, 2^62 float32 = 2^64
  // bytes are refused, not a wrapped-around small buffer.
  gradrt::set_max_tensor_elements(std::numeric_limits<int64_t>::max());
  gradrt::Tensor u;
  CHECK(gradrt::Tensor::allocate(D, {int64_t{1} << 61}, &u).code() == Code::ResourceExhausted);
  CHECK(gradrt::Tensor::allocate(F, {int64_t{1} << 62}, &u).code() == Code::ResourceExhausted);
  CHECK(gradrt::Tensor::allocate(DType::float16, {int64_t{1} << 61, 2}, &u).code() == Code::ResourceExhausted);
  CHECK(gradrt::Tensor::allocate(DType::float16, {int64_t{1} << 62, 2}, &u).code() == Code::InvalidArgument);
  CHECK(u.data() == nullptr);
}

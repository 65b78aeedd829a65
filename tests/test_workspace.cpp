// The cpu drivers' scratch comes from the plan's workspace (Exec::workspace, sized by the cpu
// backend's workspace_size for the kernel, params and threads): a plan's run never takes
// memory of its own (simd::workspace_fallbacks() stays put), on every ISA this machine runs,
// at 1, 2 and 3 threads, for every golden case and for shapes that reach the drivers' large
// and per-thread buffers. Values: the golden, backend and plan tests.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "data.h"
#include "parallel.h"
#include "simd/cpu_isa.h"
#include "simd/kernels/table.h"
#include "util.h"
#include "variants.h"

namespace {

using gradrt::Attrs;
using gradrt::AttrValue;
using gradrt::DType;
namespace simd = gradrt::simd;

struct MinWorkZero {  // every op on every thread asked for, however small
  int64_t saved = gradrt::min_thread_work_ns();
  MinWorkZero() { gradrt::set_min_thread_work_ns(0); }
  ~MinWorkZero() { gradrt::set_min_thread_work_ns(saved); }
};

// Prepares op on specs of `named` for cpu at `threads` and runs it twice; the number of driver
// calls that lacked workspace.
uint64_t fallbacks_of_plan(const std::string& op, const test::Named& named, const Attrs& attrs, int threads) {
  gradrt::Inputs in;
  for (const auto& [name, host] : named) in[name] = host.view();
  gradrt::RunOptions options;
  options.backend = "cpu";
  options.threads = threads;
  gradrt::Plan plan;
  const uint64_t before = simd::workspace_fallbacks();
  gradrt::Status s = gradrt::prepare(op, in, attrs, &plan, options);
  if (!s.ok()) return 0;  // a hostile or unsupported case: nothing runs
  for (int i = 0; i < 2; ++i) {
    gradrt::Outputs out;
    s = plan.run(in, &out);
    REQUIRE_MESSAGE(s.ok(), (op + ": " + s.to_string()));
  }
  return simd::workspace_fallbacks() - before;
}

Attrs conv_attrs(std::vector<int64_t> strides, const char* padding) {
  return {{"strides", AttrValue(strides)}, {"padding", padding}};
}

}  // namespace

TEST_CASE("cpu: a plan's run takes all its scratch from the plan's workspace (golden cases)") {
  test::IsaGuard guard;
  MinWorkZero zero;
  int runs = 0;
  for (simd::Isa isa : simd::supported_isas()) {
    REQUIRE(simd::set_cpu_isa(isa));
    for (const auto& [file, doc] : test::load_data("golden"))
      for (const test::Json& c : doc.at("cases").items) {
        std::vector<std::pair<std::string, test::Host>> named;
        for (const auto& [name, t] : c.at("inputs").fields) named.emplace_back(name, test::tensor_from_json(t));
        const std::string op = c.at("op").s;
        for (int threads : {1, 2, 3}) {
          CAPTURE(file + ": " + c.at("name").s + " on " + simd::isa_name(isa) + ", threads " + std::to_string(threads));
          CHECK(fallbacks_of_plan(op, named, test::attrs_from_json(c.at("attrs")), threads) == 0);
          ++runs;
        }
      }
  }
  CHECK(runs > 0);
}

TEST_CASE("cpu: a plan's run takes all its scratch from the plan's workspace (large and per-thread buffers)") {
  test::IsaGuard guard;
  MinWorkZero zero;
  std::mt19937 rng(3);
  auto f32 = [&](std::vector<int64_t> shape) { return test::random(DType::float32, std::move(shape), rng); };
  auto f64 = [&](std::vector<int64_t> shape) { return test::random(DType::float64, std::move(shape), rng); };
  struct Case {
    std::string op;
    test::Named named;
    Attrs attrs;
  };
  const std::vector<Case> cases = {
      // More than 64 row tiles of the filter gradient (a table of its own); its K chunks.
      {"Conv2DBackpropFilter",
       test::named("Conv2DBackpropFilter", {f32({1, 9, 9, 320}), test::ints({3, 3, 320, 24}), f32({1, 9, 9, 24})}),
       conv_attrs({1, 1, 1, 1}, "SAME")},
      {"Conv2DBackpropFilter",
       test::named("Conv2DBackpropFilter", {f64({2, 30, 30, 8}), test::ints({1, 1, 8, 40}), f64({2, 30, 30, 40})}),
       conv_attrs({1, 1, 1, 1}, "VALID")},
      // The input gradient: per-thread panels (small) and shared ones (a large filter, little work).
      {"Conv2DBackpropInput",
       test::named("Conv2DBackpropInput", {test::ints({2, 14, 14, 32}), f32({3, 3, 32, 48}), f32({2, 7, 7, 48})}),
       conv_attrs({1, 2, 2, 1}, "SAME")},
      {"Conv2DBackpropInput",
       test::named("Conv2DBackpropInput", {test::ints({1, 2, 2, 256}), f32({3, 3, 256, 256}), f32({1, 2, 2, 256})}),
       conv_attrs({1, 1, 1, 1}, "SAME")},
      {"Conv2D", test::named("Conv2D", {f32({2, 11, 11, 24}), f32({5, 5, 24, 20})}), conv_attrs({1, 1, 1, 1}, "SAME")},
      {"DepthwiseConv2dNative",
       test::named("DepthwiseConv2dNative", {f32({2, 12, 12, 16}), f32({7, 7, 16, 2})}), conv_attrs({1, 1, 1, 1}, "SAME")},
      {"DepthwiseConv2dNativeBackpropInput",
       test::named("DepthwiseConv2dNativeBackpropInput",
                   {test::ints({1, 16, 16, 32}), f32({3, 3, 32, 1}), f32({1, 8, 8, 32})}),
       conv_attrs({1, 2, 2, 1}, "SAME")},
      // Both depthwise filter-gradient paths: 3x3 chunks and the general one (5x5, multiplier 2).
      {"DepthwiseConv2dNativeBackpropFilter",
       test::named("DepthwiseConv2dNativeBackpropFilter",
                   {f32({2, 40, 40, 32}), test::ints({3, 3, 32, 1}), f32({2, 40, 40, 32})}),
       conv_attrs({1, 1, 1, 1}, "SAME")},
      {"DepthwiseConv2dNativeBackpropFilter",
       test::named("DepthwiseConv2dNativeBackpropFilter",
                   {f64({2, 13, 13, 6}), test::ints({5, 5, 6, 2}), f64({2, 13, 13, 12})}),
       conv_attrs({1, 1, 1, 1}, "SAME")},
      {"FusedBatchNormGradV3",
       test::named("FusedBatchNormGradV3", {f32({4, 20, 20, 24}), f32({4, 20, 20, 24}), f32({24}), f32({24}),
                                            f32({24}), test::make(DType::float32, {0}, {})}),
       {{"epsilon", 0.001}}},
      {"FusedBatchNormV3",
       test::named("FusedBatchNormV3", {f32({4, 20, 20, 24}), f32({24}), f32({24}), f32({24}), f32({24})}),
       {{"epsilon", 0.001}}},
      {"BiasAddGrad", test::named("BiasAddGrad", {f32({600, 40})}), {}},
      {"MaxPoolGrad",
       test::named("MaxPoolGrad", {f32({2, 16, 16, 8}), f32({2, 8, 8, 8}), f32({2, 8, 8, 8})}),
       {{"ksize", AttrValue(std::vector<int64_t>{1, 3, 3, 1})}, {"strides", AttrValue(std::vector<int64_t>{1, 2, 2, 1})},
        {"padding", "SAME"}}},
  };
  for (simd::Isa isa : simd::supported_isas()) {
    REQUIRE(simd::set_cpu_isa(isa));
    for (const Case& c : cases)
      for (int threads : {1, 2, 3}) {
        CAPTURE(c.op + " on " + simd::isa_name(isa) + ", threads " + std::to_string(threads));
        CHECK(fallbacks_of_plan(c.op, c.named, c.attrs, threads) == 0);
      }
  }
}

TEST_CASE("cpu: a kernel called without workspace takes memory of its own for the call (and is counted)") {
  // BiasAddGrad's chunk partials: 600 rows x 40 channels, called as a backend kernel with an
  // empty Exec (no plan): the driver allocates for the call, the sums stay the reference's.
  std::mt19937 rng(5);
  const gradrt::BiasParams p{600, 40};
  std::vector<float> dy(600 * 40), got(40), want(40);
  for (float& v : dy) v = float(std::uniform_real_distribution<double>(-1, 1)(rng));
  const uint64_t before = simd::workspace_fallbacks();
  REQUIRE(gradrt::cpu_backend()->bias_add_grad(gradrt::Exec{}, p, dy.data(), got.data()).ok());
  CHECK(simd::workspace_fallbacks() > before);
  REQUIRE(gradrt::reference_backend()->bias_add_grad(gradrt::Exec{}, p, dy.data(), want.data()).ok());
  for (int c = 0; c < 40; ++c) CHECK(got[c] == doctest::Approx(want[c]).epsilon(1e-5));
}

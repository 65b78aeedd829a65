// Plans (core/plan.cpp): prepare once on specs, run many. A plan's run gives the same bits as
// run_op on every backend, with the op's other dtypes and layouts, on changed data; the
// reference backend is the independent check of the values; bad specs fail at prepare and
// mismatched inputs at run, each with a status. The cpu conv input gradient keeps its packed
// filter panels in the plan, packed once per weights version. At prepare the op context refuses
// every data access with a status.
#include <cstring>

#include "op_context.h"
#include "registry.h"
#include "simd/kernels/table.h"
#include "util.h"

namespace {

using gradrt::Attrs;
using gradrt::AttrValue;
using gradrt::Code;
using gradrt::DType;
using gradrt::Inputs;
using gradrt::Outputs;
using gradrt::Plan;
using gradrt::RunOptions;
using gradrt::Status;

// One input of a case: integers (`values`: a shape or sequence input) when `shape` is empty, else
// random numbers of `dtype` and `shape` in [lo, hi).
struct In {
  DType dtype;
  std::vector<int64_t> shape, values;
  double lo = -1, hi = 1;
};
In rnd(DType dtype, std::vector<int64_t> shape, double lo = -1, double hi = 1) { return {dtype, shape, {}, lo, hi}; }
In ints(std::vector<int64_t> values, DType dtype = DType::int32) { return {dtype, {}, values}; }

struct Case {
  std::string op;
  std::vector<In> inputs;  // in the op's order
  Attrs attrs;
  std::vector<test::Host> make(std::mt19937& rng) const {
    std::vector<test::Host> hosts;
    for (const In& in : inputs)
      hosts.push_back(in.shape.empty() ? test::ints(in.values, in.dtype) : test::random(in.dtype, in.shape, rng, in.lo, in.hi));
    return hosts;
  }
};

Attrs conv_attrs(std::vector<int64_t> strides, const char* padding, const char* format = "NHWC") {
  return {{"strides", AttrValue(strides)}, {"padding", padding}, {"data_format", format}};
}

std::vector<Case> cases() {
  const DType f16 = DType::float16, f32 = DType::float32, f64 = DType::float64;
  return {
      {"Conv2DBackpropInput", {ints({2, 8, 8, 16}), rnd(f32, {3, 3, 16, 16}), rnd(f32, {2, 4, 4, 16})},
       conv_attrs({1, 2, 2, 1}, "SAME")},
      {"Conv2DBackpropFilter", {rnd(f16, {1, 16, 8, 8}), ints({3, 3, 16, 8}), rnd(f16, {1, 8, 8, 8})},
       conv_attrs({1, 1, 1, 1}, "SAME", "NCHW")},
      {"DepthwiseConv2dNativeBackpropInput", {ints({1, 9, 9, 8}), rnd(f64, {3, 3, 8, 2}), rnd(f64, {1, 9, 9, 16})},
       conv_attrs({1, 1, 1, 1}, "SAME")},
      {"DepthwiseConv2dNativeBackpropFilter",
       {rnd(f32, {2, 7, 7, 4}), ints({3, 3, 4, 1}, DType::int64), rnd(f32, {2, 3, 3, 4})},
       conv_attrs({1, 2, 2, 1}, "VALID")},
      {"Conv2D", {rnd(DType::bfloat16, {1, 6, 6, 3}), rnd(DType::bfloat16, {2, 2, 3, 5})}, conv_attrs({1, 1, 1, 1}, "VALID")},
      {"FusedBatchNormGradV3",
       {rnd(f32, {2, 5, 3, 3}), rnd(f32, {2, 5, 3, 3}), rnd(f32, {5}, 0.5, 1.5), rnd(f32, {5}), rnd(f32, {5}, 0.5, 1.5),
        rnd(f32, {0})},
       {{"epsilon", 0.001}, {"data_format", "NCHW"}}},
      // Ops whose plan runs the whole op each time (no deferred data phase).
      {"FusedBatchNormV3",
       {rnd(f32, {2, 3, 3, 4}), rnd(f32, {4}), rnd(f32, {4}), rnd(f32, {4}), rnd(f32, {4}, 0.5, 1.5)},
       {{"epsilon", 0.001}, {"is_training", true}}},
      {"FractionalAvgPoolGrad",
       {ints({1, 5, 5, 2}, DType::int64), rnd(f32, {1, 2, 2, 2}), ints({0, 2, 5}, DType::int64),
        ints({0, 3, 5}, DType::int64)},
       {{"overlapping", false}}},
  };
}

// The first case (a float32 Conv2DBackpropInput) and its inputs made from `seed`.
struct FirstCase {
  Case c;
  test::Named in;
};
FirstCase first_case(uint32_t seed) {
  std::mt19937 rng(seed);
  Case c = cases()[0];
  test::Named in = test::named(c.op, c.make(rng));
  return {std::move(c), std::move(in)};
}

Inputs views(const std::string& op, const test::Named& named) {
  Inputs in;
  for (const auto& [name, host] : named) in[name] = host.view();
  (void)op;
  return in;
}

// The specs of `named`: float tensors without data, shape vectors with their values.
Inputs specs(const test::Named& named) {
  Inputs in;
  for (const auto& [name, host] : named) {
    gradrt::TensorView v = host.view();
    if (v.dtype != DType::int32 && v.dtype != DType::int64) v.data = nullptr;
    in[name] = v;
  }
  return in;
}

bool same_bits(const Outputs& a, const Outputs& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const gradrt::Tensor &x = a[i].second, &y = b[i].second;
    if (a[i].first != b[i].first || x.dtype() != y.dtype() || x.shape() != y.shape()) return false;
    if (x.num_bytes() && std::memcmp(x.data(), y.data(), x.num_bytes()) != 0) return false;
  }
  return true;
}

// Conv2DBackpropInput on `in` (read again on every call: a test changes its data in place) as a
// plan, run(version) with that weights version, and as run_op with the same options, fresh().
struct InputGradient {
  InputGradient(const test::Named& in, const Attrs& attrs, RunOptions options) : in(in), attrs(attrs), options(options) {
    REQUIRE(gradrt::prepare("Conv2DBackpropInput", specs(in), attrs, &plan, options).ok());
  }
  Outputs run(uint64_t version) {
    Outputs out;
    gradrt::PlanRunOptions o;
    o.weights_version = version;
    REQUIRE(plan.run(views("", in), &out, o).ok());
    return out;
  }
  Outputs fresh() const {
    Outputs out;
    REQUIRE(gradrt::run_op("Conv2DBackpropInput", views("", in), attrs, &out, options).ok());
    return out;
  }
  const test::Named& in;
  Attrs attrs;
  RunOptions options;
  Plan plan;
};

}  // namespace

TEST_CASE("plan: run gives run_op's bits on every backend, on changed data, and the reference's values") {
  for (const Case& c : cases()) {
    for (const std::string& backend : test::backends()) {
      CAPTURE(c.op);
      CAPTURE(backend);
      std::mt19937 rng(7);
      const test::Named first = test::named(c.op, c.make(rng)), second = test::named(c.op, c.make(rng));
      RunOptions options;
      options.backend = backend;
      Plan plan;
      Status s = gradrt::prepare(c.op, specs(first), c.attrs, &plan, options);
      if (test::device_lacks_dtype(s)) continue;
      REQUIRE_MESSAGE(s.ok(), s.to_string());
      CHECK(plan.info().op == c.op);
      CHECK(plan.info().backend == backend);
      for (const test::Named* data : {&first, &second, &first}) {
        Outputs got, want;
        gradrt::RunInfo info;
        s = plan.run(views(c.op, *data), &got, {}, &info);
        REQUIRE_MESSAGE(s.ok(), s.to_string());
        CHECK(info.backend == backend);
        REQUIRE(gradrt::run_op(c.op, views(c.op, *data), c.attrs, &want, options).ok());
        CHECK(same_bits(got, want));
        REQUIRE(got.size() == plan.info().outputs.size());
        for (size_t i = 0; i < got.size(); ++i) {
          CHECK(got[i].first == plan.info().outputs[i].first);
          CHECK(got[i].second.shape() == plan.info().outputs[i].second.shape);
        }
        // Against the oracle, independently of both paths above.
        test::Result ref = test::run(c.op, *data, c.attrs, "reference");
        REQUIRE(ref.status.ok());
        const bool half = c.op == "Conv2DBackpropFilter" || c.op == "Conv2D";
        test::check_close(test::values(got[0].second), ref.vals(0), half ? 2e-2 : 1e-4, half ? 2e-2 : 1e-5);
      }
      Outputs a, b;
      REQUIRE(plan.run(views(c.op, first), &a).ok());
      REQUIRE(plan.run(views(c.op, second), &b).ok());
      CHECK_FALSE(same_bits(a, b));  // the data changed, so did the result: nothing stale
    }
  }
}

TEST_CASE("plan: what prepare records") {
  std::mt19937 rng(1);
  const test::Named in = test::named("Conv2DBackpropInput", cases()[0].make(rng));
  Plan plan;
  CHECK_FALSE(plan.valid());
  RunOptions options;
  options.backend = "cpu";
  REQUIRE(gradrt::prepare("Conv2DBackpropInput", specs(in), cases()[0].attrs, &plan, options).ok());
  CHECK(plan.valid());
  const gradrt::PlanInfo& info = plan.info();
  CHECK(info.backend == "cpu");
  CHECK(info.kernel == "conv2d_backprop_input");
  CHECK_FALSE(info.isa.empty());
  CHECK(info.fast);
  REQUIRE(info.outputs.size() == 1);
  CHECK(info.outputs[0].second.shape == std::vector<int64_t>{2, 8, 8, 16});
  CHECK(info.outputs[0].second.dtype == DType::float32);

  Plan pool;
  const std::vector<Case> all = cases();
  const Case& fp = all.back();
  REQUIRE(gradrt::prepare(fp.op, specs(test::named(fp.op, fp.make(rng))), fp.attrs, &pool, options).ok());
  CHECK_FALSE(pool.info().fast);  // the whole op runs each time
  CHECK(pool.info().backend == "cpu");
}

TEST_CASE("plan: bad specs fail at prepare with the op's statuses") {
  auto [c, in] = first_case(2);
  Plan plan;
  Attrs bad = c.attrs;
  bad["strides"] = AttrValue({1, 0, 1, 1});
  Status s = gradrt::prepare(c.op, specs(in), bad, &plan);
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(s.message().find("strides") != std::string::npos);
  CHECK_FALSE(plan.valid());
  Attrs typo = c.attrs;
  typo["stride"] = AttrValue({1, 1, 1, 1});
  CHECK(gradrt::prepare(c.op, specs(in), typo, &plan).code() == Code::InvalidArgument);
  CHECK(gradrt::prepare("NoSuchOp", specs(in), c.attrs, &plan).code() == Code::NotFound);
  Inputs no_values = specs(in);
  no_values["input_sizes"].data = nullptr;  // the shape values are needed at prepare
  s = gradrt::prepare(c.op, no_values, c.attrs, &plan);
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(s.message().find("input_sizes") != std::string::npos);
  Inputs wrong = specs(in);
  wrong["out_backprop"].shape = {2, 5, 4, 16};  // not the output size of SAME stride 2 on 8x8
  CHECK(gradrt::prepare(c.op, wrong, c.attrs, &plan).code() == Code::InvalidArgument);
  Inputs huge = specs(in);
  const test::Host sizes = test::ints({1 << 20, 1 << 20, 1 << 20, 16}, DType::int64);
  huge["input_sizes"] = sizes.view();
  CHECK(gradrt::prepare(c.op, huge, c.attrs, &plan).code() != Code::OK);
  CHECK(gradrt::prepare(c.op, specs(in), c.attrs, nullptr).code() == Code::InvalidArgument);
}

TEST_CASE("plan: run with inputs other than the prepared ones is refused") {
  auto [c, in] = first_case(3);
  Plan plan;
  REQUIRE(gradrt::prepare(c.op, specs(in), c.attrs, &plan).ok());
  Outputs out;
  auto refused = [&](Inputs bad, const char* name) {
    Status s = plan.run(bad, &out);
    CHECK(s.code() == Code::InvalidArgument);
    CHECK_MESSAGE(s.message().find(name) != std::string::npos, s.message());
    CHECK(out.empty());
  };
  Inputs v = views(c.op, in);
  Inputs other_shape = v;
  other_shape["filter"].shape = {3, 3, 16, 8};
  refused(other_shape, "filter");
  Inputs other_dtype = v;
  other_dtype["out_backprop"].dtype = DType::float64;
  refused(other_dtype, "out_backprop");
  const test::Host sizes = test::ints({2, 7, 7, 16});
  Inputs other_values = v;
  other_values["input_sizes"] = sizes.view();
  refused(other_values, "input_sizes");
  Inputs missing = v;
  missing.erase("filter");
  refused(missing, "filter");
  Inputs extra = v;
  extra["bias"] = v["filter"];
  refused(extra, "bias");
  Inputs no_data = v;
  no_data["out_backprop"].data = nullptr;
  refused(no_data, "out_backprop");
  Plan empty;
  CHECK(empty.run(v, &out).code() == Code::InvalidArgument);
  CHECK(plan.run(v, nullptr).code() == Code::InvalidArgument);
  CHECK(plan.run(v, &out).ok());  // still good after the refusals
}

TEST_CASE("plan: converted weights are kept while the weights version stays, made again when it changes") {
  // float16 filter: core converts it to float for the kernel; a plan keeps that conversion.
  std::mt19937 rng(4);
  const Attrs attrs = conv_attrs({1, 1, 1, 1}, "SAME");
  test::Named in = test::named("Conv2DBackpropInput", {test::ints({1, 6, 6, 4}), test::random(DType::float16, {3, 3, 4, 5}, rng),
                                                       test::random(DType::float16, {1, 6, 6, 5}, rng)});
  RunOptions options;
  options.backend = "cpu";
  InputGradient g(in, attrs, options);
  auto run = [&](uint64_t version) { return g.run(version); };
  auto fresh = [&] { return g.fresh(); };
  const Outputs first = run(1);
  CHECK(same_bits(first, fresh()));
  // The filter changes in place, the caller keeps version 1: the kept conversion is used.
  const test::Host other = test::random(DType::float16, {3, 3, 4, 5}, rng);
  std::memcpy(in[1].second.bytes.data(), other.bytes.data(), other.bytes.size());
  const Outputs stale = run(1);
  CHECK(same_bits(stale, first));
  CHECK_FALSE(same_bits(stale, fresh()));
  // A new version (or version 0: unknown) converts the filter again.
  CHECK(same_bits(run(2), fresh()));
  CHECK(same_bits(run(2), fresh()));
  const test::Host third = test::random(DType::float16, {3, 3, 4, 5}, rng);
  std::memcpy(in[1].second.bytes.data(), third.bytes.data(), third.bytes.size());
  CHECK(same_bits(run(0), fresh()));
}

TEST_CASE("plan: the cpu conv input gradient packs its filter panels once per weights version") {
  // float32 filter: no core conversion; the cpu driver keeps its packed panels in the plan
  // (Exec::state) and packs again only for a new weights_version (simd::weight_packs counts).
  std::mt19937 rng(6);
  const Attrs attrs = conv_attrs({1, 2, 2, 1}, "SAME");
  test::Named in = test::named("Conv2DBackpropInput", {test::ints({2, 9, 9, 24}), test::random(DType::float32, {3, 3, 24, 16}, rng),
                                                       test::random(DType::float32, {2, 5, 5, 16}, rng)});
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    RunOptions options;
    options.backend = "cpu";
    options.threads = threads;
    InputGradient g(in, attrs, options);
    auto run = [&](uint64_t version) { return g.run(version); };
    auto fresh = [&] { return g.fresh(); };  // run_op: no weights version, packs into scratch
    auto reference = [&](const Outputs& got) {
      test::Result ref = test::run("Conv2DBackpropInput", in, attrs, "reference");
      REQUIRE(ref.status.ok());
      test::check_close(test::values(got[0].second), ref.vals(0), 1e-4, 1e-5);
    };
    const uint64_t packs0 = gradrt::simd::weight_packs();
    const Outputs first = run(1);
    CHECK(gradrt::simd::weight_packs() == packs0 + 1);
    CHECK(same_bits(run(1), first));
    CHECK(gradrt::simd::weight_packs() == packs0 + 1);  // same weights: packed once
    CHECK(same_bits(first, fresh()));
    reference(first);
    // New weights under a new version: packed again, the new results.
    const test::Host other = test::random(DType::float32, {3, 3, 24, 16}, rng);
    std::memcpy(in[1].second.bytes.data(), other.bytes.data(), other.bytes.size());
    const Outputs second = run(2);
    CHECK(gradrt::simd::weight_packs() == packs0 + 2);
    CHECK_FALSE(same_bits(second, first));
    CHECK(same_bits(second, fresh()));
    reference(second);
    // Version 0 (unknown): nothing kept is trusted, nothing is counted as kept.
    CHECK(same_bits(run(0), second));
    CHECK(gradrt::simd::weight_packs() == packs0 + 2);
  }
}

TEST_CASE("plan: the op context refuses data access while preparing, with a status") {
  // Relu's context at prepare, its input a spec without data: every data accessor refuses
  // (null pointers, nothing read or written), run_kernel returns the refusal without calling
  // the kernel. Without a deferred tail that is where the op's prepare ends (OK: its plan runs
  // the whole op); an op that deferred its data phase and then reads data gets the status.
  const gradrt::OpInfo* info = gradrt::find_op("Relu");
  REQUIRE(info);
  const float data[4] = {1, -2, 3, -4};
  for (bool deferred : {false, true}) {
    CAPTURE(deferred);
    Inputs in{{"features", gradrt::TensorView{DType::float32, {4}, nullptr}}};
    Outputs out;
    gradrt::OpContext ctx(*info, in, {}, RunOptions{}, &out, gradrt::OpContext::Mode::kPrepare, true);
    const gradrt::TensorView* x = nullptr;
    REQUIRE(ctx.input("features", &x).ok());
    gradrt::Tensor* y = nullptr;
    REQUIRE(ctx.add_output("activations", DType::float32, {4}, &y).ok());
    const gradrt::ReluParams p{4, false};
    if (deferred) {
      const gradrt::KernelQuery q{gradrt::Kernel::relu, DType::float32, &p, 4};
      REQUIRE(ctx.defer(q, [](gradrt::OpContext&) { return Status::OK(); }).ok());
    }
    CHECK(ctx.refused().ok());
    gradrt::Scratch<float> sx, sy;
    CHECK(ctx.load<float>(*x, 4, &sx) == nullptr);
    CHECK(ctx.output_buffer<float>(y, &sy) == nullptr);
    CHECK(ctx.input_data<float>(gradrt::TensorView{DType::float32, {4}, data}) == nullptr);  // even with data
    ctx.store<float>(data, y);  // nothing written (y has no memory)
    bool called = false;
    const Status s = ctx.run_kernel(gradrt::Kernel::relu, 4, &p, [&](gradrt::Backend*) {
      called = true;
      return Status::OK();
    });
    CHECK_FALSE(called);
    CHECK(s.code() == Code::Internal);
    CHECK(s.message().find("Relu: reads input data while preparing") == 0);
    CHECK(ctx.refused().message() == s.message());
    const Status end = ctx.end_prepare(s);
    if (deferred) CHECK(end.message() == s.message());
    else CHECK_MESSAGE(end.ok(), end.to_string());
  }
}

TEST_CASE("plan: the NCHW 1x1 filter gradient takes its dw part from the plan's workspace") {
  // Batch > 1 on the per-image path (core/ops/conv_1x1_nchw.cpp): image n's dw part is summed
  // into dw from the op's part of the plan's workspace, which prepare sized after the kernel's
  // (the batch-1 plan has the same per-image kernel and no part). float32 operands and a
  // caller's output need no conversion, so a run allocates no scratch at all.
  std::mt19937 rng(8);
  const Attrs attrs = conv_attrs({1, 1, 1, 1}, "VALID", "NCHW");
  const int64_t ci = 24, co = 40;
  auto named = [&](int64_t batch) {
    return test::named("Conv2DBackpropFilter", {test::random(DType::float32, {batch, ci, 16, 17}, rng),
                                                test::ints({1, 1, ci, co}),
                                                test::random(DType::float32, {batch, co, 16, 17}, rng)});
  };
  const test::Named one = named(1), three = named(3);
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    RunOptions options;
    options.backend = "cpu";
    options.threads = threads;
    Plan p1, p3;
    REQUIRE(gradrt::prepare("Conv2DBackpropFilter", specs(one), attrs, &p1, options).ok());
    REQUIRE(gradrt::prepare("Conv2DBackpropFilter", specs(three), attrs, &p3, options).ok());
    CHECK(p3.info().kernel == "conv2d_backprop_input");  // the remapped per-image GEMM
    CHECK(p3.info().workspace_bytes == (p1.info().workspace_bytes + 63) / 64 * 64 + ci * co * sizeof(float));
    // The caller's output memory, 64-byte aligned (less aligned memory is not taken).
    std::vector<float> memory(ci * co + 16);
    float* dw = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64 / sizeof(float);
    gradrt::PlanRunOptions o;
    o.output_memory = [&](std::string_view, DType, const std::vector<int64_t>&) -> void* { return dw; };
    const uint64_t scratch0 = gradrt::scratch_allocations(), fallbacks0 = gradrt::simd::workspace_fallbacks();
    Outputs out;
    for (int run = 0; run < 2; ++run) REQUIRE(p3.run(views("", three), &out, o).ok());
    CHECK(out[0].second.data() == static_cast<void*>(dw));
    CHECK(gradrt::scratch_allocations() == scratch0);
    CHECK(gradrt::simd::workspace_fallbacks() == fallbacks0);
    test::Result ref = test::run("Conv2DBackpropFilter", three, attrs, "reference");
    REQUIRE(ref.status.ok());
    test::check_close(std::vector<double>(dw, dw + ci * co), ref.vals(0), 1e-4, 1e-5);
  }
}

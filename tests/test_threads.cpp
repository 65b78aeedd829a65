// Concurrency (issue 6): the C++ API called from 4 threads at once with mixed ops gives the
// same bits as single-threaded calls (reference, cpu, and vulkan when it can run), and the
// cpu backend's results do not depend on RunOptions.threads (policy 8).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gradrt/gradrt.h"
#include "parallel.h"
#include "simd/cpu_isa.h"
#include "simd/tuning.h"
#include "tests/util.h"
#include "tests/variants.h"

namespace {

namespace simd = gradrt::simd;
using gradrt::AttrValue;
using gradrt::Attrs;
using gradrt::DType;
using test::Host;
using test::Named;

struct Case {
  std::string name;
  std::string op;
  Named inputs;
  Attrs attrs;
};

// What a run produced, byte for byte.
struct Snapshot {
  std::string status;
  std::vector<std::string> names;
  std::vector<DType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<unsigned char>> bytes;
  bool operator==(const Snapshot&) const = default;
};

// parallel: RunOptions::parallel (a caller's executor) when set.
Snapshot run_case(const Case& c, const std::string& backend, int threads,
                  const decltype(gradrt::RunOptions::parallel)& parallel = {}) {
  gradrt::Inputs in;
  for (const auto& [name, host] : c.inputs) in[name] = host.view();
  gradrt::RunOptions options;
  options.backend = backend;
  options.threads = threads;
  options.parallel = parallel;
  gradrt::Outputs out;
  gradrt::Status s = gradrt::run_op(c.op, in, c.attrs, &out, options);
  Snapshot snap;
  snap.status = s.to_string();
  for (const auto& [name, t] : out) {
    snap.names.push_back(name);
    snap.dtypes.push_back(t.dtype());
    snap.shapes.push_back(t.shape());
    const auto* p = static_cast<const unsigned char*>(t.data());
    snap.bytes.emplace_back(p, p + t.num_bytes());
  }
  return snap;
}

// The cases are small: without this, run_kernel's minimum work per extra thread
// (core/parallel.h) would run each of them on one thread and these tests would not reach
// the pool. Set for the test's duration, restored after.
struct AnyWorkUsesThreads {
  int64_t saved = gradrt::min_thread_work_ns();
  AnyWorkUsesThreads() { gradrt::set_min_thread_work_ns(0); }
  ~AnyWorkUsesThreads() { gradrt::set_min_thread_work_ns(saved); }
};

Host ints(std::vector<int64_t> v, DType dtype = DType::int32) { return test::ints(std::move(v), dtype); }
AttrValue il(std::vector<int64_t> v) { return AttrValue(v); }

// Mixed ops, sizes large enough that the cpu kernels split their work into several chunks.
std::vector<Case> cases() {
  std::mt19937 rng(20261122);
  const DType F = DType::float32, D = DType::float64;
  std::vector<Case> v;
  // hosts in the op's input order (test::named)
  auto add = [&v](std::string name, std::string op, std::vector<Host> hosts, Attrs attrs) {
    Named inputs = test::named(op, std::move(hosts));
    v.push_back({std::move(name), std::move(op), std::move(inputs), std::move(attrs)});
  };
  add("conv_bp_input_nhwc_stride2_same", "Conv2DBackpropInput",
      {ints({2, 13, 11, 6}), test::random(F, {3, 3, 6, 8}, rng), test::random(F, {2, 7, 6, 8}, rng)},
      {{"strides", il({1, 2, 2, 1})}, {"padding", AttrValue("SAME")}});
  add("conv_bp_input_nchw_grouped_f64", "Conv2DBackpropInput",
      {ints({2, 6, 9, 9}), test::random(D, {3, 3, 3, 4}, rng), test::random(D, {2, 4, 9, 9}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}, {"data_format", AttrValue("NCHW")}});
  add("conv_bp_filter_nchw_dilated", "Conv2DBackpropFilter",
      {test::random(F, {2, 5, 12, 10}, rng), ints({3, 3, 5, 4}), test::random(F, {2, 4, 8, 6}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("VALID")}, {"data_format", AttrValue("NCHW")},
       {"dilations", il({1, 1, 2, 2})}});
  add("conv_bp_filter_big", "Conv2DBackpropFilter",
      {test::random(F, {4, 24, 24, 16}, rng), ints({3, 3, 16, 16}), test::random(F, {4, 24, 24, 16}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}});
  // A small dw over a long K (conv2d_backprop_filter.h K slices): 4096 pixels, 4 slices of
  // partial dw at the default 1024 pixels per slice.
  add("conv_bp_filter_1x1_slices", "Conv2DBackpropFilter",
      {test::random(F, {16, 16, 16, 32}, rng), ints({1, 1, 32, 32}), test::random(F, {16, 16, 16, 32}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("VALID")}});
  // Few input channels (conv2d_backprop_filter_few_c.h): 3840 output pixels, 7 chunks of
  // partial sums, cut by the shape alone.
  add("conv_bp_filter_few_c", "Conv2DBackpropFilter",
      {test::random(F, {4, 32, 30, 3}, rng), ints({3, 3, 3, 32}), test::random(F, {4, 32, 30, 32}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}});
  add("conv_bp_filter_few_c_7x7s2", "Conv2DBackpropFilter",
      {test::random(F, {3, 40, 38, 3}, rng), ints({7, 7, 3, 16}), test::random(F, {3, 20, 19, 16}, rng)},
      {{"strides", il({1, 2, 2, 1})}, {"padding", AttrValue("SAME")}});
  add("conv_bp_filter_v2_half", "Conv2DBackpropFilterV2",
      {test::random(DType::float16, {2, 8, 8, 4}, rng),
       test::random(DType::float16, {3, 3, 4, 5}, rng),
       test::random(DType::float16, {2, 8, 8, 5}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}});
  add("depthwise_bp_input", "DepthwiseConv2dNativeBackpropInput",
      {ints({2, 9, 9, 4}), test::random(F, {3, 3, 4, 2}, rng), test::random(F, {2, 9, 9, 8}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}});
  add("depthwise_bp_filter_stride2", "DepthwiseConv2dNativeBackpropFilter",
      {test::random(F, {2, 10, 10, 3}, rng), ints({3, 3, 3, 2}), test::random(F, {2, 4, 4, 6}, rng)},
      {{"strides", il({1, 2, 2, 1})}, {"padding", AttrValue("VALID")}});
  add("bn_grad_v3_training", "FusedBatchNormGradV3",
      {test::random(F, {4, 6, 6, 5}, rng),
       test::random(F, {4, 6, 6, 5}, rng),
       test::random(F, {5}, rng),
       test::random(F, {5}, rng, -0.1, 0.1),
       test::random(F, {5}, rng, 0.5, 1.5),
       test::make(F, {0}, {})},
      {{"epsilon", AttrValue(0.001)}});
  add("bn_grad_v2_inference_nchw", "FusedBatchNormGradV2",
      {test::random(F, {2, 3, 5, 5}, rng),
       test::random(F, {2, 3, 5, 5}, rng),
       test::random(F, {3}, rng),
       test::random(F, {3}, rng),
       test::random(F, {3}, rng, 0.5, 1.5)},
      {{"is_training", AttrValue(false)}, {"data_format", AttrValue("NCHW")}});
  add("frac_pool_grad_f64_overlapping", "FractionalAvgPoolGrad",
      {ints({2, 10, 10, 3}, DType::int64),
       test::random(D, {2, 6, 6, 3}, rng),
       ints({0, 2, 4, 5, 7, 9, 10}, DType::int64),
       ints({0, 1, 3, 5, 6, 8, 10}, DType::int64)},
      {{"overlapping", AttrValue(true)}});
  add("conv2d_grouped", "Conv2D",
      {test::random(F, {2, 8, 8, 4}, rng), test::random(F, {3, 3, 2, 6}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}});
  add("bn_forward_v3_training", "FusedBatchNormV3",
      {test::random(F, {4, 6, 6, 5}, rng),
       test::random(F, {5}, rng),
       test::random(F, {5}, rng),
       test::random(F, {5}, rng),
       test::random(F, {5}, rng, 0.5, 1.5)},
      {{"exponential_avg_factor", AttrValue(0.25)}});
  add("frac_pool_deterministic", "FractionalAvgPool",
      {test::random(F, {2, 20, 30, 3}, rng)},
      {{"pooling_ratio", AttrValue(std::vector<double>{1, 1.7320508, 1.4142135, 1})},
       {"pseudo_random", AttrValue(true)},
       {"overlapping", AttrValue(true)},
       {"deterministic", AttrValue(true)},
       {"seed", AttrValue(int64_t{87654321})},
       {"seed2", AttrValue(int64_t{341261001})}});
  add("conv_bp_input_bfloat16_attr", "Conv2DBackpropInput",
      {ints({1, 8, 8, 3}), test::random(F, {3, 3, 3, 4}, rng), test::random(F, {1, 8, 8, 4}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}, {"T", AttrValue("bfloat16")}});
  add("relu6_grad_big", "Relu6Grad",
      {test::random(F, {4, 40, 40, 24}, rng, -1, 7), test::random(F, {4, 40, 40, 24}, rng, -1, 7)}, {});
  add("bias_add_grad_nchw", "BiasAddGrad", {test::random(F, {8, 24, 20, 20}, rng)},
      {{"data_format", AttrValue("NCHW")}});
  add("max_pool_grad_overlapping", "MaxPoolGrad",
      {test::random(F, {2, 9, 9, 5}, rng), test::random(F, {2, 5, 5, 5}, rng), test::random(F, {2, 5, 5, 5}, rng)},
      {{"ksize", il({1, 3, 3, 1})}, {"strides", il({1, 2, 2, 1})}, {"padding", AttrValue("SAME")}});
  add("avg_pool_grad_nchw", "AvgPoolGrad",
      {ints({2, 5, 9, 9}), test::random(F, {2, 5, 5, 5}, rng)},
      {{"ksize", il({1, 1, 3, 3})}, {"strides", il({1, 1, 2, 2})}, {"padding", AttrValue("SAME")},
       {"data_format", AttrValue("NCHW")}});
  // NCHW 1x1 gradients as per-image GEMMs (conv_1x1_nchw.cpp): batch 3 sums three dw parts.
  add("conv_bp_filter_nchw_1x1", "Conv2DBackpropFilter",
      {test::random(F, {3, 37, 17, 19}, rng), ints({1, 1, 37, 45}), test::random(F, {3, 45, 17, 19}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("VALID")}, {"data_format", AttrValue("NCHW")}});
  add("conv_bp_input_nchw_1x1_f64", "Conv2DBackpropInput",
      {ints({3, 37, 17, 19}), test::random(D, {1, 1, 37, 45}, rng), test::random(D, {3, 45, 17, 19}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}, {"data_format", AttrValue("NCHW")}});
  // An error case mixed in: the same status every time, never a stale output.
  add("error_case", "Conv2DBackpropInput",
      {ints({1, 8, 8, 3}), test::random(F, {3, 3, 3, 4}, rng), test::random(F, {1, 7, 8, 4}, rng)},
      {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}});
  return v;
}

}  // namespace

TEST_CASE("threads: 4 threads at once with mixed ops match single-threaded results bit for bit") {
  AnyWorkUsesThreads any_work;
  const std::vector<Case> all = cases();
  for (const std::string& backend : test::backends()) {
    CAPTURE(backend);
    // Single-threaded baseline, one call at a time.
    std::vector<Snapshot> want;
    for (const Case& c : all) {
      want.push_back(run_case(c, backend, 1));
      CAPTURE(c.name);
      CHECK((c.name == "error_case") != (want.back().status == "OK"));
    }
    constexpr int kThreads = 4, kRounds = 3;
    std::atomic<int> runs{0};
    std::mutex m;
    std::vector<std::string> mismatches;
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t) {
      pool.emplace_back([&, t] {
        for (int round = 0; round < kRounds; ++round) {
          for (size_t k = 0; k < all.size(); ++k) {
            // Each thread walks the cases in its own order, with its own thread count.
            size_t i = (k * (t + 1) + static_cast<size_t>(round) * 5 + static_cast<size_t>(t)) % all.size();
            int threads = (t + round) % 4 == 0 ? 0 : 1 + (t + round) % 4;
            Snapshot got = run_case(all[i], backend, threads);
            runs.fetch_add(1);
            if (!(got == want[i])) {
              std::lock_guard<std::mutex> lock(m);
              mismatches.push_back(all[i].name + " (thread " + std::to_string(t) + ", threads=" +
                                   std::to_string(threads) + "): " + got.status);
            }
          }
        }
      });
    }
    for (auto& th : pool) th.join();
    CHECK(runs.load() == kThreads * kRounds * static_cast<int>(all.size()));
    std::string report;
    for (const std::string& s : mismatches) report += s + "\n";
    CHECK_MESSAGE(mismatches.empty(), report);
  }
}

TEST_CASE("threads: RunOptions.threads 1, 2, 3, 8 give identical bits") {
  AnyWorkUsesThreads any_work;
  const std::vector<Case> all = cases();
  for (const std::string& backend : {std::string("cpu"), std::string("reference")}) {
    CAPTURE(backend);
    for (const Case& c : all) {
      CAPTURE(c.name);
      Snapshot one = run_case(c, backend, 1);
      for (int threads : {2, 3, 8, 0}) {
        CAPTURE(threads);
        Snapshot got = run_case(c, backend, threads);
        CHECK(got.status == one.status);
        CHECK(got.shapes == one.shapes);
        CHECK(got == one);
      }
    }
  }
}

TEST_CASE("threads: RunOptions.parallel (a caller's executor) runs the work, same bits") {
  // What a framework passes (gradrt_tf: TF's intra-op pool): here, worker 0 on the calling thread
  // and the others on fresh threads. Every worker index must come once per job, and the results
  // must be the bits of gradrt's own pool.
  AnyWorkUsesThreads any_work;
  std::atomic<int> jobs{0}, bad_calls{0};
  auto executor = [&](int workers, const std::function<void(int)>& fn) {
    jobs.fetch_add(1);
    if (workers < 2) bad_calls.fetch_add(1);
    std::vector<std::thread> extra;
    for (int i = 1; i < workers; ++i) extra.emplace_back([&fn, i] { fn(i); });
    fn(0);
    for (auto& t : extra) t.join();
  };
  for (const Case& c : cases()) {
    CAPTURE(c.name);
    Snapshot own = run_case(c, "cpu", 3);
    for (int threads : {2, 3}) {
      CAPTURE(threads);
      CHECK(run_case(c, "cpu", threads, executor) == own);
    }
  }
  CHECK(jobs.load() > 0);
  CHECK(bad_calls.load() == 0);
}

TEST_CASE("threads: concurrent calls while the element limit and typed API are used") {
  AnyWorkUsesThreads any_work;
  // Typed calls from several threads share nothing but the thread pool; each gets its own
  // result, and a thread that fails (bad strides) does not disturb the others.
  std::mt19937 rng(7);
  Host sizes = test::ints({1, 12, 12, 4});
  Host w = test::random(DType::float32, {3, 3, 4, 6}, rng);
  Host dy = test::random(DType::float32, {1, 12, 12, 6}, rng);
  gradrt::Tensor want;
  REQUIRE(gradrt::conv2d_backprop_input(sizes.view(), w.view(), dy.view(),
                                        gradrt::ConvAttrs().Strides({1, 1, 1, 1}).Padding("SAME"), &want,
                                        gradrt::RunOptions{"cpu", 1})
              .ok());
  std::atomic<int> bad{0}, failed_ok{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        gradrt::Tensor got;
        bool break_it = (i + t) % 5 == 0;
        gradrt::Status s = gradrt::conv2d_backprop_input(
            sizes.view(), w.view(), dy.view(),
            gradrt::ConvAttrs().Strides(break_it ? std::vector<int64_t>{1, 0, 1, 1} : std::vector<int64_t>{1, 1, 1, 1})
                .Padding("SAME"),
            &got, gradrt::RunOptions{"cpu", 1 + (i % 3)});
        if (break_it) {
          if (s.ok() || s.code() != gradrt::Code::InvalidArgument || got.data() != nullptr) failed_ok.fetch_add(1);
          continue;
        }
        if (!s.ok() || got.num_bytes() != want.num_bytes() ||
            std::memcmp(got.data(), want.data(), want.num_bytes()) != 0)
          bad.fetch_add(1);
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(bad.load() == 0);
  CHECK(failed_ok.load() == 0);
}

// core/parallel.h itself: parallel_for calls every fixed chunk once; parallel_for_guided
// covers [0, n) exactly once with chunks of at least min_grain items (the last of a thread's
// range may be shorter), one call on one thread; for 1-8 threads and n smaller than the grain.
TEST_CASE("threads: parallel_for and parallel_for_guided cover every item once") {
  for (int threads : {1, 2, 3, 8}) {
    for (int64_t n : {int64_t(1), int64_t(5), int64_t(97), int64_t(4096)}) {
      for (int64_t grain : {int64_t(1), int64_t(3), int64_t(200)}) {
        CAPTURE(threads);
        CAPTURE(n);
        CAPTURE(grain);
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::mutex m;
        std::vector<std::pair<int64_t, int64_t>> calls;
        auto record = [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
          std::lock_guard<std::mutex> lock(m);
          calls.emplace_back(b, e);
        };
        gradrt::parallel_for(gradrt::Exec{threads}, n, grain, record);
        for (auto [b, e] : calls) CHECK((b % grain == 0 && e == std::min(n, b + grain)));
        CHECK(static_cast<int64_t>(calls.size()) == gradrt::num_chunks(n, grain));
        calls.clear();
        gradrt::parallel_for_guided(gradrt::Exec{threads}, n, grain, record);
        // A shorter chunk only at the end of a thread's range [w*n/P, (w+1)*n/P).
        const int64_t parts = std::min<int64_t>(threads, gradrt::num_chunks(n, grain));
        auto range_end = [&](int64_t e) {
          for (int64_t w = 0; w < parts; ++w)
            if (e == (w + 1) * n / parts) return true;
          return false;
        };
        for (auto [b, e] : calls) CHECK((b < e && (e - b >= grain || range_end(e))));
        if (threads == 1) CHECK(calls.size() == 1);
        CHECK(std::all_of(hits.begin(), hits.end(), [](const std::atomic<int>& h) { return h.load() == 2; }));
      }
    }
  }
}

// mirror_in_range against the ranges written out: each participant's range [w*C/P, (w+1)*C/P)
// reversed onto itself (one thread: the whole loop reversed; more threads than chunks: each its own).
TEST_CASE("threads: mirror_in_range reverses each participant's range of chunks") {
  for (int64_t chunks = 1; chunks <= 40; ++chunks)
    for (int64_t threads : {int64_t(0), int64_t(1), int64_t(2), int64_t(3), int64_t(7), int64_t(64)}) {
      CAPTURE(chunks);
      CAPTURE(threads);
      const int64_t parts = std::max<int64_t>(1, std::min(threads, chunks));
      std::vector<int64_t> want(static_cast<size_t>(chunks));
      for (int64_t w = 0; w < parts; ++w) {
        const int64_t lo = w * chunks / parts, hi = (w + 1) * chunks / parts;
        for (int64_t q = lo; q < hi; ++q) want[static_cast<size_t>(q)] = hi - 1 - (q - lo);
      }
      for (int64_t q = 0; q < chunks; ++q) CHECK(gradrt::mirror_in_range(q, chunks, threads) == want[static_cast<size_t>(q)]);
    }
}

// The thread count of a small first-layer filter gradient (the cpu backend's
// thread_cost_scale): 3x3 32x32x3->32 at batch 1 is ~0.9M multiply-adds, 8.9 us by kernels.h's
// estimate, 21-28 us measured (few-c path): scaled, it takes 2 workers at the default minimum
// of 10 us per thread, run directly and through a plan (whose workspace is sized for the same
// count). The same image size with 8 input channels (0.6M multiply-adds, GEMM path) stays on
// one thread, and so does the 3-channel one with the few-c path off (the scale is the path's).
// Results: the reference's, within tolerance (the bits do not depend on the count).
TEST_CASE("threads: a first-layer filter gradient takes 2 threads, an 8-channel one of its size 1") {
  AnyWorkUsesThreads restore;  // saves the minimum, set to the default below
  test::TuningGuard tuning;
  gradrt::set_min_thread_work_ns(10000);
  std::mt19937 rng(7);
  const DType F = DType::float32;
  for (int64_t ci : {int64_t(3), int64_t(8), int64_t(-3)}) {  // -3: 3 channels, few-c path off
    CAPTURE(ci);
    const bool few_c = ci == 3;
    if (ci < 0) {
      simd::ConvTuning t = simd::cpu_tuning(simd::cpu_isa());
      t.filter_few_c_max = 0;
      REQUIRE(simd::set_cpu_tuning(simd::cpu_isa(), t));
      ci = 3;
    }
    const int64_t hw = ci == 3 ? 32 : 16;
    Case c{"first_layer", "Conv2DBackpropFilter",
           test::named("Conv2DBackpropFilter", {test::random(F, {1, hw, hw, ci}, rng), ints({3, 3, ci, 32}),
                                                test::random(F, {1, hw, hw, 32}, rng)}),
           {{"strides", il({1, 1, 1, 1})}, {"padding", AttrValue("SAME")}}};
    std::atomic<int> most{0};
    auto parallel = [&](int workers, const std::function<void(int)>& fn) {
      most = std::max(most.load(), workers);
      for (int i = 0; i < workers; ++i) fn(i);
    };
    const Snapshot ref = run_case(c, "reference", 1);
    const Snapshot direct = run_case(c, "cpu", 2, parallel);
    REQUIRE(direct.status == "OK");
    CHECK(most.load() == (few_c ? 2 : 0));
    gradrt::Inputs in;
    for (const auto& [name, host] : c.inputs) in[name] = host.view();
    gradrt::RunOptions options;
    options.backend = "cpu";
    options.threads = 2;
    gradrt::Plan plan;
    REQUIRE(gradrt::prepare(c.op, in, c.attrs, &plan, options).ok());
    most = 0;
    gradrt::PlanRunOptions run_options;  // a plan's executor comes with each run
    run_options.parallel = parallel;
    gradrt::Outputs out;
    REQUIRE(plan.run(in, &out, run_options).ok());
    CHECK(most.load() == (few_c ? 2 : 0));
    const auto* got = static_cast<const float*>(out[0].second.data());
    const auto* want = reinterpret_cast<const float*>(ref.bytes[0].data());
    for (int64_t i = 0; i < out[0].second.num_elements(); ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-4));
  }
}

// The 1x1 stride-1 input gradient with few dx channels (simd/kernels/conv2d_backprop_input_stream.h):
// its micro-kernels (ukernels/conv1x1_stream.h: full- and half-width tiles, with and without the dy
// prefetch) at every ISA unit runnable here against a double loop, with sentinels past the tile;
// the driver at every ISA against the reference backend (odd ci/co, pixel counts off every tile,
// batch > 1, float and double, 1-3 threads the same bits), the same bits as the GEMM path, and
// the plan recording the path.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "harness.h"
#include "simd/cpu_isa.h"
#include "simd/kernels/table.h"
#include "simd/tuning.h"

namespace {

namespace simd = gradrt::simd;
constexpr float kSentinel = -12345.0f;

// One micro-kernel call of `rows` rows (the unit's R, or 1 for run1) against a double loop.
// pf: the kernel's dy prefetch (a hint: the same values either way).
void check_stream(const std::string& who, int64_t rows, int64_t NR, int64_t co, int64_t ci, bool pf,
                  void (*fn)(int64_t, int64_t, const float*, const float*, float*, bool), std::mt19937& rng) {
  const std::vector<float> dy = test::random_vec<float>(rng, size_t(rows * co + 1));
  // wt's padding columns (c >= ci) hold random values too: they may reach only lanes that are
  // overwritten or never stored.
  const std::vector<float> wt = test::random_vec<float>(rng, size_t(co * NR + 1));
  std::vector<float> dx(size_t(rows * ci + NR + 1), kSentinel);
  fn(co, ci, dy.data(), wt.data(), dx.data(), pf);
  const std::string at =
      who + " co=" + std::to_string(co) + " ci=" + std::to_string(ci) + " pf=" + std::to_string(int(pf));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < ci; ++c) {
      double want = 0, mag = 0;
      for (int64_t k = 0; k < co; ++k) {
        const double t = double(dy[size_t(i * co + k)]) * double(wt[size_t(k * NR + c)]);
        want += t, mag += std::fabs(t);
      }
      const float got = dx[size_t(i * ci + c)];
      if (!(std::fabs(double(got) - want) <= 1e-5 * mag + 1e-30))
        FAIL_CHECK(at << " row " << i << " c " << c << ": got " << got << ", want " << want);
    }
  for (size_t j = size_t(rows * ci); j < dx.size(); ++j)
    if (dx[j] != kSentinel) FAIL_CHECK(at << ": wrote past the tile at " << j);
}

}  // namespace

TEST_CASE("cpu: 1x1 streaming input-gradient micro-kernels of every ISA unit against a double loop") {
  std::mt19937 rng(2121);
  int tested = 0;
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::KernelTable* t = simd::kernel_table(isa);
    // The unit's full-width tiles, and its half-width one where it has one (AVX-512: ymm).
    std::vector<simd::StreamUkernel> kernels(std::begin(t->stream), std::end(t->stream));
    if (t->stream_half.rows > 0) kernels.push_back(t->stream_half);
    for (const simd::StreamUkernel& u : kernels) {
      REQUIRE(u.rows > 0);
      REQUIRE(bool(u.run));
      REQUIRE(bool(u.run1));
      const int64_t L = u.lanes, NR = int64_t(u.vectors) * L;
      const std::string who = std::string(simd::isa_name(isa)) + " " + std::to_string(u.rows) + "x" +
                              std::to_string(u.vectors) + " (" + std::to_string(L) + " lanes)";
      // ci from one past the previous vector count to a whole NR (tails of every length at narrow units).
      std::vector<int64_t> cis = {NR - L + 1, NR - 1, NR};
      if (L > 2) cis.push_back(NR - L / 2);
      for (int64_t ci : cis) {
        if (ci < 1 || ci <= NR - L) continue;
        for (int64_t co : {1, 3, 17, 33}) {
          for (bool pf : {false, true}) check_stream(who, u.rows, NR, co, ci, pf, u.run, rng);
          check_stream(who + " (1 row)", 1, NR, co, ci, false, u.run1, rng);
          ++tested;
        }
      }
    }
  }
  CHECK(tested >= 4);
}

TEST_CASE("cpu: 1x1 streaming input gradient at every ISA against the reference, and the GEMM path's bits") {
  test::IsaGuard guard;
  test::TuningGuard tuning_guard;  // every unit's tuning back on exit, a failed REQUIRE too
  std::mt19937 rng(2122);
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    CAPTURE(simd::isa_name(isa));
    simd::ConvTuning tu = saved;
    tu.input_stream_max = 64;
    REQUIRE(simd::set_cpu_tuning(isa, tu));
    REQUIRE(simd::set_cpu_isa(isa));
    std::vector<test::Variant> here;
    for (const test::Variant& v : test::variants("cpu"))
      if (v.isa == isa) here.push_back(v);
    // Pixel counts 35 (1x5x7), 2x5x7 = 70 and 3x9x9 = 243: off every tile's R; the variants rerun at
    // 1-3 threads and must give the same bits. ci 1-8: AVX-512's half-width (ymm) tile for float,
    // 1-4 for double.
    for (int64_t ci : {1, 3, 4, 5, 8, 17, 24, 33})
      for (int64_t co : {1, 3, 8, 17, 24, 33}) {
        const int64_t n = 1 + (ci + co) % 3, h = n == 3 ? 9 : 5, w = n == 3 ? 9 : 7;
        const gradrt::ConvParams p = test::same_conv_params(n, h, w, ci, co, 1, 1);
        test::conv_case<float>(here, test::ConvKernel::bwd_input, p, rng);
        if (co % 2 == 1) test::conv_case<double>(here, test::ConvKernel::bwd_input, p, rng);
      }
    // A larger batch (several chunks per thread): 8x16x16, 16 <- 96, 24 <- 144 and 16 <- 8 (dy rows
    // shorter than a line: no prefetch), with the dy prefetch on and off.
    for (bool pf : {true, false}) {
      CAPTURE(pf);
      tu.input_stream_prefetch = pf;
      REQUIRE(simd::set_cpu_tuning(isa, tu));
      for (const auto& [ci, co] : std::vector<std::pair<int64_t, int64_t>>{{16, 96}, {24, 144}, {16, 8}})
        test::conv_case<float>(here, test::ConvKernel::bwd_input, test::same_conv_params(8, 16, 16, ci, co, 1, 1), rng);
    }

    // The same bits as the GEMM path (each dx value sums k = 0..co-1 in one chain on both), with
    // and without the dy prefetch.
    for (const std::pair<int64_t, int64_t>& shape :
         std::vector<std::pair<int64_t, int64_t>>{{8, 48}, {5, 20}, {17, 33}, {32, 32}}) {
      // (not a structured binding: clang 14, Emscripten's, cannot capture one in CAPTURE's lambda)
      const int64_t ci = shape.first, co = shape.second;
      CAPTURE(ci);
      CAPTURE(co);
      test::Host sizes = test::ints({2, 9, 11, ci});
      test::Host wt = test::random(gradrt::DType::float32, {1, 1, ci, co}, rng);
      test::Host dy = test::random(gradrt::DType::float32, {2, 9, 11, co}, rng);
      std::vector<std::vector<float>> got;
      for (const auto& [max_c, pf] : std::vector<std::pair<int64_t, bool>>{{64, true}, {64, false}, {0, true}}) {
        tu.input_stream_max = max_c;
        tu.input_stream_prefetch = pf;
        REQUIRE(simd::set_cpu_tuning(isa, tu));
        gradrt::Tensor dx;
        REQUIRE(gradrt::conv2d_backprop_input(sizes.view(), wt.view(), dy.view(),
                                              gradrt::ConvAttrs().Strides({1, 1, 1, 1}).Padding("VALID"), &dx,
                                              gradrt::RunOptions{"cpu", 2})
                    .ok());
        const float* d = static_cast<const float*>(dx.data());
        got.emplace_back(d, d + dx.num_bytes() / sizeof(float));
      }
      CHECK(test::same_bits(got[0], got[1]));
      CHECK(test::same_bits(got[0], got[2]));
    }
  }
}

TEST_CASE("cpu: the plan records the 1x1 input gradient's path") {
  test::IsaGuard guard;
  std::mt19937 rng(2123);
  auto tiles_of = [&](int64_t ci, int64_t co, int64_t s) {
    test::Host sizes = test::ints({4, 8, 8, ci});
    test::Host w = test::random(gradrt::DType::float32, {1, 1, ci, co}, rng);
    test::Host dy = test::random(gradrt::DType::float32, {4, 8 / s, 8 / s, co}, rng);
    gradrt::Inputs in{{"input_sizes", sizes.view()}, {"filter", w.view()}, {"out_backprop", dy.view()}};
    in["filter"].data = nullptr, in["out_backprop"].data = nullptr;
    gradrt::Plan plan;
    gradrt::RunOptions options;
    options.backend = "cpu";
    REQUIRE(gradrt::prepare("Conv2DBackpropInput", in, gradrt::ConvAttrs().Strides({1, s, s, 1}).Padding("SAME").to_attrs(), &plan,
                            options)
                .ok());
    return plan.info().tiles;
  };
  for (simd::Isa isa : simd::supported_isas()) {
    CAPTURE(simd::isa_name(isa));
    REQUIRE(simd::set_cpu_isa(isa));
    const simd::StreamUkernel& u = simd::kernel_table(isa)->stream[0];
    if (simd::cpu_tuning(isa).input_stream_max >= u.lanes)
      CHECK(tiles_of(u.lanes, 48, 1) == "stream " + std::to_string(u.rows) + "x1");
    // Rows of at most half a vector: the half-width tile where the unit has one.
    const simd::StreamUkernel& h = simd::kernel_table(isa)->stream_half;
    if (h.rows > 0 && simd::cpu_tuning(isa).input_stream_max >= h.lanes) {
      CHECK(h.lanes * 2 == u.lanes);
      CHECK(tiles_of(h.lanes, 48, 1) == "stream " + std::to_string(h.rows) + "x1 half");
      CHECK(tiles_of(1, 48, 1) == "stream " + std::to_string(h.rows) + "x1 half");
      CHECK(tiles_of(h.lanes + 1, 48, 1) == "stream " + std::to_string(u.rows) + "x1");
    }
    CHECK(tiles_of(4, 48, 2).rfind("gemm ", 0) == 0);     // stride 2
    CHECK(tiles_of(200, 48, 1).rfind("gemm ", 0) == 0);   // too many dx channels
  }
}

TEST_CASE("cpu: GRADRT_CPU_TILES input_stream=N") {
  simd::ConvTuning t = simd::cpu_tuning(simd::Isa::scalar);
  CHECK(simd::apply_tiles_override(simd::Isa::scalar, "input_stream=0", &t));
  CHECK(t.input_stream_max == 0);
  CHECK(simd::apply_tiles_override(simd::Isa::scalar, "input_stream=24", &t));
  CHECK(t.input_stream_max == 24);
  CHECK(simd::describe(t).find("input 1x1 stream to 24") != std::string::npos);
  CHECK_FALSE(simd::apply_tiles_override(simd::Isa::scalar, "input_stream=-1", &t));
  CHECK_FALSE(simd::apply_tiles_override(simd::Isa::scalar, "input_stream=4x", &t));
  CHECK(t.input_stream_max == 24);
  CHECK(t.input_stream_prefetch);
  CHECK(simd::apply_tiles_override(simd::Isa::scalar, "stream_pf=0", &t));
  CHECK_FALSE(t.input_stream_prefetch);
  CHECK(simd::describe(t).find("input 1x1 stream to 24 (prefetch off)") != std::string::npos);
  CHECK_FALSE(simd::apply_tiles_override(simd::Isa::scalar, "stream_pf=2", &t));
  CHECK(simd::apply_tiles_override(simd::Isa::scalar, "stream_pf=1", &t));
  CHECK(t.input_stream_prefetch);
}

// A tester per cpu micro-kernel: the GEMM micro-kernels (simd/ukernels/gemm.h) of every ISA unit
// built here and runnable on this CPU, each instantiated tile and its remainder variants, on edge
// sizes (no taps, empty K, partial rows and columns, tails of a vector), against a scalar loop
// in double; rows and columns outside the tile must stay untouched. And the GEMM drivers with each
// tile a unit instantiates (the run-time tile choice of simd/tuning.h) against the reference.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
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

// The cpu test variants of `isa` after installing tiles `tu` for it and forcing that ISA.
std::vector<test::Variant> cpu_variants_with(simd::Isa isa, const simd::ConvTuning& tu) {
  REQUIRE(simd::set_cpu_tuning(isa, tu));
  REQUIRE(simd::set_cpu_isa(isa));
  std::vector<test::Variant> here;
  for (const test::Variant& v : test::variants("cpu"))
    if (v.isa == isa) here.push_back(v);
  return here;
}
constexpr float kSentinel = -12345.0f;

std::string name(simd::Isa isa, const simd::GemmUkernel& u) {
  return std::string(simd::isa_name(isa)) + " " + std::to_string(u.tile.rows) + "x" + std::to_string(u.tile.vectors);
}

// |got - want| within 1e-5 of the sum of |terms| (float FMA chains against double).
void check(float got, double want, double mag, const std::string& what) {
  if (std::fabs(double(got) - want) > 1e-5 * mag + 1e-30) FAIL_CHECK(what << ": got " << got << ", want " << want);
}

// rows(): c[i][j] = sum_t sum_k a[t*as+i][k] * b[t][k*NR + j] for i < mr, j < nr.
void test_rows(simd::Isa isa, const simd::GemmUkernel& u, std::mt19937& rng) {
  const int64_t MR = u.tile.rows, NR = int64_t(u.tile.vectors) * u.lanes;
  const std::string who = name(isa, u) + " rows";
  for (int64_t ntaps : {0, 1, 3})
    for (int64_t kc : {0, 1, 7, 33})
      for (int64_t mr : {int64_t(1), MR / 2 + 1, MR})
        for (int64_t nr : {int64_t(1), NR - 1, NR}) {
          if (nr < 1 || mr < 1 || mr > MR) continue;
          const int64_t as = MR + 1;  // a row-pointer stride larger than MR
          std::vector<std::vector<float>> arows(size_t(ntaps * as + 1));
          std::vector<const float*> a(size_t(ntaps * as + 1));
          for (size_t r = 0; r < arows.size(); ++r) {
            arows[r] = test::random_vec<float>(rng, size_t(kc + 1));
            a[r] = arows[r].data();
          }
          std::vector<std::vector<float>> bt(size_t(ntaps + 1));
          std::vector<const float*> b(size_t(ntaps + 1));
          for (size_t t = 0; t < bt.size(); ++t) {
            bt[t] = test::random_vec<float>(rng, size_t(kc * NR + 1));
            b[t] = bt[t].data();
          }
          std::vector<std::vector<float>> c(size_t(MR), std::vector<float>(size_t(NR + 1), kSentinel));
          std::vector<float*> cp(static_cast<size_t>(MR));
          for (int64_t i = 0; i < MR; ++i) cp[size_t(i)] = c[size_t(i)].data();
          u.rows(ntaps, kc, a.data(), as, b.data(), cp.data(), mr, nr);
          const std::string at = who + " ntaps=" + std::to_string(ntaps) + " kc=" + std::to_string(kc) +
                                 " mr=" + std::to_string(mr) + " nr=" + std::to_string(nr);
          if (ntaps == 1 && kc > 1) {
            // rows_acc: the first k1 values by rows, the rest added by rows_acc from k1 on: the
            // same bits as one call (each sum one chain of FMAs in k order), nothing outside the tile.
            const int64_t k1 = kc / 2;
            std::vector<std::vector<float>> c2(size_t(MR), std::vector<float>(size_t(NR + 1), kSentinel));
            std::vector<float*> cp2(static_cast<size_t>(MR));
            std::vector<const float*> a2(a.size());
            for (int64_t i = 0; i < MR; ++i) cp2[size_t(i)] = c2[size_t(i)].data();
            u.rows(1, k1, a.data(), as, b.data(), cp2.data(), mr, nr);
            for (size_t r = 0; r < a.size(); ++r) a2[r] = a[r] + k1;
            const float* b2 = b[0] + k1 * NR;
            u.rows_acc(1, kc - k1, a2.data(), as, &b2, cp2.data(), mr, nr);
            for (int64_t i = 0; i < MR; ++i)
              if (std::memcmp(c2[size_t(i)].data(), c[size_t(i)].data(), sizeof(float) * size_t(NR + 1)) != 0)
                FAIL_CHECK(at << ": rows + rows_acc differ from one rows call in row " << i);
          }
          for (int64_t i = 0; i < MR; ++i)
            for (int64_t j = 0; j <= NR; ++j) {
              if (i >= mr || j >= nr) {
                if (c[size_t(i)][size_t(j)] != kSentinel) FAIL_CHECK(at << ": wrote outside the tile at " << i << "," << j);
                continue;
              }
              double want = 0, mag = 0;
              for (int64_t t = 0; t < ntaps; ++t)
                for (int64_t k = 0; k < kc; ++k) {
                  const double term = double(a[size_t(t * as + i)][k]) * double(b[size_t(t)][k * NR + j]);
                  want += term, mag += std::fabs(term);
                }
              check(c[size_t(i)][size_t(j)], want, mag, at);
            }
        }
}

// cols(): c[i*ldc + j] (+)= sum_k a[k][a_off + i] * b[k*ldb + j] for i < mr, j < nr; with
// `strided`, cols_strided() on the same rows laid out a[k] = a + k*lda; with `pf`, their
// prefetching bodies (cols_pf, cols_strided_pf: prefetches over b and c, the same values).
void test_cols(simd::Isa isa, const simd::GemmUkernel& u, std::mt19937& rng, bool strided, bool pf) {
  const int64_t MR = u.tile.rows, NR = int64_t(u.tile.vectors) * u.lanes;
  const std::string who = name(isa, u) + (strided ? " cols_strided" : " cols") + (pf ? "_pf" : "");
  for (int64_t kc : {0, 1, 9, 40})
    for (int64_t mr : {int64_t(1), MR / 2 + 1, MR})
      for (int64_t nr : {int64_t(1), NR - 1, NR})
        for (bool accumulate : {false, true}) {
          if (nr < 1) continue;
          const int64_t a_off = 3, ldb = NR + 5, ldc = NR + 2;
          std::vector<std::vector<float>> arows(size_t(kc + 1));
          std::vector<const float*> a(size_t(kc + 1));
          for (size_t k = 0; k < arows.size(); ++k) {
            arows[k] = test::random_vec<float>(rng, size_t(a_off + MR));  // rows i >= mr readable too
            a[k] = arows[k].data();
          }
          const std::vector<float> b = test::random_vec<float>(rng, size_t(kc * ldb + NR));
          std::vector<float> c0 = test::random_vec<float>(rng, size_t(MR * ldc));
          for (int64_t i = 0; i < MR; ++i)
            for (int64_t j = 0; j < ldc; ++j)
              if (i >= mr || j >= nr) c0[size_t(i * ldc + j)] = kSentinel;
          std::vector<float> c = c0;
          // Strided: the same row values in one buffer, lda = a_off + MR + 2 apart (rows i >= mr readable).
          const int64_t lda = a_off + MR + 2;
          std::vector<float> flat(size_t((kc + 1) * lda));
          for (int64_t k = 0; k < kc; ++k)
            std::copy(arows[size_t(k)].begin(), arows[size_t(k)].end(), flat.begin() + k * lda);
          const uintptr_t pa = reinterpret_cast<uintptr_t>(b.data()), pb = reinterpret_cast<uintptr_t>(c.data());
          if (strided && pf)
            u.cols_strided_pf(kc, flat.data() + a_off, lda, b.data(), ldb, c.data(), ldc, mr, nr, accumulate, pa, 64, pb, 4);
          else if (strided) u.cols_strided(kc, flat.data() + a_off, lda, b.data(), ldb, c.data(), ldc, mr, nr, accumulate);
          else if (pf) u.cols_pf(kc, a.data(), a_off, b.data(), ldb, c.data(), ldc, mr, nr, accumulate, pa, 64, pb, 4);
          else u.cols(kc, a.data(), a_off, b.data(), ldb, c.data(), ldc, mr, nr, accumulate);
          const std::string at = who + " kc=" + std::to_string(kc) + " mr=" + std::to_string(mr) +
                                 " nr=" + std::to_string(nr) + " accumulate=" + std::to_string(accumulate);
          for (int64_t i = 0; i < MR; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
              const float got = c[size_t(i * ldc + j)];
              if (i >= mr || j >= nr) {
                if (got != kSentinel) FAIL_CHECK(at << ": wrote outside the tile at " << i << "," << j);
                continue;
              }
              double want = accumulate ? double(c0[size_t(i * ldc + j)]) : 0.0, mag = std::fabs(want);
              for (int64_t k = 0; k < kc; ++k) {
                const double term = double(a[size_t(k)][a_off + i]) * double(b[size_t(k * ldb + j)]);
                want += term, mag += std::fabs(term);
              }
              check(got, want, mag, at);
            }
        }
}

// A filter gradient's random x and dy for p, and a w of zeros (run_conv's filter operand, unread).
struct FilterOperands {
  std::vector<float> x, dy, w;
};
FilterOperands filter_operands(const gradrt::ConvParams& p, std::mt19937& rng) {
  return {test::random_vec<float>(rng, p.x_elements()), test::random_vec<float>(rng, p.y_elements()),
          std::vector<float>(size_t(p.w_elements()))};
}

// Gradient `k` of p (random operands, 2 threads) at `isa` under tunings a and b: the same bits.
void check_same_bits(simd::Isa isa, const simd::ConvTuning& a, const simd::ConvTuning& b, const gradrt::ConvParams& p,
                     std::mt19937& rng, test::ConvKernel k) {
  CAPTURE(simd::isa_name(isa));
  CAPTURE(test::describe(p));
  auto [x, dy, w] = filter_operands(p, rng);
  if (k == test::ConvKernel::bwd_input) w = test::random_vec<float>(rng, p.w_elements());
  std::vector<float> out[2];
  for (int mode = 0; mode < 2; ++mode) {
    std::vector<test::Variant> here = cpu_variants_with(isa, mode == 0 ? a : b);
    REQUIRE(!here.empty());
    REQUIRE(test::run_conv(here[0].backend, k, p, 2, x, w, dy, &out[mode]).ok());
  }
  CHECK(test::same_bits(out[0], out[1]));
}
void check_same_filter_bits(simd::Isa isa, const simd::ConvTuning& a, const simd::ConvTuning& b,
                            const gradrt::ConvParams& p, std::mt19937& rng) {
  check_same_bits(isa, a, b, p, rng, test::ConvKernel::bwd_filter);
}

}  // namespace

TEST_CASE("cpu: GEMM micro-kernels of every ISA unit and tile against a scalar loop") {
  std::mt19937 rng(2211);
  int tested = 0;
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::KernelTable* t = simd::kernel_table(isa);
    for (const simd::GemmUkernel& u : t->gemm) {
      if (u.tile.rows == 0) continue;
      REQUIRE(bool(u.rows));
      REQUIRE(bool(u.rows_acc));
      REQUIRE(bool(u.cols));
      REQUIRE(bool(u.cols_strided));
      REQUIRE(bool(u.cols_pf));
      REQUIRE(bool(u.cols_strided_pf));
      test_rows(isa, u, rng);
      for (bool pf : {false, true}) {
        test_cols(isa, u, rng, false, pf);
        test_cols(isa, u, rng, true, pf);
      }
      ++tested;
    }
  }
  CHECK(tested >= 3);  // scalar's tile and its two remainder variants at least
}

// ConvTuning::input_k_block and input_prefetch_dx, gates opened (0 bytes): the input gradient
// with K runs cut into blocks (1x1 with 40 and 70 dy channels in blocks of 16: a short last
// block; 40 and 24 dx channels: a partial last column panel; remainder tiles of 2MR/3 and MR/3
// rows, which keep one run) and the next tile's dx prefetched, against the reference at 1 thread
// and the same bits as without (2 threads, every ISA).
TEST_CASE("cpu: input gradient K blocks and dx prefetch: reference values, the same bits") {
  test::IsaGuard guard;
  test::TuningGuard tuning_guard;
  std::mt19937 rng(3011);
  const std::vector<gradrt::ConvParams> shapes = {
      test::same_conv_params(3, 7, 9, 40, 70, 1, 1), test::same_conv_params(2, 11, 13, 24, 40, 1, 1),
      test::same_conv_params(2, 9, 30, 16, 40, 3, 1), test::same_conv_params(1, 8, 8, 33, 17, 1, 2)};
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    simd::ConvTuning off = saved, on = saved;
    off.input_k_block = 0, off.input_prefetch_dx = false;
    on.input_k_block = 16, on.input_k_block_bytes = 0, on.input_prefetch_dx = true, on.input_prefetch_dx_bytes = 0;
    std::vector<test::Variant> here = cpu_variants_with(isa, on);
    for (const gradrt::ConvParams& p : shapes) {
      test::conv_case<float>(here, test::ConvKernel::bwd_input, p, rng);
      test::conv_case<double>(here, test::ConvKernel::bwd_input, p, rng);
    }
    for (const gradrt::ConvParams& p : shapes) check_same_bits(isa, off, on, p, rng, test::ConvKernel::bwd_input);
  }
}

TEST_CASE("cpu: conv drivers with every GEMM tile a unit instantiates") {
  test::IsaGuard guard;
  test::TuningGuard tuning_guard;  // every unit's tuning back on exit, a failed REQUIRE too
  std::mt19937 rng(77);
  // A 3x3 s1 and s2 and a 1x1 shape with channels off every tile size, several K chunks of the
  // filter gradient (a small K chunk), and grouped 3x3 and 1x1 ones (the 1x1 s1 filter gradient
  // reads x at a constant stride: cols_strided, partial tiles packed, group offsets).
  const gradrt::ConvParams shapes[] = {test::same_conv_params(1, 9, 10, 40, 72, 3, 1),
                                       test::same_conv_params(2, 11, 9, 36, 50, 3, 2),
                                       test::same_conv_params(1, 7, 7, 70, 100, 1, 1),
                                       test::same_conv_params(1, 8, 9, 24, 36, 3, 1, 3),
                                       test::same_conv_params(2, 8, 9, 30, 36, 1, 1, 3)};
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    for (const simd::GemmTile& tile : simd::unit_tiles(isa).gemm) {
      if (tile.rows == 0) continue;
      CAPTURE(simd::isa_name(isa));
      CAPTURE(tile.rows);
      CAPTURE(tile.vectors);
      simd::ConvTuning tu = saved;
      tu.conv2d = tu.backprop_input = tu.backprop_filter = tile;
      tu.filter_k_narrow = 64, tu.filter_k_wide = 48;
      tu.input_fit_columns = false;  // this tile for the input gradient too, whatever fic
      std::vector<test::Variant> here = cpu_variants_with(isa, tu);
      for (const gradrt::ConvParams& p : shapes)
        for (test::ConvKernel k : {test::ConvKernel::fwd, test::ConvKernel::bwd_input, test::ConvKernel::bwd_filter})
          test::conv_case<float>(here, k, p, rng);
      // The input gradient with the other dy-prefetch setting (per microarchitecture).
      tu.input_prefetch_dy = !tu.input_prefetch_dy;
      REQUIRE(simd::set_cpu_tuning(isa, tu));
      for (const gradrt::ConvParams& p : shapes) test::conv_case<float>(here, test::ConvKernel::bwd_input, p, rng);
      // The input gradient's tile chosen by the dx channels (ConvTuning::input_fit_columns)
      // from this preferred tile: narrow and wide dx channels, small images in a large batch
      // (tiles spanning rows and images), strides 1 and 2, float and double.
      tu.input_fit_columns = true;
      REQUIRE(simd::set_cpu_tuning(isa, tu));
      for (int64_t fic : {8, 16, 24, 32, 40, 96})
        for (int64_t s : {1, 2}) {
          const gradrt::ConvParams p = test::same_conv_params(5, 6, 7, fic, 24, 3, s);
          test::conv_case<float>(here, test::ConvKernel::bwd_input, p, rng);
          test::conv_case<double>(here, test::ConvKernel::bwd_input, p, rng);
        }
      test::conv_case<float>(here, test::ConvKernel::bwd_input, test::same_conv_params(3, 5, 5, 16, 8, 1, 1), rng);
    }
  }
}

TEST_CASE("cpu: conv filter gradient with few input channels (conv2d_backprop_filter_few_c.h) at every ISA") {
  test::IsaGuard guard;
  test::TuningGuard tuning_guard;  // every unit's tuning back on exit, a failed REQUIRE too
  std::mt19937 rng(21);
  auto shape = [](int64_t n, int64_t h, int64_t w, int64_t ci, int64_t co, int64_t f, int64_t s) {
    return test::same_conv_params(n, h, w, ci, co, f, s);
  };
  // Input channels 1-4 with out_c in whole vectors at every width (16, 32, 48, 64, 96: the
  // path) and out_c 20 (the per-tap GEMM at 8- and 16-wide units), 5 channels (the per-tap
  // GEMM); 7x7/2, 3x3/1, 3x3/2, 5x5/1 and an even 2x2 filter (padding on one side only);
  // images narrower than the filter; several chunks and segments (4 images of 32x30, chunks
  // across image boundaries); VALID padding, uneven strides, vertical dilation, and a
  // filter row of more values than the accumulators hold (7x7x4 = 28 rows).
  std::vector<gradrt::ConvParams> shapes = {
      shape(2, 13, 11, 3, 32, 7, 2), shape(3, 9, 10, 3, 32, 3, 1), shape(2, 12, 9, 3, 16, 3, 2),
      shape(1, 8, 7, 1, 48, 5, 1),   shape(2, 6, 7, 2, 16, 2, 1),  shape(1, 3, 4, 4, 64, 7, 1),
      shape(1, 9, 8, 4, 96, 3, 2),   shape(1, 7, 9, 5, 32, 3, 1),  shape(1, 9, 9, 3, 20, 3, 1),
      shape(4, 32, 30, 3, 32, 3, 1), shape(3, 21, 23, 3, 16, 7, 2), shape(1, 10, 12, 4, 64, 7, 1)};
  {
    gradrt::ConvParams v = shape(2, 11, 13, 3, 32, 3, 1);  // VALID, strides 2x3, dilation 2x1
    v.stride_h = 2, v.stride_w = 3, v.dilation_h = 2, v.pad_top = v.pad_left = 0;
    v.out_h = (v.in_h - 5) / 2 + 1, v.out_w = (v.in_w - 3) / 3 + 1;
    shapes.push_back(v);
    gradrt::ConvParams e = shape(1, 10, 10, 3, 16, 3, 1);  // explicit padding, wider on the right
    e.pad_top = 2, e.pad_left = 0, e.out_h = 10 + 2 + 1 - 3 + 1, e.out_w = 10 + 0 + 3 - 3 + 1;
    shapes.push_back(e);
  }
  // 3x3/1 with 48 columns (3 vectors at 16: a 2- and a 1-vector pass), 5x5/2, out_h below the
  // filter height, 7x7/2 on 3 rows.
  for (const gradrt::ConvParams& p : {shape(2, 14, 9, 3, 48, 3, 1), shape(1, 11, 13, 2, 32, 5, 2),
                                      shape(1, 2, 6, 3, 16, 3, 1), shape(1, 3, 17, 3, 64, 7, 2)})
    shapes.push_back(p);
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    // max_c 0: the per-tap GEMM, the same shapes; stack: whole filter rows stacked in a tile;
    // else a row per tile.
    struct Mode {
      int64_t max_c;
      bool stack;
    };
    for (Mode md : {Mode{4, true}, Mode{4, false}, Mode{0, true}}) {
      CAPTURE(simd::isa_name(isa));
      CAPTURE(md.max_c);
      CAPTURE(md.stack);
      simd::ConvTuning tu = saved;
      tu.filter_few_c_max = md.max_c;
      tu.filter_few_c_stack = md.stack;
      std::vector<test::Variant> here = cpu_variants_with(isa, tu);
      for (const gradrt::ConvParams& p : shapes) {
        test::conv_case<float>(here, test::ConvKernel::bwd_filter, p, rng);
        test::conv_case<double>(here, test::ConvKernel::bwd_filter, p, rng);
      }
    }
    // Stacked or a row per tile, each dw value is the same chain of FMAs in pixel order: the
    // same bits.
    simd::ConvTuning unstacked = saved, stacked = saved;
    unstacked.filter_few_c_stack = false, stacked.filter_few_c_stack = true;
    for (const gradrt::ConvParams& p : shapes) check_same_filter_bits(isa, unstacked, stacked, p, rng);
    // The prefetch of the next segment (ConvTuning::filter_few_c_prefetch), from any size of dy
    // here (the shapes above, padded and strided, and 16 images of 32x32 -> 32: 3 passes of 6 rows
    // per segment, segments across images and chunks), with it and without: the same bits (the
    // tile's prefetch body itself: the row tester).
    simd::ConvTuning no_pf = saved, pf = saved;
    no_pf.filter_few_c_prefetch = false, pf.filter_few_c_prefetch = true, pf.filter_few_c_prefetch_bytes = 0;
    for (const gradrt::ConvParams& p : shapes) check_same_filter_bits(isa, no_pf, pf, p, rng);
    check_same_filter_bits(isa, no_pf, pf, shape(16, 32, 32, 3, 32, 3, 1), rng);
  }
}

// The filter gradients' prefetch of the next block reads ConvParams::x_rows_under: every x
// element under output rows r0..r1 lies in its range (brute force over the rows and taps), and
// where r0's first tap row and r1's last lie inside their images the range starts and ends there.
TEST_CASE("cpu: x_rows_under covers the x rows under output rows, across images") {
  std::vector<gradrt::ConvParams> shapes = {test::same_conv_params(3, 9, 7, 2, 4, 3, 1),
                                            test::same_conv_params(2, 11, 5, 3, 4, 3, 2),
                                            test::same_conv_params(2, 6, 6, 1, 1, 7, 2)};
  gradrt::ConvParams big_pad = test::same_conv_params(2, 5, 4, 2, 2, 3, 1);
  big_pad.pad_top = 6, big_pad.dilation_h = 2, big_pad.out_h = 9;  // rows with every tap in the padding
  shapes.push_back(big_pad);
  for (const gradrt::ConvParams& p : shapes) {
    CAPTURE(test::describe(p));
    const int64_t rows = p.batch * p.out_h, row = p.in_w * p.in_c;  // output rows; x values a row
    for (int64_t r0 = 0; r0 < rows; ++r0)
      for (int64_t r1 = r0; r1 < rows; ++r1) {
        CAPTURE(r0);
        CAPTURE(r1);
        const auto [begin, end] = p.x_rows_under(r0, r1);
        CHECK(begin <= end);
        for (int64_t r = r0; r <= r1; ++r)
          for (int64_t ky = 0; ky < p.filter_h; ++ky) {
            const int64_t iy = p.in_row(r % p.out_h, ky);
            if (iy < 0 || iy >= p.in_h) continue;
            const int64_t at = p.x_at(r / p.out_h, iy, 0, 0);
            CHECK((begin <= at && at + row <= end));
          }
        const int64_t y0 = p.in_row(r0 % p.out_h, 0), y1 = p.in_row(r1 % p.out_h, p.filter_h - 1);
        if (y0 >= 0 && y0 < p.in_h && y1 >= 0 && y1 < p.in_h) {
          CHECK(begin == p.x_at(r0 / p.out_h, y0, 0, 0));
          CHECK(end == p.x_at(r1 / p.out_h, y1 + 1, 0, 0));
        }
      }
  }
}

// K slices (conv2d_backprop_filter.h): the pixels cut into slices by the shape, partial dw per
// slice, added in slice order. Forced with a small filter_split_pixels so that small shapes
// get many slices (the cap of 32 too, and slices that cut images and chunks anywhere).
TEST_CASE("cpu: conv filter gradient in K slices (conv2d_backprop_filter.h) at every ISA") {
  test::IsaGuard guard;
  test::TuningGuard tuning_guard;  // every unit's tuning back on exit, a failed REQUIRE too
  std::mt19937 rng(2121);
  // 1x1 with fic 32 (tiles 12+12+8 at avx512), a 3x3 s1 and s2, a grouped 3x3, out_c off the
  // vector width (packed panels), fic off the tile rows (padded tiles), 5 channels, a 2x2
  // filter with dilation 2 and VALID padding.
  std::vector<gradrt::ConvParams> shapes = {
      test::same_conv_params(4, 8, 8, 32, 32, 1, 1), test::same_conv_params(2, 9, 7, 16, 24, 3, 1),
      test::same_conv_params(3, 11, 10, 8, 16, 3, 2), test::same_conv_params(2, 8, 9, 12, 18, 3, 1, 3),
      test::same_conv_params(5, 6, 6, 5, 7, 1, 1),   test::same_conv_params(1, 33, 31, 19, 40, 1, 1)};
  {
    gradrt::ConvParams v = test::same_conv_params(2, 12, 11, 6, 32, 2, 1);
    v.dilation_h = v.dilation_w = 2, v.pad_top = v.pad_left = 0;
    v.out_h = v.in_h - 2, v.out_w = v.in_w - 2;
    shapes.push_back(v);
  }
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    for (int64_t min_pixels : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{50}}) {
      CAPTURE(simd::isa_name(isa));
      CAPTURE(min_pixels);
      simd::ConvTuning tu = saved;
      tu.filter_few_c_max = 0;  // every shape through the per-tap GEMM
      tu.filter_split_pixels = min_pixels, tu.filter_split_kib = 1 << 20, tu.filter_split_tiles = 1 << 20;
      std::vector<test::Variant> here = cpu_variants_with(isa, tu);
      const simd::KernelTable* kt = simd::kernel_table(isa);
      for (const gradrt::ConvParams& p : shapes) {
        const int64_t npix = p.batch * p.out_h * p.out_w;
        const int64_t want = min_pixels == 0 ? 1 : std::min<int64_t>(32, npix / min_pixels);
        CHECK(kt->filter_path(tu, p, false).slices == (want >= 2 ? want : 1));
        // conv_case: against the reference, and the same bits at every rerun thread count.
        test::conv_case<float>(here, test::ConvKernel::bwd_filter, p, rng);
        test::conv_case<double>(here, test::ConvKernel::bwd_filter, p, rng);
      }
    }
  }
  // The prefetch of the next K chunk (ConvTuning::filter_chunk_prefetch), from any size of x + dy
  // and any lines ahead and FLOPs per line here: the shapes above in slices of 50 pixels and K chunks of 40 (the next
  // chunk of the slice or of the next one; padded, grouped, dilated, VALID), 1x1 32->32 at 16 x
  // 32x32 and 64->96 at 8 x 32x32 (several panels), 3x3 s2 24->40 at 8 x 72x72 (x rows under the
  // chunk's output rows, across images), the last three at the row's sizes; with it and without,
  // the same bits.
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    simd::ConvTuning no_pf = saved, pf = saved, no_pf_any = saved, pf_any = saved;
    no_pf.filter_chunk_prefetch = false, pf.filter_chunk_prefetch = true;
    no_pf_any.filter_few_c_max = pf_any.filter_few_c_max = 0;
    no_pf_any.filter_split_pixels = pf_any.filter_split_pixels = 50;
    no_pf_any.filter_k_narrow = pf_any.filter_k_narrow = no_pf_any.filter_k_wide = pf_any.filter_k_wide = 40;
    no_pf_any.filter_chunk_prefetch = false, pf_any.filter_chunk_prefetch = true;
    pf_any.filter_chunk_prefetch_bytes = 0, pf_any.filter_chunk_prefetch_ahead = int64_t{1} << 40;
    pf_any.filter_chunk_prefetch_min_flops = 0;
    for (const gradrt::ConvParams& p : shapes) check_same_filter_bits(isa, no_pf_any, pf_any, p, rng);
    for (const gradrt::ConvParams& p : {test::same_conv_params(16, 32, 32, 32, 32, 1, 1),
                                        test::same_conv_params(8, 32, 32, 64, 96, 1, 1),
                                        test::same_conv_params(8, 72, 72, 24, 40, 3, 2)})
      check_same_filter_bits(isa, no_pf, pf, p, rng);
  }
  // The cap on the partials' bytes: 1 KiB holds one float dw of 256 values, not two. The cap
  // on dw tiles: a 3x3 filter is 9 tiles or more at any unit.
  simd::ConvTuning tu = simd::cpu_tuning(simd::cpu_isa());
  tu.filter_few_c_max = 0, tu.filter_split_pixels = 1, tu.filter_split_kib = 1, tu.filter_split_tiles = 1 << 20;
  const simd::KernelTable* kt = simd::kernel_table(simd::cpu_isa());
  const gradrt::ConvParams p = test::same_conv_params(4, 8, 8, 16, 16, 1, 1);
  CHECK(kt->filter_path(tu, p, false).slices == 1);
  tu.filter_split_kib = 2;
  CHECK(kt->filter_path(tu, p, false).slices == 2);
  tu.filter_split_kib = 1024, tu.filter_split_tiles = 8;
  CHECK(kt->filter_path(tu, test::same_conv_params(4, 8, 8, 16, 16, 3, 1), false).slices == 1);
}

// Oc blocks (ConvTuning::filter_oc_blocks): on several threads a wide, tap-poor filter's work
// items split the oc panels too, or only the row tiles; the reference's values and the same bits
// at every rerun thread count either way (conv_case), every ISA.
TEST_CASE("cpu: conv filter gradient with and without oc blocks per thread, every ISA") {
  test::IsaGuard guard;
  test::TuningGuard tuning_guard;
  std::mt19937 rng(2525);
  // ocg > 16 x taps: 1x1 -> 80 and -> 200 (several panels at every unit), 3x3 -> 160.
  const std::vector<gradrt::ConvParams> shapes = {test::same_conv_params(2, 7, 9, 24, 80, 1, 1),
                                                  test::same_conv_params(1, 5, 5, 12, 200, 1, 1),
                                                  test::same_conv_params(1, 6, 5, 8, 160, 3, 1)};
  for (simd::Isa isa : simd::supported_isas())
    for (bool blocks : {true, false}) {
      CAPTURE(simd::isa_name(isa));
      CAPTURE(blocks);
      simd::ConvTuning tu = simd::cpu_tuning(isa);
      tu.filter_oc_blocks = blocks;
      std::vector<test::Variant> here = cpu_variants_with(isa, tu);
      for (const gradrt::ConvParams& p : shapes) {
        test::conv_case<float>(here, test::ConvKernel::bwd_filter, p, rng);
        test::conv_case<double>(here, test::ConvKernel::bwd_filter, p, rng);
      }
    }
}

TEST_CASE("cpu: tile table and GRADRT_CPU_TILES parsing") {
  using simd::Isa;
  simd::ConvTuning t = simd::conv_tuning(Isa::avx512, simd::Microarch::zen5);
  CHECK(t.backprop_input == simd::GemmTile{12, 2});  // the tiles measured best on Zen 5 stay
  CHECK(simd::microarch_of({"AuthenticAMD", 0x1a, 0x02}) == simd::Microarch::zen5);
  CHECK(simd::microarch_of({"AuthenticAMD", 0x19, 0x11}) == simd::Microarch::zen4);
  CHECK(simd::microarch_of({"AuthenticAMD", 0x19, 0x01}) == simd::Microarch::unknown);  // Zen 3
  CHECK(simd::microarch_of({"GenuineIntel", 6, 0xcf}) == simd::Microarch::sapphire_rapids);
  CHECK(simd::microarch_of({"GenuineIntel", 6, 0x55}) == simd::Microarch::skylake_server);  // Cascade Lake
  CHECK(simd::microarch_of({"GenuineIntel", 6, 0x6a}) == simd::Microarch::unknown);  // Ice Lake-SP: not this row
  // A VM's model number with AMX (session 20's host): the server core it must be; without AMX, unknown.
  CHECK(simd::microarch_of({"GenuineIntel", 6, 0xa7, true}) == simd::Microarch::sapphire_rapids);
  CHECK(simd::microarch_of({"GenuineIntel", 6, 0xa7, false}) == simd::Microarch::unknown);
  CHECK(simd::microarch_of({"AuthenticAMD", 6, 0x55}) == simd::Microarch::unknown);
  CHECK(std::string(simd::microarch_name(simd::Microarch::skylake_server)) == "skylake_server");
  CHECK(std::string(simd::microarch_name(simd::Microarch::sapphire_rapids)) == "sapphire_rapids");
  simd::ConvTuning s = t;
  CHECK(simd::apply_tiles_override(Isa::avx512, "input=6x4,filter=12x2,filter_k=128/64", &s));
  CHECK(s.backprop_input == simd::GemmTile{6, 4});
  CHECK(s.backprop_filter == simd::GemmTile{12, 2});
  CHECK(s.filter_k_narrow == 128);
  CHECK(s.filter_k_wide == 64);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::sapphire_rapids).input_prefetch_dy == false);
  {  // Cascade Lake's row: the 6x4 tile for the three GEMM drivers.
    const simd::ConvTuning c = simd::conv_tuning(Isa::avx512, simd::Microarch::skylake_server);
    CHECK(c.backprop_input == simd::GemmTile{6, 4});
    CHECK(c.backprop_filter == simd::GemmTile{6, 4});
    CHECK(c.conv2d == simd::GemmTile{6, 4});
    CHECK(c.filter_k_narrow == 512);
    CHECK(c.filter_k_wide == 128);
    CHECK_FALSE(c.input_prefetch_dy);
    CHECK(c.depthwise_filter_prefetch);
    CHECK(simd::tiles_built(Isa::avx512, c));
  }
  // A 0|1 key: =0 clears its flag, =1 sets it, `bad` is refused.
  auto check_flag = [&](const std::string& key, bool simd::ConvTuning::*flag, const char* bad) {
    CAPTURE(key);
    CHECK(simd::apply_tiles_override(Isa::avx512, (key + "=0").c_str(), &s));
    CHECK_FALSE(s.*flag);
    CHECK(simd::apply_tiles_override(Isa::avx512, (key + "=1").c_str(), &s));
    CHECK(s.*flag);
    CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, (key + "=" + bad).c_str(), &s));
  };
  CHECK(simd::apply_tiles_override(Isa::avx512, "filter_split=0/64/8", &s));
  CHECK(s.filter_split_pixels == 0);
  CHECK(s.filter_split_kib == 64);
  CHECK(s.filter_split_tiles == 8);
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "filter_split=1024/64", &s));
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "filter_split=-1/64/8", &s));
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "filter_share=1", &s));  // removed (session 14)
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "filter_pf=16", &s));    // removed (session 16)
  check_flag("filter_stack", &simd::ConvTuning::filter_few_c_stack, "-1");
  check_flag("few_c_pf", &simd::ConvTuning::filter_few_c_prefetch, "2");
  check_flag("chunk_pf", &simd::ConvTuning::filter_chunk_prefetch, "on");
  CHECK(simd::apply_tiles_override(Isa::avx512, "chunk_pf=1/2048/256", &s));
  CHECK(s.filter_chunk_prefetch);
  CHECK((s.filter_chunk_prefetch_bytes == 2048 << 10 && s.filter_chunk_prefetch_ahead == 256 << 10));
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::sapphire_rapids).filter_chunk_prefetch_min_flops == 0);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::zen5).filter_chunk_prefetch);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::zen5).filter_chunk_prefetch_min_flops == 2048);
  CHECK_FALSE(simd::conv_tuning(Isa::avx2, simd::Microarch::zen5).filter_chunk_prefetch);
  CHECK(simd::apply_tiles_override(Isa::avx512, "chunk_pf=1/2048/256/3000", &s));
  CHECK(s.filter_chunk_prefetch_min_flops == 3000);
  for (const char* bad : {"chunk_pf=1/2048", "chunk_pf=2/1/1", "chunk_pf=1/-1/8", "chunk_pf=1/8/8x", "chunk_pf=1/8/8/",
                          "chunk_pf=1/8/8/8/8"})
    CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, bad, &s));
  check_flag("filter_oc", &simd::ConvTuning::filter_oc_blocks, "yes");
  CHECK(simd::apply_tiles_override(Isa::avx512, "bn_rev=16/64", &s));
  CHECK((s.bn_grad_dx_reverse_bytes == 16 << 10 && s.bn_grad_dx_reverse_bytes_mt == 64 << 10));
  CHECK(simd::apply_tiles_override(Isa::avx512, "bn_rev=8", &s));
  CHECK((s.bn_grad_dx_reverse_bytes == 8 << 10 && s.bn_grad_dx_reverse_bytes_mt == -1));
  for (const char* bad : {"bn_rev=8x", "bn_rev=8/", "bn_rev=8/-1", "bn_rev=-1", "bn_rev=8/9/10", "bn_rev=99999999999999",
                          "bn_rev=8/99999999999999", "bn_stream=99999999999999", "bn_stream=-1", "bn_stream=1x"})
    CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, bad, &s));
  CHECK(simd::apply_tiles_override(Isa::avx512, "bn_rows=24576", &s));
  CHECK(s.bn_whole_rows_bytes == int64_t{24} << 20);
  CHECK((s.bn_whole_rows(int64_t{24} << 20) && !s.bn_whole_rows((int64_t{24} << 20) - 1)));
  CHECK(simd::apply_tiles_override(Isa::avx512, "bn_rows=0", &s));
  CHECK_FALSE(s.bn_whole_rows(int64_t{1} << 40));
  for (const char* bad : {"bn_rows=-1", "bn_rows=8x", "bn_rows=", "bn_rows=8/8", "bn_rows=99999999999999"})
    CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, bad, &s));
  CHECK(simd::apply_tiles_override(Isa::avx512, "dwx_stream=0", &s));
  CHECK(s.dw_input_stream_bytes == 0);
  CHECK(simd::apply_tiles_override(Isa::avx512, "dwx_stream=2048", &s));
  CHECK(s.dw_input_stream_bytes == int64_t{2} << 20);
  for (const char* bad : {"dwx_stream=-1", "dwx_stream=1k", "dwx_stream="})
    CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, bad, &s));
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::unknown).dw_input_stream_bytes == int64_t{16} << 20);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::zen4).bn_whole_rows_bytes == int64_t{24} << 20);
  CHECK(simd::conv_tuning(Isa::avx2, simd::Microarch::zen4).bn_whole_rows_bytes == int64_t{24} << 20);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::zen5).bn_whole_rows_bytes == 0);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::sapphire_rapids).bn_grad_dx_reverse_bytes_mt == 64 << 20);
  CHECK_FALSE(simd::conv_tuning(Isa::avx512, simd::Microarch::sapphire_rapids).filter_oc_blocks);
  CHECK(simd::conv_tuning(Isa::avx2, simd::Microarch::sapphire_rapids).filter_oc_blocks);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::zen5).filter_oc_blocks);
  check_flag("input_pf", &simd::ConvTuning::input_prefetch_dy, "2");
  check_flag("input_dxpf", &simd::ConvTuning::input_prefetch_dx, "2");
  CHECK(simd::apply_tiles_override(Isa::avx512, "input_dxpf=1/64,input_kb=128/32", &s));
  CHECK((s.input_prefetch_dx && s.input_prefetch_dx_bytes == 64 << 10));
  CHECK((s.input_k_block == 128 && s.input_k_block_bytes == 32 << 10));
  CHECK(simd::apply_tiles_override(Isa::avx512, "input_kb=0", &s));
  CHECK((s.input_k_block == 0 && s.input_k_block_bytes == 32 << 10));
  for (const char* bad : {"input_dxpf=0/64", "input_dxpf=1/-1", "input_dxpf=1/", "input_kb=-1", "input_kb=8/",
                          "input_kb=8/x", "input_kb=8/1/2", "input_kb=8/99999999999999", "input_dxpf=1/99999999999999"})
    CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, bad, &s));
  {
    const simd::ConvTuning z = simd::conv_tuning(Isa::avx512, simd::Microarch::zen5);
    CHECK((z.input_prefetch_dx && z.input_k_block == 256 && z.filter_split_tiles == 32));
    const simd::ConvTuning d = simd::conv_tuning(Isa::avx512, simd::Microarch::unknown);
    CHECK((!d.input_prefetch_dx && d.input_k_block == 0));
  }
  check_flag("input_groups", &simd::ConvTuning::input_edge_groups, "on");
  CHECK(s.filter_few_c_max == 4);
  CHECK(simd::apply_tiles_override(Isa::avx512, "filter_few_c=0", &s));
  CHECK(s.filter_few_c_max == 0);
  CHECK(simd::apply_tiles_override(Isa::avx512, "filter_few_c=4", &s));
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "filter_few_c=-1", &s));
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "filter_few_c=3x", &s));
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::sapphire_rapids).depthwise_filter_prefetch == false);
  CHECK(simd::conv_tuning(Isa::avx512, simd::Microarch::zen5).depthwise_filter_prefetch == true);
  {  // The avx2 unit on those Intel cores: its own 6x2 tile, the row's cache settings (session 14).
    const simd::ConvTuning a = simd::conv_tuning(Isa::avx2, simd::Microarch::sapphire_rapids);
    CHECK(a.backprop_input == simd::GemmTile{6, 2});
    CHECK(a.backprop_filter == simd::GemmTile{6, 2});
    CHECK(a.filter_k_narrow == 512);
    CHECK_FALSE(a.input_prefetch_dy);
    CHECK_FALSE(a.depthwise_filter_prefetch);
    CHECK(a.bn_grad_stream_bytes == int64_t{1} << 20);
    const simd::ConvTuning u = simd::conv_tuning(Isa::avx2, simd::Microarch::unknown);  // the AVX2 EPYC
    CHECK(u.input_prefetch_dy);
    CHECK(u.depthwise_filter_prefetch);
    CHECK(simd::conv_tuning(Isa::sse4_2, simd::Microarch::sapphire_rapids).input_prefetch_dy);
    simd::ConvTuning o = a;  // the avx2 unit's other tiles can be named; sse4_2 has 6x2 only
    CHECK(simd::apply_tiles_override(Isa::avx2, "filter=4x3,input=12x1", &o));
    CHECK(o.backprop_filter == simd::GemmTile{4, 3});
    CHECK(o.backprop_input == simd::GemmTile{12, 1});
    CHECK_FALSE(simd::apply_tiles_override(Isa::sse4_2, "filter=4x3", &o));
  }
  check_flag("dwf_pf", &simd::ConvTuning::depthwise_filter_prefetch, "on");
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "ends=1", &s));  // session 13's two-ended claims: dropped
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "dwf_rows=1", &s));  // session 14's row-major items: dropped
  const simd::ConvTuning before = s;
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "input=5x5", &s));      // not instantiated
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "inptu=12x2", &s));     // unknown key
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "filter_k=0/64", &s));  // K chunk < 1
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx2, "input=12x2", &s));       // an avx512 tile
  CHECK(s.backprop_input == before.backprop_input);
  CHECK(s.filter_k_narrow == before.filter_k_narrow);
  CHECK(s.input_fit_columns);
  CHECK(simd::apply_tiles_override(Isa::avx512, "input_fit=0", &s));
  CHECK_FALSE(s.input_fit_columns);
  CHECK_FALSE(simd::apply_tiles_override(Isa::avx512, "input_fit=yes", &s));
}

TEST_CASE("cpu: the input gradient's tile by dx channels (fewest_padded_columns)") {
  using simd::GemmTile;
  const simd::Tiles& u = simd::tiles::avx512;  // 12x2 and 6x4: NR 32 and 64 floats, 16 and 32 doubles
  CHECK(simd::fewest_padded_columns(u, {6, 4}, 32, 16) == GemmTile{12, 2});  // 32 columns, not 64
  CHECK(simd::fewest_padded_columns(u, {6, 4}, 8, 16) == GemmTile{12, 2});
  CHECK(simd::fewest_padded_columns(u, {6, 4}, 64, 16) == GemmTile{6, 4});   // a tie keeps the preferred
  CHECK(simd::fewest_padded_columns(u, {6, 4}, 48, 16) == GemmTile{6, 4});
  CHECK(simd::fewest_padded_columns(u, {6, 4}, 96, 16) == GemmTile{12, 2});  // 96, not 128
  CHECK(simd::fewest_padded_columns(u, {6, 4}, 32, 8) == GemmTile{6, 4});    // double: 32 columns both
  CHECK(simd::fewest_padded_columns(u, {12, 2}, 33, 16) == GemmTile{12, 2});
  CHECK(simd::fewest_padded_columns(u, {5, 5}, 64, 16) == GemmTile{12, 2});  // not built: the default
  // avx2: 6x2, 4x3, 12x1 (NR 16, 24, 8 floats): 3 or 8 columns take 12x1, 24 4x3 (the earlier of
  // two that tie), 32 keeps 6x2 (a tie with 12x1).
  CHECK(simd::fewest_padded_columns(simd::tiles::avx2, {6, 2}, 3, 8) == GemmTile{12, 1});
  CHECK(simd::fewest_padded_columns(simd::tiles::avx2, {6, 2}, 8, 8) == GemmTile{12, 1});
  CHECK(simd::fewest_padded_columns(simd::tiles::avx2, {6, 2}, 24, 8) == GemmTile{4, 3});
  CHECK(simd::fewest_padded_columns(simd::tiles::avx2, {6, 2}, 32, 8) == GemmTile{6, 2});
  CHECK(simd::fewest_padded_columns(simd::tiles::sse4_2, {6, 2}, 3, 4) == GemmTile{6, 2});
}

TEST_CASE("cpu: the input gradient's bits do not depend on the GEMM tile") {
  // Every pixel sums its taps in one order, in a merged K run or tap by tap, whichever tiles
  // it falls into: tiles of 12 and 6 rows (AVX-512) start at other pixels and take other paths
  // at the image edges, and must still give the same bits (the tile is chosen per CPU and per
  // shape, simd/tuning.cpp and ConvTuning::input_fit_columns).
  test::IsaGuard guard;
  test::TuningGuard tuning_guard;  // every unit's tuning back on exit, a failed REQUIRE too
  std::mt19937 rng(321);
  int compared = 0;
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    REQUIRE(simd::set_cpu_isa(isa));
    for (const std::array<int64_t, 5>& shape : std::vector<std::array<int64_t, 5>>{
             {9, 40, 24, 3, 2}, {7, 16, 20, 3, 1}, {6, 33, 8, 1, 1}, {10, 20, 12, 3, 2}, {5, 64, 16, 5, 2},
             // rows wide enough for interior tiles of 6 rows where 12 span rows (main before
             // session 11 gave other bits with 12x2 and 6x4 on these two)
             {28, 24, 16, 3, 1}, {30, 20, 12, 3, 2}}) {
      // (not a structured binding: clang 14, Emscripten's, cannot capture one in CAPTURE's lambda)
      const int64_t hw = shape[0], c = shape[1], oc = shape[2], f = shape[3], s = shape[4];
      CAPTURE(simd::isa_name(isa));
      CAPTURE(hw);
      CAPTURE(c);
      CAPTURE(s);
      test::Host sizes = test::ints({3, hw, hw + 1, c});
      test::Host w = test::random(gradrt::DType::float32, {f, f, c, oc}, rng);
      const int64_t oh = (hw + s - 1) / s, ow = (hw + 1 + s - 1) / s;
      test::Host dy = test::random(gradrt::DType::float32, {3, oh, ow, oc}, rng);
      std::vector<std::vector<float>> got;
      for (const simd::GemmTile& tile : simd::unit_tiles(isa).gemm) {
        if (tile.rows == 0) continue;
        simd::ConvTuning tu = saved;
        tu.backprop_input = tile;
        tu.input_fit_columns = false;
        REQUIRE(simd::set_cpu_tuning(isa, tu));
        gradrt::Tensor dx;
        REQUIRE(gradrt::conv2d_backprop_input(sizes.view(), w.view(), dy.view(),
                                              gradrt::ConvAttrs().Strides({1, s, s, 1}).Padding("SAME"), &dx,
                                              gradrt::RunOptions{"cpu", 1})
                    .ok());
        const float* d = static_cast<const float*>(dx.data());
        got.emplace_back(d, d + dx.num_bytes() / sizeof(float));
      }
      for (size_t i = 1; i < got.size(); ++i) {
        CHECK(std::memcmp(got[i].data(), got[0].data(), got[0].size() * sizeof(float)) == 0);
        ++compared;
      }
    }
  }
  MESSAGE("tile pairs compared: " << compared);
}

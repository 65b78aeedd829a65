// What only the cpu backend (simd/) has: ISA selection, and its kernels' fast paths (kx-reuse
// depthwise rows, interior conv tiles, 3x3 chunks, stride-2 rows, prefetch sizes, alignment,
// wide channel blocks) against the reference on the geometries that reach them, for every ISA
// this machine runs and bit-identical for 1, 2 and 3 threads; the minimum work per thread.
// Every kernel on random geometries, on every backend variant: test_backends.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "cases.h"
#include "simd/cpu_isa.h"
#include "simd/tuning.h"
#include "harness.h"

namespace {

using gradrt::BatchNormParams;
using gradrt::ConvParams;
using gradrt::Exec;
using test::ConvKernel;
using test::random_vec;
using test::same_bits;
namespace simd = gradrt::simd;

int64_t rnd(std::mt19937& rng, int64_t lo, int64_t hi) { return test::uniform(rng, lo, hi); }  // inclusive

using test::IsaGuard;
using test::TuningGuard;

// cpu vs reference within 8 eps per summed term (the cpu accumulates in T, the reference in double).
template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double k, double scale, const std::string& what) {
  test::check_near(got, want, k, scale, 8, what);
}

// Kernel k on p with random data: the cpu backend at every ISA against the reference, and
// the same bits with 2 and 3 threads (the harness's cpu variants).
template <class T>
void check_cpu_conv(ConvKernel k, const ConvParams& p, std::mt19937& rng) {
  auto cpu = test::variants("cpu");
  test::conv_case<T>(cpu, k, p, rng);
}

// A depthwise geometry: an n x h x w x c input, an fh x fw filter with multiplier m and dilation
// d, strides sh/sw, padding top/left pt/pl and bottom/right pb/pr; the output sizes follow
// (a dilated filter spans (f - 1) * d + 1 input pixels).
ConvParams depthwise_geometry(int64_t n, int64_t h, int64_t w, int64_t c, int64_t fh, int64_t fw, int64_t sh,
                              int64_t sw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t m = 1, int64_t d = 1) {
  ConvParams p;
  p.batch = n;
  p.in_h = h;
  p.in_w = w;
  p.in_c = p.filter_in_c = c;
  p.depth_multiplier = m;
  p.out_c = c * m;
  p.filter_h = fh;
  p.filter_w = fw;
  p.stride_h = sh;
  p.stride_w = sw;
  p.dilation_h = p.dilation_w = d;
  p.pad_top = pt;
  p.pad_left = pl;
  p.out_h = (h + pt + pb - ((fh - 1) * d + 1)) / sh + 1;
  p.out_w = (w + pl + pr - ((fw - 1) * d + 1)) / sw + 1;
  return p;
}

}  // namespace

TEST_CASE("cpu: conv kernels on layer shapes (full register tiles, several K chunks)") {
  IsaGuard guard;
  std::mt19937 rng(99);
  // 3x3 SAME stride 1 and 2, 1x1, a group conv; channels on and off the tile sizes. The last:
  // 840 output pixels, several K chunks of the filter gradient.
  const ConvParams shapes[] = {
      test::same_conv_params(1, 14, 15, 64, 64, 3, 1), test::same_conv_params(2, 13, 12, 40, 72, 3, 2),
      test::same_conv_params(1, 9, 9, 96, 130, 1, 1), test::same_conv_params(1, 10, 11, 48, 36, 3, 1, 3),
      test::same_conv_params(2, 20, 21, 28, 40, 3, 1)};
  for (const ConvParams& p : shapes)
    for (ConvKernel k : {ConvKernel::fwd, ConvKernel::bwd_input, ConvKernel::bwd_filter}) check_cpu_conv<float>(k, p, rng);
}

TEST_CASE("cpu: ISA selection") {
  IsaGuard guard;
  const auto isas = simd::supported_isas();
  REQUIRE(!isas.empty());
  CHECK(std::find(isas.begin(), isas.end(), simd::Isa::scalar) != isas.end());
  CHECK(std::find(isas.begin(), isas.end(), simd::best_isa()) != isas.end());
  for (simd::Isa isa : isas) {
    simd::Isa parsed;
    REQUIRE(simd::isa_from_name(simd::isa_name(isa), &parsed));
    CHECK(parsed == isa);
    REQUIRE(simd::set_cpu_isa(isa));
    CHECK(simd::cpu_isa() == isa);
    CHECK(gradrt::cpu_backend()->detail().find(simd::isa_name(isa)) != std::string::npos);
  }
  simd::Isa bogus;
  CHECK_FALSE(simd::isa_from_name("avx9000", &bogus));
}

// Depthwise rows long enough for the kx-reuse kernels (simd/kernels/depthwise_taps.h):
// full 8- and 4-pixel blocks plus remainders, stride 1 and 2 (the filter gradient's
// step-2 block, the input gradient's 1/2-tap phase classes), kernel widths 2-3 (groups of
// K = 2, 3), channel counts around the vector widths; dilation 2 keeps the ungrouped path.
TEST_CASE("cpu: depthwise kx-reuse rows vs reference") {
  IsaGuard guard;
  std::mt19937 rng(41);
  struct Geo {
    int64_t h, w, c, k, s, d, m;
  };
  const Geo geos[] = {{5, 37, 32, 3, 1, 1, 1}, {4, 30, 19, 3, 2, 1, 1},  {3, 45, 48, 3, 1, 1, 1},
                      {6, 26, 5, 2, 1, 1, 1},  {5, 41, 16, 2, 2, 1, 1},  {4, 29, 37, 3, 2, 1, 1},
                      {6, 23, 17, 3, 1, 2, 1}, {4, 21, 8, 3, 1, 1, 2},   {2, 64, 1, 3, 1, 1, 1}};
  for (const Geo& g : geos)
    for (int pad = 0; pad < 2; ++pad) {
      const int64_t e = (g.k - 1) * g.d + 1;  // the dilated filter's extent; pad: SAME-style
      const int64_t pt = pad ? (e - 1) / 2 : 0, pb = pad ? e - 1 - pt : 0;
      const ConvParams p = depthwise_geometry(2, g.h, g.w, g.c, g.k, g.k, g.s, g.s, pt, pt, pb, pb, g.m, g.d);
      for (ConvKernel k : {ConvKernel::dw_fwd, ConvKernel::dw_bwd_input, ConvKernel::dw_bwd_filter})
        check_cpu_conv<float>(k, p, rng);
    }
}

// Conv gradients on images wide enough for the kernels' fast paths (random_conv's images are
// smaller than one GEMM tile row): Conv2DBackpropInput's interior tiles (a tile inside one
// class row with every tap in range) next to border tiles, for strides 1-2 and SAME-style
// padding, with a filter row's kx taps merged into one K run (strides 1-3), tiles that cross
// images (batch 3) and partial tiles on the smaller row kernels; Conv2DBackpropFilter over
// several pixel chunks, and with oc wide enough that threads split the oc panels (1x1). Each
// vs the reference, and bit-identical for 1, 2, 3 threads.
TEST_CASE("cpu: conv gradients on wide images (interior tiles, chunked filter sums)") {
  IsaGuard guard;
  struct Geo {
    int64_t n, h, w, c, oc, k, s, groups;
  };
  const Geo geos[] = {{2, 9, 31, 20, 24, 3, 1, 1}, {1, 11, 40, 16, 40, 3, 2, 1}, {2, 7, 29, 37, 70, 1, 1, 1},
                      {1, 8, 27, 12, 18, 3, 1, 2}, {1, 6, 33, 9, 5, 5, 2, 1},
                      {1, 10, 45, 8, 16, 4, 3, 1}, {3, 28, 28, 8, 64, 3, 1, 1}, {3, 40, 40, 8, 128, 3, 2, 1}};
  std::mt19937 rng(77);
  for (const Geo& g : geos) {
    const ConvParams p = test::same_conv_params(g.n, g.h, g.w, g.c * g.groups, g.oc * g.groups, g.k, g.s, g.groups);
    for (ConvKernel k : {ConvKernel::bwd_input, ConvKernel::bwd_filter}) check_cpu_conv<float>(k, p, rng);
  }
}

// FusedBatchNormGrad at the layouts a kernel may special-case: inputs at various
// misalignments within a cache line, a misaligned dx, rows of whole cache lines, odd widths
// and an 8 MiB tensor. All must match the reference and give the same bits as the aligned
// inputs at any thread count.
namespace {

// One FusedBatchNormGrad case: random inputs (x in [-2, 3], scale and variance in [0.5, 2]) and the
// reference backend's gradients of them.
template <class T>
struct BatchNormGradCase {
  BatchNormParams p;
  int64_t n, C;
  std::vector<T> x, dy, scale, mean, var, rdx, rds, rdo;
  BatchNormGradCase(std::mt19937& rng, int64_t rows, int64_t channels, bool training) {
    p.rows = rows;
    p.channels = channels;
    p.epsilon = 0.001f;
    p.is_training = training;
    n = rows * channels, C = channels;
    x = random_vec<T>(rng, n, -2, 3);
    dy = random_vec<T>(rng, n);
    scale = random_vec<T>(rng, C, 0.5, 2);
    mean = random_vec<T>(rng, C, 0, 1);
    var = random_vec<T>(rng, C, 0.5, 2);
    rdx.resize(n), rds.resize(C), rdo.resize(C);
    REQUIRE(gradrt::reference_backend()->fused_batch_norm_grad(Exec{1}, p, dy.data(), x.data(), scale.data(),
                                                               mean.data(), var.data(), rdx.data(), rds.data(),
                                                               rdo.data()).ok());
  }
};

template <class T>
void batch_norm_grad_layouts(uint32_t seed) {
  IsaGuard guard;
  std::mt19937 rng(seed);
  constexpr int64_t kLine = 64 / sizeof(T);  // elements per cache line
  struct Shape {
    int64_t rows, channels;
  };
  const int64_t big_rows = (int64_t(8) << 20) / (256 * int64_t(sizeof(T)));
  for (Shape sh : {Shape{3, kLine}, Shape{200, 4 * kLine}, Shape{131, 256}, Shape{50, 3 * kLine + 5},
                   Shape{big_rows, 256}}) {
    const bool big = sh.rows == big_rows;
    for (bool training : {true, false}) {
      BatchNormGradCase<T> c(rng, sh.rows, sh.channels, training);
      const BatchNormParams& p = c.p;
      const int64_t n = c.n, C = c.C;
      auto &x = c.x, &dy = c.dy, &scale = c.scale, &mean = c.mean, &var = c.var;
      auto &rdx = c.rdx, &rds = c.rds, &rdo = c.rdo;
      // Copies of dy and x at element offsets o (dy) and o2 (x) from a 64-byte boundary.
      std::vector<T> bdy(n + 2 * kLine), bx(n + 2 * kLine), bdx(n + 2 * kLine);
      auto at = [&](std::vector<T>& b, int64_t o) {
        T* base = b.data();
        while (reinterpret_cast<uintptr_t>(base) % 64 != 0) ++base;
        return base + o;
      };
      const int64_t R = std::max<int64_t>(p.rows, 1);
      for (simd::Isa isa : simd::supported_isas()) {
        REQUIRE(simd::set_cpu_isa(isa));
        CAPTURE(simd::isa_name(isa));
        CAPTURE(p.rows);
        CAPTURE(p.channels);
        CAPTURE(training);
        std::vector<T> first[3];
        using Offsets = std::vector<std::pair<int64_t, int64_t>>;
        const Offsets offsets = big ? Offsets{{0, 0}, {kLine / 4, kLine / 4}}
                                    : Offsets{{0, 0}, {1, 1}, {kLine / 4, kLine / 4}, {kLine - 1, 2}, {0, 3}};
        for (auto [o1, o2] : offsets) {
          T* pdy = at(bdy, o1);
          T* px = at(bx, o2);
          std::copy(dy.begin(), dy.end(), pdy);
          std::copy(x.begin(), x.end(), px);
          for (int64_t dxo : {int64_t(0), int64_t(1)}) {
            if (big && dxo) continue;
            for (int threads : {1, 2, 3}) {
              if (big && threads == 3) continue;
              T* pdx = at(bdx, dxo);
              std::fill(pdx, pdx + n, T(-7));
              std::vector<T> ds(C), d0(C);
              REQUIRE(gradrt::cpu_backend()->fused_batch_norm_grad(Exec{threads}, p, pdy, px, scale.data(), mean.data(),
                                                                   var.data(), pdx, ds.data(), d0.data()).ok());
              std::vector<T> dx(pdx, pdx + n);
              if (first[0].empty()) {
                check_close(ds, rds, double(R), 4, "fused_batch_norm_grad scale_backprop");
                check_close(d0, rdo, double(R), 1, "fused_batch_norm_grad offset_backprop");
                check_close(dx, rdx, double(R), 8, "fused_batch_norm_grad x_backprop");
                first[0] = dx;
                first[1] = ds;
                first[2] = d0;
              } else {
                CAPTURE(o1);
                CAPTURE(o2);
                CAPTURE(dxo);
                CAPTURE(threads);
                CHECK(same_bits(dx, first[0]));
                CHECK(same_bits(ds, first[1]));
                CHECK(same_bits(d0, first[2]));
              }
            }
          }
        }
      }
    }
  }
}

// batch_norm_stats with enough channels for every block width of its row sums (8, 4, 2, 1
// vectors and scalar channels) on every ISA; the sums over whole rows (bn_whole_rows_bytes) give
// the same bits.
template <class T>
void batch_norm_stats_widths(uint32_t seed) {
  IsaGuard guard;
  TuningGuard restore;
  std::mt19937 rng(seed);
  for (int64_t C : {256, 200, 144, 115}) {
    BatchNormParams p;
    p.rows = rnd(rng, 100, 700);
    p.channels = C;
    const int64_t n = p.rows * C;
    auto x = random_vec<T>(rng, n, -2, 3);
    std::vector<T> rm(C), rv(C);
    REQUIRE(gradrt::reference_backend()->batch_norm_stats(Exec{1}, p, x.data(), rm.data(), rv.data()).ok());
    for (simd::Isa isa : simd::supported_isas()) {
      REQUIRE(simd::set_cpu_isa(isa));
      CAPTURE(simd::isa_name(isa));
      CAPTURE(C);
      std::vector<T> m1, v1;
      for (int run = 0; run < 6; ++run) {
        const int threads = 1 + run % 3;
        for (const auto& [i, t] : restore.saved) {
          simd::ConvTuning tu = t;
          tu.bn_whole_rows_bytes = run < 3 ? 0 : 1;
          REQUIRE(simd::set_cpu_tuning(i, tu));
        }
        CAPTURE(run);
        std::vector<T> m(C), v(C);
        REQUIRE(gradrt::cpu_backend()->batch_norm_stats(Exec{threads}, p, x.data(), m.data(), v.data()).ok());
        if (run == 0) {
          check_close(m, rm, double(p.rows), 3, "batch_norm_stats mean");
          check_close(v, rv, double(p.rows), 9, "batch_norm_stats variance");
          m1 = m;
          v1 = v;
        } else {
          CHECK(same_bits(m, m1));
          CHECK(same_bits(v, v1));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("cpu: FusedBatchNormGrad misaligned, odd-width and large inputs") {
  batch_norm_grad_layouts<float>(41);
  batch_norm_grad_layouts<double>(42);
}

// FusedBatchNormGrad's dx pass under its ConvTuning choices: normal or non-temporal stores
// (bn_grad_stream_bytes), chunks in order or last first (bn_grad_dx_reverse_bytes, _mt), the sums
// over whole rows or channel blocks (bn_whole_rows_bytes), every ISA, 1/2/3 threads; against the
// reference and the same bits in every configuration.
template <class T>
void batch_norm_grad_dx_modes(uint32_t seed) {
  IsaGuard guard;
  std::mt19937 rng(seed);
  TuningGuard restore;
  struct Shape {
    int64_t rows, channels;
  };
  for (Shape sh : {Shape{2048, 128}, Shape{1500, 80}, Shape{3000, 48}, Shape{700, 300}}) {
    BatchNormGradCase<T> c(rng, sh.rows, sh.channels, true);
    const BatchNormParams& p = c.p;
    const int64_t n = c.n, C = c.C;
    auto &x = c.x, &dy = c.dy, &scale = c.scale, &mean = c.mean, &var = c.var;
    auto &rdx = c.rdx, &rds = c.rds, &rdo = c.rdo;
    for (simd::Isa isa : simd::supported_isas()) {
      REQUIRE(simd::set_cpu_isa(isa));
      CAPTURE(simd::isa_name(isa));
      CAPTURE(C);
      std::vector<T> first[3];
      // {reversed up to (0: never), the same on 2+ threads (-1: as at 1 thread), non-temporal dx
      // from (0: never), whole-row sums from (0: never)}.
      const int64_t big = int64_t(1) << 40, nt = int64_t(64) << 10;
      const int64_t configs[][4] = {{0, -1, 0, 0},  {0, -1, nt, 1}, {big, -1, 0, 0},
                                    {big, -1, nt, 1}, {0, big, nt, 0}, {big, 0, 0, 1}};
      std::vector<T> dxbuf(n + 64 / sizeof(T));
      T* pdx = dxbuf.data();
      while (reinterpret_cast<uintptr_t>(pdx) % 64 != 0) ++pdx;  // vector-aligned: the NT path
      for (const auto& cfg : configs) {
        for (const auto& [i, t] : restore.saved) {
          simd::ConvTuning tu = t;
          tu.bn_grad_dx_reverse_bytes = cfg[0];
          tu.bn_grad_dx_reverse_bytes_mt = cfg[1];
          tu.bn_grad_stream_bytes = cfg[2];
          tu.bn_whole_rows_bytes = cfg[3];
          REQUIRE(simd::set_cpu_tuning(i, tu));
        }
        for (int threads : {1, 2, 3}) {
          CAPTURE(cfg[0]);
          CAPTURE(cfg[1]);
          CAPTURE(cfg[2]);
          CAPTURE(cfg[3]);
          CAPTURE(threads);
          std::fill(pdx, pdx + n, T(-7));
          std::vector<T> ds(C), d0(C);
          REQUIRE(gradrt::cpu_backend()->fused_batch_norm_grad(Exec{threads}, p, dy.data(), x.data(), scale.data(),
                                                               mean.data(), var.data(), pdx, ds.data(),
                                                               d0.data()).ok());
          const std::vector<T> dx(pdx, pdx + n);
          check_close(ds, rds, double(p.rows), 4, "fused_batch_norm_grad dx modes scale_backprop");
          check_close(d0, rdo, double(p.rows), 1, "fused_batch_norm_grad dx modes offset_backprop");
          check_close(dx, rdx, double(p.rows), 8, "fused_batch_norm_grad dx modes x_backprop");
          if (first[0].empty()) {
            first[0] = dx, first[1] = ds, first[2] = d0;
          } else {
            CHECK(same_bits(dx, first[0]));
            CHECK(same_bits(ds, first[1]));
            CHECK(same_bits(d0, first[2]));
          }
        }
      }
    }
  }
}

TEST_CASE("cpu: FusedBatchNormGrad dx pass order and non-temporal stores vs reference") {
  batch_norm_grad_dx_modes<float>(61);
  batch_norm_grad_dx_modes<double>(62);
}

TEST_CASE("cpu: batch_norm_stats at wide channel counts") {
  batch_norm_stats_widths<float>(43);
  batch_norm_stats_widths<double>(44);
}

// The filter gradient's 3x3 chunked path (dwf_chunk3: channel counts a multiple of the
// vector width, stride 1 and 2): several row chunks and channel vectors, rows with the top
// or bottom taps outside x, edge columns, and 1/2/3 threads giving the same bits.
TEST_CASE("cpu: depthwise filter gradient 3x3 chunks vs reference") {
  IsaGuard guard;
  std::mt19937 rng(43);
  struct Geo {
    int64_t n, h, w, c, s, pt, pl, pb, pr;
  };
  const Geo geos[] = {{2, 9, 21, 32, 2, 0, 0, 1, 1},  {1, 15, 17, 48, 1, 1, 1, 1, 1}, {3, 7, 40, 16, 2, 1, 1, 1, 1},
                      {2, 11, 19, 64, 1, 0, 0, 0, 0}, {1, 4, 9, 144, 2, 0, 0, 1, 1},  {2, 6, 12, 32, 2, 1, 0, 0, 1},
                      {1, 3, 3, 16, 1, 1, 1, 1, 1},   {2, 5, 26, 80, 1, 2, 0, 0, 2},
                      // Rows wide enough for column strips (kDwfStripBytes): stride 1 and 2,
                      // channel counts not a multiple of two vectors (a lone last vector), the
                      // first strip starting after an edge column, odd widths.
                      {1, 6, 112, 32, 1, 1, 1, 1, 1}, {2, 5, 131, 48, 1, 1, 1, 1, 1}, {1, 7, 150, 32, 2, 0, 0, 1, 1},
                      {2, 4, 97, 80, 2, 1, 1, 1, 1},  {1, 3, 70, 16, 1, 0, 0, 0, 0}};
  for (const Geo& g : geos)
    check_cpu_conv<float>(ConvKernel::dw_bwd_filter,
                          depthwise_geometry(g.n, g.h, g.w, g.c, 3, 3, g.s, g.s, g.pt, g.pl, g.pb, g.pr), rng);
}

// The input gradient's native stride-2 3-tap row kernel (dwx2_row: pad_left 0, in_w ==
// 2*out_w; 1, 2 or 3 filter rows per dx row, channel tails, rows that no filter row reaches
// when stride_h > 3), float and double, 1 thread vs reference and 2/3 threads same bits.
TEST_CASE("cpu: depthwise input gradient stride-2 rows vs reference") {
  IsaGuard guard;
  std::mt19937 rng(47);
  // An fh x 3 filter at strides (sh, 2), pad pt above and below; even widths with pad_left 0
  // and pad_right 1 give in_w == 2*out_w.
  auto row = [](int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh, int64_t fh, int64_t pt) {
    return depthwise_geometry(n, h, w, c, fh, 3, sh, 2, pt, 0, pt, 1);
  };
  for (const ConvParams& p : {row(2, 6, 16, 32, 2, 3, 0), row(1, 7, 10, 19, 2, 3, 1), row(2, 5, 12, 48, 1, 3, 1),
                              row(1, 9, 8, 5, 4, 3, 0), row(1, 4, 22, 144, 2, 3, 0), row(2, 6, 2, 16, 2, 2, 1)}) {
    REQUIRE(p.in_w == 2 * p.out_w);
    check_cpu_conv<float>(ConvKernel::dw_bwd_input, p, rng);
    check_cpu_conv<double>(ConvKernel::dw_bwd_input, p, rng);
  }
}

// The same rows with dx written by non-temporal stores (ConvTuning::dw_input_stream_bytes):
// vector-aligned dx takes them where the unit has them, misaligned dx and channel tails the
// normal stores; every ISA, 1/2/3 threads, against the reference and the same bits as off.
TEST_CASE("cpu: depthwise input gradient stride-2 rows with non-temporal dx") {
  IsaGuard guard;
  TuningGuard restore;
  std::mt19937 rng(48);
  auto row = [](int64_t n, int64_t h, int64_t w, int64_t c, int64_t sh, int64_t fh, int64_t pt) {
    return depthwise_geometry(n, h, w, c, fh, 3, sh, 2, pt, 0, pt, 1);
  };
  for (const ConvParams& p : {row(2, 6, 16, 32, 2, 3, 0), row(1, 7, 10, 19, 2, 3, 1), row(1, 4, 22, 144, 2, 3, 0),
                              row(2, 5, 12, 48, 1, 3, 1), row(1, 9, 8, 16, 4, 3, 0)}) {
    REQUIRE(p.in_w == 2 * p.out_w);
    const int64_t nx = p.x_elements();
    const auto w = random_vec<float>(rng, p.filter_h * p.filter_w * p.in_c), dy = random_vec<float>(rng, p.y_elements());
    std::vector<float> want(size_t(nx), 0.0f);
    REQUIRE(gradrt::reference_backend()->depthwise_conv2d_native_backprop_input(Exec{1}, p, w.data(), dy.data(),
                                                                               want.data()).ok());
    std::vector<float> buf(size_t(nx + 32));
    float* aligned = buf.data();
    while (reinterpret_cast<uintptr_t>(aligned) % 64 != 0) ++aligned;
    for (simd::Isa isa : simd::supported_isas()) {
      REQUIRE(simd::set_cpu_isa(isa));
      CAPTURE(simd::isa_name(isa));
      CAPTURE(p.in_c);
      std::vector<float> first;
      for (int64_t from : {int64_t(0), int64_t(1)})
        for (float* dx : {aligned, aligned + 1})
          for (int threads : {1, 2, 3}) {
            for (const auto& [i, t] : restore.saved) {
              simd::ConvTuning tu = t;
              tu.dw_input_stream_bytes = from;
              REQUIRE(simd::set_cpu_tuning(i, tu));
            }
            std::fill(dx, dx + nx, -7.0f);
            REQUIRE(gradrt::cpu_backend()->depthwise_conv2d_native_backprop_input(Exec{threads}, p, w.data(),
                                                                                 dy.data(), dx).ok());
            const std::vector<float> got(dx, dx + nx);
            if (first.empty()) {
              check_close(got, want, 6.0, 4, "depthwise input gradient non-temporal dx");
              first = got;
            } else {
              CHECK(same_bits(got, first));
            }
          }
    }
  }
}

// The filter gradient's 3x3 chunked path past its prefetch threshold (x + dy over 8 MB:
// the first channel vector of each chunk prefetches the next row's lines, a hint that must
// not change any result), stride 1 and 2, with the prefetch on and off (ConvTuning, per
// microarchitecture), 1 thread vs reference and 2 threads same bits.
TEST_CASE("cpu: depthwise filter gradient 3x3 chunks past the prefetch size vs reference") {
  IsaGuard guard;
  std::mt19937 rng(53);
  TuningGuard restore;
  for (bool prefetch : {true, false}) {
    for (int64_t s : {1, 2}) {
      CAPTURE(prefetch);
      for (const auto& [isa, t] : restore.saved) {
        simd::ConvTuning tu = t;
        tu.depthwise_filter_prefetch = prefetch;
        REQUIRE(simd::set_cpu_tuning(isa, tu));
      }
      const int64_t pad = s == 1 ? 1 : 0;  // SAME: 66x64 at stride 1, 33x32 at stride 2
      const ConvParams p = depthwise_geometry(s == 1 ? 1 : 3, 66, 64, 256, 3, 3, s, s, pad, pad, 1, 1);
      REQUIRE(p.out_h == (s == 1 ? 66 : 33));
      REQUIRE(p.out_w == (s == 1 ? 64 : 32));
      REQUIRE((p.x_elements() + p.y_elements()) * 4 > (int64_t(8) << 20));
      check_cpu_conv<float>(ConvKernel::dw_bwd_filter, p, rng);
    }
  }
}

// The filter gradient's 3x3 chunked path ((row chunk, channel group) items), stride 1 and 2,
// several chunks and channel groups (an odd count of channel vectors), every ISA, 1 thread vs
// reference and 2/3 threads the same bits.
TEST_CASE("cpu: depthwise filter gradient 3x3 chunks vs reference") {
  IsaGuard guard;
  std::mt19937 rng(59);
  for (const ConvParams& p : {depthwise_geometry(2, 21, 18, 48, 3, 3, 2, 2, 0, 0, 1, 1),
                              depthwise_geometry(1, 30, 17, 80, 3, 3, 1, 1, 1, 1, 1, 1),
                              depthwise_geometry(3, 9, 12, 144, 3, 3, 2, 2, 1, 1, 1, 1)})
    check_cpu_conv<float>(ConvKernel::dw_bwd_filter, p, rng);
}

// Minimum work per thread (core/parallel.h threads_for_work, applied by run_kernel): the
// cap itself, and run_op results that stay the same bits whether a small op runs on the
// pool (minimum 0) or is kept on one thread (default minimum), at 1, 2 and 3 threads.
#include "parallel.h"
#include "tests/util.h"

TEST_CASE("cpu: minimum work per thread keeps results and caps threads") {
  struct Restore {
    int64_t ns = gradrt::min_thread_work_ns();
    ~Restore() { gradrt::set_min_thread_work_ns(ns); }
  } restore;
  gradrt::set_min_thread_work_ns(1000);
  CHECK(gradrt::threads_for_work(1, 1e9) == 1);
  CHECK(gradrt::threads_for_work(4, 500) == 1);
  CHECK(gradrt::threads_for_work(4, 2500) == 2);
  CHECK(gradrt::threads_for_work(4, 4000) == 4);
  CHECK(gradrt::threads_for_work(4, 1e9) == 4);
  CHECK(gradrt::threads_for_work(4, -1) == 4);
  gradrt::set_min_thread_work_ns(0);
  CHECK(gradrt::threads_for_work(4, 1) == 4);

  std::mt19937 rng(45);
  const gradrt::DType F = gradrt::DType::float32;
  const std::vector<int64_t> xs{1, 9, 11, 40}, cs{40};
  test::Named bn{{"y_backprop", test::random(F, xs, rng)}, {"x", test::random(F, xs, rng, -2, 3)},
                 {"scale", test::random(F, cs, rng, 0.5, 2)}, {"reserve_space_1", test::random(F, cs, rng)},
                 {"reserve_space_2", test::random(F, cs, rng, 0.5, 2)}};
  gradrt::Attrs bn_attrs{{"epsilon", gradrt::AttrValue(0.001)}, {"is_training", gradrt::AttrValue(true)}};
  test::Named dw{{"input_sizes", test::ints({1, 12, 10, 24})},
                 {"filter", test::random(F, {3, 3, 24, 1}, rng)},
                 {"out_backprop", test::random(F, {1, 6, 5, 24}, rng)}};
  gradrt::Attrs dw_attrs{{"strides", gradrt::AttrValue(std::vector<int64_t>{1, 2, 2, 1})},
                         {"padding", gradrt::AttrValue("SAME")}};
  struct Op {
    const char* name;
    const test::Named* inputs;
    const gradrt::Attrs* attrs;
  };
  for (Op op : {Op{"FusedBatchNormGrad", &bn, &bn_attrs}, Op{"DepthwiseConv2dNativeBackpropInput", &dw, &dw_attrs}}) {
    CAPTURE(op.name);
    std::vector<std::vector<unsigned char>> first;
    for (int64_t min_ns : {int64_t(0), int64_t(10000), int64_t(1) << 40}) {
      gradrt::set_min_thread_work_ns(min_ns);
      for (int threads : {1, 2, 3}) {
        CAPTURE(min_ns);
        CAPTURE(threads);
        test::Result r = test::run(op.name, *op.inputs, *op.attrs, "cpu", threads);
        REQUIRE(r.status.ok());
        std::vector<std::vector<unsigned char>> bytes;
        for (const auto& [name, t] : r.outputs) {
          const auto* p = static_cast<const unsigned char*>(t.data());
          bytes.emplace_back(p, p + t.num_bytes());
        }
        if (first.empty()) first = bytes;
        CHECK(bytes == first);
      }
    }
  }
}

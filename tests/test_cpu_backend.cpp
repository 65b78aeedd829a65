// The cpu backend (simd/) against the reference backend, kernel by kernel through the
// Backend interface, on random parameters that reach every vector tail, padding, stride,
// dilation and group branch; for every ISA this machine runs (set_cpu_isa), float and
// double; and bit-identical results for 1, 2 and 3 threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "simd/cpu_isa.h"

namespace {

using gradrt::BatchNormParams;
using gradrt::ConvParams;
using gradrt::Exec;
using gradrt::FracPoolParams;
namespace simd = gradrt::simd;

struct IsaGuard {  // restores the ISA in use when a test case ends
  simd::Isa saved = simd::cpu_isa();
  ~IsaGuard() { simd::set_cpu_isa(saved); }
};

template <class T>
std::vector<T> random_vec(std::mt19937& rng, int64_t n, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) e = T(d(rng));
  return v;
}

int64_t rnd(std::mt19937& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// Random geometry: odd sizes, channel counts off the vector widths, strides 1-3,
// dilations 1-2, SAME/VALID-like and uneven padding. depthwise: groups = 1, M >= 1.
ConvParams random_conv(std::mt19937& rng, bool depthwise) {
  for (;;) {
    ConvParams p;
    p.batch = rnd(rng, 1, 2);
    p.in_h = rnd(rng, 1, 11);
    p.in_w = rnd(rng, 1, 13);
    p.filter_h = rnd(rng, 1, 4);
    p.filter_w = rnd(rng, 1, 4);
    p.stride_h = rnd(rng, 1, 3);
    p.stride_w = rnd(rng, 1, 3);
    p.dilation_h = rnd(rng, 1, 2);
    p.dilation_w = rnd(rng, 1, 2);
    if (depthwise) {
      p.in_c = rnd(rng, 1, 37);
      p.depth_multiplier = rnd(rng, 0, 3) == 0 ? rnd(rng, 2, 3) : 1;
      p.filter_in_c = p.in_c;
      p.out_c = p.in_c * p.depth_multiplier;
    } else {
      p.groups = rnd(rng, 0, 3) == 0 ? rnd(rng, 2, 3) : 1;
      p.filter_in_c = rnd(rng, 1, 41);
      p.in_c = p.filter_in_c * p.groups;
      p.out_c = rnd(rng, 1, 45) * p.groups;
    }
    const int64_t eh = (p.filter_h - 1) * p.dilation_h + 1, ew = (p.filter_w - 1) * p.dilation_w + 1;
    const int64_t pt = rnd(rng, 0, eh - 1), pb = rnd(rng, 0, eh - 1);
    const int64_t pl = rnd(rng, 0, ew - 1), pr = rnd(rng, 0, ew - 1);
    if (p.in_h + pt + pb < eh || p.in_w + pl + pr < ew) continue;
    p.pad_top = pt;
    p.pad_left = pl;
    p.out_h = (p.in_h + pt + pb - eh) / p.stride_h + 1;
    p.out_w = (p.in_w + pl + pr - ew) / p.stride_w + 1;
    return p;
  }
}

// |got - want| <= tol, tol scaled with the reduction length k and the data's magnitude.
template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double k, double scale, const std::string& what) {
  const double eps = std::is_same_v<T, float> ? 1.2e-7 : 2.3e-16;
  const double tol = 8 * eps * std::max(1.0, k) * std::max(1.0, scale) + 1e-30;
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(double(got[i]) - double(want[i]));
    if (!(e <= tol)) {
      if (!bad) first = i;
      ++bad;
      worst = std::max(worst, e);
    }
  }
  INFO(what << " first bad index " << first << " got " << (got.empty() ? 0.0 : double(got[first])) << " want "
            << (want.empty() ? 0.0 : double(want[first])) << " worst " << worst << " tol " << tol);
  CHECK(bad == 0);
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

std::string describe(const ConvParams& p) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "n%lld %lldx%lldx%lld -> %lldx%lldx%lld f%lldx%lldx%lld g%lld m%lld s%lld,%lld d%lld,%lld p%lld,%lld",
                (long long)p.batch, (long long)p.in_h, (long long)p.in_w, (long long)p.in_c, (long long)p.out_h,
                (long long)p.out_w, (long long)p.out_c, (long long)p.filter_h, (long long)p.filter_w,
                (long long)p.filter_in_c, (long long)p.groups, (long long)p.depth_multiplier, (long long)p.stride_h,
                (long long)p.stride_w, (long long)p.dilation_h, (long long)p.dilation_w, (long long)p.pad_top,
                (long long)p.pad_left);
  return buf;
}

enum class ConvKernel { fwd, bwd_input, bwd_filter, dw_fwd, dw_bwd_input, dw_bwd_filter };

// Runs one conv-family kernel on backend b; returns the output.
template <class T>
std::vector<T> run_conv(gradrt::Backend* b, ConvKernel k, const ConvParams& p, int threads,
                        const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& dy) {
  Exec e{threads};
  std::vector<T> out;
  gradrt::Status s;
  switch (k) {
    case ConvKernel::fwd:
      out.assign(p.y_elements(), T(-7));
      s = b->conv2d(e, p, x.data(), w.data(), out.data());
      break;
    case ConvKernel::bwd_input:
      out.assign(p.x_elements(), T(-7));
      s = b->conv2d_backprop_input(e, p, w.data(), dy.data(), out.data());
      break;
    case ConvKernel::bwd_filter:
      out.assign(p.w_elements(), T(-7));
      s = b->conv2d_backprop_filter(e, p, x.data(), dy.data(), out.data());
      break;
    case ConvKernel::dw_fwd:
      out.assign(p.y_elements(), T(-7));
      s = b->depthwise_conv2d_native(e, p, x.data(), w.data(), out.data());
      break;
    case ConvKernel::dw_bwd_input:
      out.assign(p.x_elements(), T(-7));
      s = b->depthwise_conv2d_native_backprop_input(e, p, w.data(), dy.data(), out.data());
      break;
    case ConvKernel::dw_bwd_filter:
      out.assign(p.dw_w_elements(), T(-7));
      s = b->depthwise_conv2d_native_backprop_filter(e, p, x.data(), dy.data(), out.data());
      break;
  }
  REQUIRE(s.ok());
  return out;
}

template <class T>
void conv_sweep(ConvKernel k, int cases, uint32_t seed) {
  IsaGuard guard;
  const bool dw = k == ConvKernel::dw_fwd || k == ConvKernel::dw_bwd_input || k == ConvKernel::dw_bwd_filter;
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    const ConvParams p = random_conv(rng, dw);
    const int64_t wn = dw ? p.dw_w_elements() : p.w_elements();
    auto x = random_vec<T>(rng, p.x_elements());
    auto w = random_vec<T>(rng, wn);
    auto dy = random_vec<T>(rng, p.y_elements());
    double red = 0;  // reduction length of one output
    switch (k) {
      case ConvKernel::fwd: red = double(p.filter_h * p.filter_w * p.filter_in_c); break;
      case ConvKernel::bwd_input: red = double(p.filter_h * p.filter_w * (p.out_c / p.groups)); break;
      case ConvKernel::bwd_filter:
      case ConvKernel::dw_bwd_filter: red = double(p.batch * p.out_h * p.out_w); break;
      case ConvKernel::dw_fwd: red = double(p.filter_h * p.filter_w); break;
      case ConvKernel::dw_bwd_input: red = double(p.filter_h * p.filter_w * p.depth_multiplier); break;
    }
    const auto want = run_conv<T>(gradrt::reference_backend(), k, p, 1, x, w, dy);
    for (simd::Isa isa : simd::supported_isas()) {
      REQUIRE(simd::set_cpu_isa(isa));
      CAPTURE(simd::isa_name(isa));
      const std::string what = describe(p);
      CAPTURE(what);
      const auto got1 = run_conv<T>(gradrt::cpu_backend(), k, p, 1, x, w, dy);
      check_close(got1, want, red, std::sqrt(red), what);
      for (int threads : {2, 3}) {
        const auto got = run_conv<T>(gradrt::cpu_backend(), k, p, threads, x, w, dy);
        CHECK_MESSAGE(same_bits(got, got1), "threads " << threads << " changed the bits");
      }
    }
  }
}

}  // namespace

TEST_CASE("cpu: Conv2D forward vs reference") {
  conv_sweep<float>(ConvKernel::fwd, 60, 1);
  conv_sweep<double>(ConvKernel::fwd, 20, 2);
}
TEST_CASE("cpu: Conv2DBackpropInput vs reference") {
  conv_sweep<float>(ConvKernel::bwd_input, 60, 3);
  conv_sweep<double>(ConvKernel::bwd_input, 20, 4);
}
TEST_CASE("cpu: Conv2DBackpropFilter vs reference") {
  conv_sweep<float>(ConvKernel::bwd_filter, 60, 5);
  conv_sweep<double>(ConvKernel::bwd_filter, 20, 6);
}
TEST_CASE("cpu: DepthwiseConv2dNative forward vs reference") {
  conv_sweep<float>(ConvKernel::dw_fwd, 60, 7);
  conv_sweep<double>(ConvKernel::dw_fwd, 20, 8);
}
TEST_CASE("cpu: DepthwiseConv2dNativeBackpropInput vs reference") {
  conv_sweep<float>(ConvKernel::dw_bwd_input, 60, 9);
  conv_sweep<double>(ConvKernel::dw_bwd_input, 20, 10);
}
TEST_CASE("cpu: DepthwiseConv2dNativeBackpropFilter vs reference") {
  conv_sweep<float>(ConvKernel::dw_bwd_filter, 60, 11);
  conv_sweep<double>(ConvKernel::dw_bwd_filter, 20, 12);
}

TEST_CASE("cpu: conv kernels on larger shapes (full register tiles, several K chunks)") {
  IsaGuard guard;
  std::mt19937 rng(99);
  // 3x3 SAME stride 1 and 2, 1x1, a group conv; channels on and off the tile sizes.
  const int64_t shapes[][8] = {  // in_h, in_w, in_c, out_c, f, stride, groups, batch
      {14, 15, 64, 64, 3, 1, 1, 1}, {13, 12, 40, 72, 3, 2, 1, 2}, {9, 9, 96, 130, 1, 1, 1, 1}, {10, 11, 48, 36, 3, 1, 3, 1},
      {20, 21, 28, 40, 3, 1, 1, 2}};  // the last: 840 output pixels, several K chunks of the filter gradient
  for (const auto& s : shapes) {
    ConvParams p;
    p.batch = s[7];
    p.in_h = s[0];
    p.in_w = s[1];
    p.in_c = s[2];
    p.out_c = s[3];
    p.filter_h = p.filter_w = s[4];
    p.stride_h = p.stride_w = s[5];
    p.groups = s[6];
    p.filter_in_c = p.in_c / p.groups;
    p.out_h = (p.in_h + p.stride_h - 1) / p.stride_h;
    p.out_w = (p.in_w + p.stride_w - 1) / p.stride_w;
    const int64_t ph = std::max<int64_t>((p.out_h - 1) * p.stride_h + p.filter_h - p.in_h, 0);
    const int64_t pw = std::max<int64_t>((p.out_w - 1) * p.stride_w + p.filter_w - p.in_w, 0);
    p.pad_top = ph / 2;
    p.pad_left = pw / 2;
    auto x = random_vec<float>(rng, p.x_elements());
    auto w = random_vec<float>(rng, p.w_elements());
    auto dy = random_vec<float>(rng, p.y_elements());
    for (ConvKernel k : {ConvKernel::fwd, ConvKernel::bwd_input, ConvKernel::bwd_filter}) {
      const double red = k == ConvKernel::fwd        ? double(p.filter_h * p.filter_w * p.filter_in_c)
                         : k == ConvKernel::bwd_input ? double(p.filter_h * p.filter_w * p.out_c / p.groups)
                                                      : double(p.batch * p.out_h * p.out_w);
      const auto want = run_conv<float>(gradrt::reference_backend(), k, p, 1, x, w, dy);
      for (simd::Isa isa : simd::supported_isas()) {
        REQUIRE(simd::set_cpu_isa(isa));
        CAPTURE(simd::isa_name(isa));
        const auto got = run_conv<float>(gradrt::cpu_backend(), k, p, 1, x, w, dy);
        check_close(got, want, red, std::sqrt(red), describe(p));
        CHECK(same_bits(run_conv<float>(gradrt::cpu_backend(), k, p, 2, x, w, dy), got));
      }
    }
  }
}

TEST_CASE("cpu: conv kernels with empty operands") {
  ConvParams p;
  p.batch = 0;
  p.in_h = p.in_w = 5;
  p.in_c = 3;
  p.out_h = p.out_w = 5;
  p.out_c = 4;
  p.filter_h = p.filter_w = 3;
  p.filter_in_c = 3;
  p.pad_top = p.pad_left = 1;
  std::vector<float> dw(p.w_elements(), -1.f), dwd(p.w_elements(), -1.f);
  REQUIRE(gradrt::cpu_backend()->conv2d_backprop_filter(Exec{2}, p, nullptr, nullptr, dw.data()).ok());
  for (float v : dw) CHECK(v == 0.f);
  std::vector<float> ddw(p.dw_w_elements() * 1, -1.f);
  p.out_c = 3;
  REQUIRE(gradrt::cpu_backend()->depthwise_conv2d_native_backprop_filter(Exec{2}, p, nullptr, nullptr, ddw.data()).ok());
  for (float v : ddw) CHECK(v == 0.f);
}

namespace {

template <class T>
void batch_norm_sweep(int cases, uint32_t seed) {
  IsaGuard guard;
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    BatchNormParams p;
    p.rows = c == 0 ? 0 : rnd(rng, 1, c < cases / 2 ? 40 : 3000);
    p.channels = rnd(rng, 1, 70);
    p.epsilon = 0.001f;
    p.is_training = rnd(rng, 0, 3) != 0;
    const int64_t n = p.rows * p.channels, C = p.channels;
    auto x = random_vec<T>(rng, n, -2, 3);
    auto dy = random_vec<T>(rng, n);
    auto scale = random_vec<T>(rng, C, 0.5, 2);
    auto offset = random_vec<T>(rng, C);
    auto mean = random_vec<T>(rng, C, 0, 1);
    auto var = random_vec<T>(rng, C, 0.5, 2);
    auto* ref = gradrt::reference_backend();
    std::vector<T> rm(C), rv(C), ry(n), rdx(n), rds(C), rdo(C);
    REQUIRE(ref->batch_norm_stats(Exec{1}, p, x.data(), rm.data(), rv.data()).ok());
    REQUIRE(ref->batch_norm_apply(Exec{1}, p, x.data(), scale.data(), offset.data(), mean.data(), var.data(), ry.data()).ok());
    REQUIRE(ref->fused_batch_norm_grad(Exec{1}, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(),
                                       rdx.data(), rds.data(), rdo.data()).ok());
    const double R = double(std::max<int64_t>(p.rows, 1));
    for (simd::Isa isa : simd::supported_isas()) {
      REQUIRE(simd::set_cpu_isa(isa));
      CAPTURE(simd::isa_name(isa));
      CAPTURE(p.rows);
      CAPTURE(p.channels);
      CAPTURE(p.is_training);
      std::vector<T> first[6];
      for (int threads : {1, 2, 3}) {
        std::vector<T> m(C), v(C), y(n), dx(n), ds(C), d0(C);
        auto* cpu = gradrt::cpu_backend();
        REQUIRE(cpu->batch_norm_stats(Exec{threads}, p, x.data(), m.data(), v.data()).ok());
        REQUIRE(cpu->batch_norm_apply(Exec{threads}, p, x.data(), scale.data(), offset.data(), mean.data(), var.data(), y.data()).ok());
        REQUIRE(cpu->fused_batch_norm_grad(Exec{threads}, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(),
                                           dx.data(), ds.data(), d0.data()).ok());
        if (threads == 1) {
          if (p.rows > 0) {
            check_close(m, rm, R, 3, "batch_norm_stats mean");
            check_close(v, rv, R, 9, "batch_norm_stats variance");
          }
          check_close(y, ry, 4, 8, "batch_norm_apply");
          check_close(ds, rds, R, 4, "fused_batch_norm_grad scale_backprop");
          check_close(d0, rdo, R, 1, "fused_batch_norm_grad offset_backprop");
          check_close(dx, rdx, R, 8, "fused_batch_norm_grad x_backprop");
          first[0] = m; first[1] = v; first[2] = y; first[3] = dx; first[4] = ds; first[5] = d0;
        } else {
          CHECK(same_bits(m, first[0]));
          CHECK(same_bits(v, first[1]));
          CHECK(same_bits(y, first[2]));
          CHECK(same_bits(dx, first[3]));
          CHECK(same_bits(ds, first[4]));
          CHECK(same_bits(d0, first[5]));
        }
      }
    }
  }
}

// Pooling sequence with n+1 entries from 0 to size: strictly increasing, or (dups) with
// repeated entries, which make empty cells.
std::vector<int64_t> random_seq(std::mt19937& rng, int64_t size, int64_t n, bool dups) {
  std::vector<int64_t> s;
  s.push_back(0);
  if (dups) {
    for (int64_t i = 1; i < n; ++i) s.push_back(rnd(rng, 0, size));
    std::sort(s.begin(), s.end());
  } else {
    std::vector<int64_t> cuts;
    for (int64_t i = 1; i < size; ++i) cuts.push_back(i);
    std::shuffle(cuts.begin(), cuts.end(), rng);
    cuts.resize(n - 1);
    std::sort(cuts.begin(), cuts.end());
    s.insert(s.end(), cuts.begin(), cuts.end());
  }
  s.push_back(size);
  return s;
}

template <class T>
void frac_pool_sweep(int cases, uint32_t seed) {
  IsaGuard guard;
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    FracPoolParams p;
    p.batch = rnd(rng, 1, 2);
    p.in_h = rnd(rng, 1, 12);
    p.in_w = rnd(rng, 1, 12);
    p.channels = rnd(rng, 1, 37);
    p.out_h = rnd(rng, 1, p.in_h);
    p.out_w = rnd(rng, 1, p.in_w);
    p.overlapping = rnd(rng, 0, 1) == 1;
    const bool dups = rnd(rng, 0, 4) == 0 && !p.overlapping;
    auto rs = random_seq(rng, p.in_h, p.out_h, dups), cs = random_seq(rng, p.in_w, p.out_w, dups);
    p.row_seq = rs.data();
    p.col_seq = cs.data();
    const int64_t nx = p.batch * p.in_h * p.in_w * p.channels, ny = p.batch * p.out_h * p.out_w * p.channels;
    auto x = random_vec<T>(rng, nx);
    auto dy = random_vec<T>(rng, ny);
    std::vector<T> ry(ny), rdx(nx);
    REQUIRE(gradrt::reference_backend()->fractional_avg_pool(Exec{1}, p, x.data(), ry.data()).ok());
    REQUIRE(gradrt::reference_backend()->fractional_avg_pool_grad(Exec{1}, p, dy.data(), rdx.data()).ok());
    for (simd::Isa isa : simd::supported_isas()) {
      REQUIRE(simd::set_cpu_isa(isa));
      CAPTURE(simd::isa_name(isa));
      std::vector<T> y1, dx1;
      for (int threads : {1, 2, 3}) {
        std::vector<T> y(ny), dx(nx, T(-5));
        REQUIRE(gradrt::cpu_backend()->fractional_avg_pool(Exec{threads}, p, x.data(), y.data()).ok());
        REQUIRE(gradrt::cpu_backend()->fractional_avg_pool_grad(Exec{threads}, p, dy.data(), dx.data()).ok());
        if (threads == 1) {
          check_close(y, ry, double(p.in_h * p.in_w), 1, "fractional_avg_pool");
          check_close(dx, rdx, 4, 1, "fractional_avg_pool_grad");
          y1 = y;
          dx1 = dx;
        } else {
          CHECK(same_bits(y, y1));
          CHECK(same_bits(dx, dx1));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("cpu: FusedBatchNorm and FusedBatchNormGrad vs reference") {
  batch_norm_sweep<float>(40, 21);
  batch_norm_sweep<double>(15, 22);
}

TEST_CASE("cpu: FractionalAvgPool and FractionalAvgPoolGrad vs reference") {
  frac_pool_sweep<float>(60, 31);
  frac_pool_sweep<double>(20, 32);
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

// FusedBatchNormGrad at the layouts a kernel may special-case: inputs at various
// misalignments within a cache line, a misaligned dx, rows of whole cache lines, odd widths
// and an 8 MiB tensor. All must match the reference and give the same bits as the aligned
// inputs at any thread count.
namespace {

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
      BatchNormParams p;
      p.rows = sh.rows;
      p.channels = sh.channels;
      p.epsilon = 0.001f;
      p.is_training = training;
      const int64_t n = p.rows * p.channels, C = p.channels;
      auto x = random_vec<T>(rng, n, -2, 3);
      auto dy = random_vec<T>(rng, n);
      auto scale = random_vec<T>(rng, C, 0.5, 2);
      auto mean = random_vec<T>(rng, C, 0, 1);
      auto var = random_vec<T>(rng, C, 0.5, 2);
      std::vector<T> rdx(n), rds(C), rdo(C);
      REQUIRE(gradrt::reference_backend()->fused_batch_norm_grad(Exec{1}, p, dy.data(), x.data(), scale.data(),
                                                                 mean.data(), var.data(), rdx.data(), rds.data(),
                                                                 rdo.data()).ok());
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
// vectors and scalar channels) on every ISA.
template <class T>
void batch_norm_stats_widths(uint32_t seed) {
  IsaGuard guard;
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
      for (int threads : {1, 2, 3}) {
        std::vector<T> m(C), v(C);
        REQUIRE(gradrt::cpu_backend()->batch_norm_stats(Exec{threads}, p, x.data(), m.data(), v.data()).ok());
        if (threads == 1) {
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

TEST_CASE("cpu: batch_norm_stats at wide channel counts") {
  batch_norm_stats_widths<float>(43);
  batch_norm_stats_widths<double>(44);
}

// A tester per non-GEMM cpu micro-kernel (simd/kernels/table.h RowUkernels: relu, pooling,
// fractional pooling, batch norm and its gradient's channels-first planes, the depthwise gather
// row, the stride-2 input-gradient row, the few-input-channel filter gradient's tiles; and, from
// ukernels_dwf.cpp at float and double, the depthwise filter gradient's kernels and the
// non-temporal batch-norm dx pass; from ukernels_wasm.cpp, WebAssembly's own depthwise kernels),
// called directly at every ISA unit built here and runnable on this CPU, over edge sizes (channel
// counts 1 .. 2 vector widths + 1, widths 1-3, odd strides, edges) against core's reference
// kernels or a plain loop written here. Outputs get a sentinel past their end (and between the
// pixels a strided row leaves alone): a kernel writing outside its output fails too. The GEMM
// micro-kernels have theirs in test_ukernels.cpp. Native (ctest group cpu) and WebAssembly
// (wasm/CMakeLists.txt's gradrt_ukernel_tests, in Node: web/test/ukernels_wasm.test.mjs).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "reference/reference.h"
#include "simd/cpu_isa.h"
#include "simd/kernels/table.h"
#include "ukernel_rows.h"

namespace {

namespace simd = gradrt::simd;
using gradrt::FracPoolParams;
using gradrt::PoolParams;
using namespace ukrows;
using Vec = std::vector<float>;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<int64_t> channel_counts(const Rows& u) { return ukrows::channel_counts(u.lanes); }
Vec with_sentinel(size_t n) { return ukrows::with_sentinel<float>(n); }

// ---- relu, relu_grad: exact, NaN kept, -0 -> +0, Relu6's clamp.
void relu(const Rows& u, std::mt19937& rng, Report& r) {
  const float specials[] = {kNaN, -0.0f, 0.0f, 6.0f, 5.9999995f, 6.0000005f, INFINITY, -INFINITY, 1e-40f, -1e-40f};
  for (int six = 0; six < 2; ++six)
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(u.lanes - 1), int64_t(u.lanes), int64_t(2 * u.lanes + 3), int64_t(45)}) {
      if (n < 0) continue;
      Vec x = test::random_vec<float>(rng, n, -9, 9), dy = test::random_vec<float>(rng, n);
      for (int64_t i = 0; i < n; ++i)
        if (i % 3 == 1) x[size_t(i)] = specials[size_t(i / 3) % 10];
      if (n > 2) dy[1] = kNaN;
      Vec y = with_sentinel(static_cast<size_t>(n)), dx = with_sentinel(static_cast<size_t>(n));
      u.relu[six](n, x.data(), y.data());
      u.relu_grad[six](n, dy.data(), x.data(), dx.data());
      for (int64_t i = 0; i < n; ++i) {
        const float xi = x[size_t(i)];
        const float want = std::isnan(xi) ? xi : xi > 0 ? (six && xi > 6 ? 6.0f : xi) : 0.0f;
        r.same(y[size_t(i)], want, at("relu six n i", {six, n, i}));
        const bool pass = xi > 0 && (!six || xi < 6);
        r.same(dx[size_t(i)], dy[size_t(i)] * (pass ? 1.0f : 0.0f), at("relu_grad six n i", {six, n, i}));
      }
      r.untouched(y, size_t(n), "relu");
      r.untouched(dx, size_t(n), "relu_grad");
    }
}

// ---- pooling rows: window / stride / padding rows, widths 1-3 and a wider one, every channel count.
struct PoolShape {
  int64_t in_h, in_w, window_h, window_w, stride_h, stride_w, pad_top, pad_left;
};
const PoolShape kPoolShapes[] = {
    {3, 1, 2, 1, 1, 1, 0, 0}, {2, 2, 2, 2, 2, 2, 0, 0}, {4, 3, 3, 3, 1, 1, 1, 1},
    {5, 3, 3, 2, 2, 3, 1, 0}, {5, 7, 3, 3, 2, 2, 1, 1}, {1, 5, 1, 3, 1, 3, 0, 1},
};

PoolParams pool_params(const PoolShape& s, int64_t C) {
  PoolParams p;
  p.batch = 2, p.channels = C, p.in_h = s.in_h, p.in_w = s.in_w;
  p.window_h = s.window_h, p.window_w = s.window_w, p.stride_h = s.stride_h, p.stride_w = s.stride_w;
  p.pad_top = s.pad_top, p.pad_left = s.pad_left;
  // As many windows as start inside (padding the same on both sides): each has a real cell.
  p.out_h = (s.in_h + s.pad_top - 1) / s.stride_h + 1;
  p.out_w = (s.in_w + s.pad_left - 1) / s.stride_w + 1;
  while (p.row_begin(p.out_h - 1) >= p.row_end(p.out_h - 1)) --p.out_h;
  while (p.col_begin(p.out_w - 1) >= p.col_end(p.out_w - 1)) --p.out_w;
  return p;
}

// Values from a small set (ties for the argmax rule), one NaN per image.
Vec pool_input(std::mt19937& rng, const PoolParams& p) {
  Vec x(static_cast<size_t>(p.x_elements()));
  for (float& v : x) v = float(int(rng() % 7) - 3);
  for (int64_t n = 0; n < p.batch; ++n) x[size_t(n * p.in_h * p.in_w * p.channels + (n % p.channels))] = kNaN;
  return x;
}

// TF's argmax of window (n, oy, ox, c) as its cell_index: the first real cell, replaced only by a greater value.
float argmax(const PoolParams& p, const Vec& x, int64_t n, int64_t oy, int64_t ox, int64_t c) {
  float m = 0, idx = 0;
  bool first = true;
  for (int64_t iy = p.row_begin(oy); iy < p.row_end(oy); ++iy)
    for (int64_t ix = p.col_begin(ox); ix < p.col_end(ox); ++ix) {
      const float v = x[size_t(((n * p.in_h + iy) * p.in_w + ix) * p.channels + c)];
      if (first || m < v) m = v, idx = float(p.cell_index(oy, ox, iy, ix));
      first = false;
    }
  return idx;
}

void pooling(const Rows& u, std::mt19937& rng, Report& r) {
  for (const PoolShape& s : kPoolShapes)
    for (int64_t C : channel_counts(u)) {
      const PoolParams p = pool_params(s, C);
      const Vec x = pool_input(rng, p), dy = test::random_vec<float>(rng, p.y_elements());
      const size_t ny = size_t(p.y_elements()), nx = size_t(p.x_elements());
      Vec y = with_sentinel(ny), idx = with_sentinel(ny), avg = with_sentinel(ny);
      Vec dx_max = with_sentinel(nx), dx_avg = with_sentinel(nx);
      Vec want_y(ny), want_avg(ny), want_dx_max(nx), want_dx_avg(nx);
      for (int64_t q = 0; q < p.batch * p.out_h; ++q) {
        u.max_pool_row(p, q, x.data(), false, y.data());
        u.max_pool_row(p, q, x.data(), true, idx.data());
        u.avg_pool_row(p, q, x.data(), avg.data());
      }
      for (int64_t q = 0; q < p.batch * p.in_h; ++q) {
        u.max_pool_grad_row(p, q, idx.data(), dy.data(), dx_max.data());
        u.avg_pool_grad_row(p, q, dy.data(), dx_avg.data());
      }
      gradrt::ref::max_pool<float>(p, x.data(), want_y.data());
      gradrt::ref::avg_pool<float>(p, x.data(), want_avg.data());
      gradrt::ref::max_pool_grad<float>(p, x.data(), dy.data(), want_dx_max.data());
      gradrt::ref::avg_pool_grad<float>(p, dy.data(), want_dx_avg.data());
      const std::string shape = at("in window stride pad C", {s.in_h, s.in_w, s.window_h, s.window_w, s.stride_h,
                                                              s.stride_w, s.pad_top, s.pad_left, C});
      for (size_t i = 0; i < ny; ++i) {
        const int64_t c = int64_t(i) % C, pix = int64_t(i) / C, ox = pix % p.out_w, oy = pix / p.out_w % p.out_h;
        r.same(y[i], want_y[i], "max_pool_row " + shape);
        r.same(idx[i], argmax(p, x, pix / (p.out_w * p.out_h), oy, ox, c), "max_pool_row argmax " + shape);
        r.near(avg[i], want_avg[i], 4 * std::fabs(want_avg[i]) + 1, "avg_pool_row " + shape);
      }
      for (size_t i = 0; i < nx; ++i) {
        r.near(dx_max[i], want_dx_max[i], 4, "max_pool_grad_row " + shape);
        r.near(dx_avg[i], want_dx_avg[i], 4, "avg_pool_grad_row " + shape);
      }
      for (const Vec* v : {&y, &idx, &avg}) r.untouched(*v, ny, "pool row " + shape);
      for (const Vec* v : {&dx_max, &dx_avg}) r.untouched(*v, nx, "pool grad row " + shape);
    }
}

// ---- fractional pooling rows: sequences spread evenly (cells of 1 and 2 rows), both overlapping rules.
std::vector<int64_t> spread(int64_t in, int64_t out) {
  std::vector<int64_t> s(static_cast<size_t>(out + 1));
  for (int64_t i = 0; i <= out; ++i) s[size_t(i)] = i * in / out;
  return s;
}

// The cover ranges the gradient's driver precomputes: the cells [first, end) whose span may hold row i.
std::vector<int64_t> cover(int64_t in, int64_t out, auto start, auto end) {
  std::vector<int64_t> c(static_cast<size_t>(2 * in));
  for (int64_t i = 0, k = 0; i < in; ++i) {
    while (k < out && end(k) < i) ++k;
    int64_t e = k;
    while (e < out && start(e) <= i) ++e;
    c[size_t(2 * i)] = k, c[size_t(2 * i + 1)] = e;
  }
  return c;
}

void fractional_pooling(const Rows& u, std::mt19937& rng, Report& r) {
  const int64_t shapes[][4] = {{5, 1, 3, 1}, {5, 2, 2, 1}, {7, 3, 4, 2}, {6, 7, 3, 5}};  // in_h in_w out_h out_w
  for (const auto& s : shapes)
    for (bool overlapping : {false, true})
      for (int64_t C : channel_counts(u)) {
        const std::vector<int64_t> rs = spread(s[0], s[2]), cs = spread(s[1], s[3]);
        FracPoolParams p;
        p.batch = 2, p.in_h = s[0], p.in_w = s[1], p.out_h = s[2], p.out_w = s[3], p.channels = C;
        p.overlapping = overlapping, p.row_seq = rs.data(), p.col_seq = cs.data();
        const size_t nx = size_t(p.batch * p.in_h * p.in_w * C), ny = size_t(p.batch * p.out_h * p.out_w * C);
        const Vec x = test::random_vec<float>(rng, int64_t(nx)), dy = test::random_vec<float>(rng, int64_t(ny));
        const std::vector<int64_t> rr = cover(p.in_h, p.out_h, [&](int64_t k) { return p.row_start(k); },
                                              [&](int64_t k) { return p.row_end(k); });
        const std::vector<int64_t> cr = cover(p.in_w, p.out_w, [&](int64_t k) { return p.col_start(k); },
                                              [&](int64_t k) { return p.col_end(k); });
        Vec y = with_sentinel(ny), dx = with_sentinel(nx), want_y(ny), want_dx(nx);
        for (int64_t q = 0; q < p.batch * p.out_h; ++q) u.frac_pool_row(p, q, x.data(), y.data());
        for (int64_t q = 0; q < p.batch * p.in_h; ++q) u.frac_pool_grad_row(p, q, rr.data(), cr.data(), dy.data(), dx.data());
        gradrt::ref::fractional_avg_pool<float>(p, x.data(), want_y.data());
        gradrt::ref::fractional_avg_pool_grad<float>(p, dy.data(), want_dx.data());
        const std::string shape = at("frac in out overlapping C", {s[0], s[1], s[2], s[3], overlapping, C});
        for (size_t i = 0; i < ny; ++i) r.near(y[i], want_y[i], 8, "frac_pool_row " + shape);
        for (size_t i = 0; i < nx; ++i) r.near(dx[i], want_dx[i], 8, "frac_pool_grad_row " + shape);
        r.untouched(y, ny, "frac_pool_row " + shape);
        r.untouched(dx, nx, "frac_pool_grad_row " + shape);
      }
}

// ---- batch norm over rows [r0, r1) of [rows, C], against loops in double.
void batch_norm(const Rows& u, std::mt19937& rng, Report& r) {
  const int64_t ranges[][3] = {{1, 0, 1}, {2, 1, 2}, {5, 0, 5}, {7, 2, 6}};  // rows r0 r1
  for (const auto& rg : ranges)
    for (int64_t C : channel_counts(u)) {
      const int64_t rows = rg[0], r0 = rg[1], r1 = rg[2], n = rows * C;
      const Vec x = test::random_vec<float>(rng, n, -2, 3), dy = test::random_vec<float>(rng, n);
      const Vec mean = test::random_vec<float>(rng, C), k1 = test::random_vec<float>(rng, C),
                k2 = test::random_vec<float>(rng, C), k3 = test::random_vec<float>(rng, C);
      const std::string shape = at("rows r0 r1 C", {rows, r0, r1, C});
      const size_t nc = static_cast<size_t>(C);
      Vec sx = with_sentinel(nc), ssq = with_sentinel(nc), g0 = with_sentinel(nc), g1 = with_sentinel(nc);
      u.bn_sum_x(r0, r1, C, x.data(), sx.data());
      u.bn_sum_sq(r0, r1, C, x.data(), mean.data(), ssq.data());
      u.bn_grad_sums(r0, r1, C, dy.data(), x.data(), mean.data(), g0.data(), g1.data());
      for (int64_t c = 0; c < C; ++c) {
        double s[4] = {}, m[4] = {};
        for (int64_t row = r0; row < r1; ++row) {
          const double xv = x[size_t(row * C + c)], d = xv - double(mean[size_t(c)]), g = dy[size_t(row * C + c)];
          const double t[4] = {xv, d * d, g, g * d};
          for (int i = 0; i < 4; ++i) s[i] += t[i], m[i] += std::fabs(t[i]);
        }
        r.near(sx[size_t(c)], s[0], m[0], "bn_sum_x " + shape);
        r.near(ssq[size_t(c)], s[1], m[1], "bn_sum_sq " + shape);
        r.near(g0[size_t(c)], s[2], m[2], "bn_grad_sums s0 " + shape);
        r.near(g1[size_t(c)], s[3], m[3], "bn_grad_sums s1 " + shape);
      }
      for (const Vec* v : {&sx, &ssq, &g0, &g1}) r.untouched(*v, size_t(C), "bn sums " + shape);
      // Elementwise passes write rows [r0, r1) only.
      Vec y(size_t(n + 1), kSentinel), dxt = y, dxi = y;
      u.bn_affine(r0, r1, C, x.data(), mean.data(), k1.data(), k2.data(), y.data());
      u.bn_grad_dx(r0, r1, C, true, dy.data(), x.data(), mean.data(), k1.data(), k2.data(), k3.data(), dxt.data());
      u.bn_grad_dx(r0, r1, C, false, dy.data(), x.data(), mean.data(), k1.data(), k2.data(), k3.data(), dxi.data());
      for (int64_t i = 0; i <= n; ++i) {
        const int64_t row = i / C, c = i % C;
        if (i == n || row < r0 || row >= r1) {
          for (const Vec* v : {&y, &dxt, &dxi}) r.expect((*v)[size_t(i)] == kSentinel, "bn rows outside " + shape);
          continue;
        }
        const double d = double(x[size_t(i)]) - mean[size_t(c)], g = dy[size_t(i)];
        r.near(y[size_t(i)], d * k1[size_t(c)] + k2[size_t(c)], std::fabs(d * k1[size_t(c)]) + std::fabs(k2[size_t(c)]),
               "bn_affine " + shape);
        const double t[3] = {g * k1[size_t(c)], d * k2[size_t(c)], k3[size_t(c)]};
        r.near(dxt[size_t(i)], t[0] + t[1] + t[2], std::fabs(t[0]) + std::fabs(t[1]) + std::fabs(t[2]),
               "bn_grad_dx training " + shape);
        r.near(dxi[size_t(i)], t[0], std::fabs(t[0]), "bn_grad_dx inference " + shape);
      }
      for (int64_t chunks : {1, 3}) {
        const int64_t stride = C + 3;
        const Vec part = test::random_vec<float>(rng, chunks * stride);
        Vec out = with_sentinel(static_cast<size_t>(C));
        u.bn_combine(chunks, part.data(), stride, C, out.data());
        for (int64_t c = 0; c < C; ++c) {
          double s = 0, m = 0;
          for (int64_t k = 0; k < chunks; ++k) s += part[size_t(k * stride + c)], m += std::fabs(part[size_t(k * stride + c)]);
          r.near(out[size_t(c)], s, m, "bn_combine " + shape);
        }
        r.untouched(out, size_t(C), "bn_combine " + shape);
      }
    }
}

// ---- the batch-norm sums walking whole rows: the bits of the channel-block sums (which batch_norm
// above checks against double), at channel counts of several blocks and a tail.
void bn_whole_rows(const Rows& u, std::mt19937& rng, Report& r) {
  const int64_t ranges[][3] = {{1, 0, 1}, {9, 2, 9}, {300, 5, 300}};  // rows r0 r1
  for (int64_t C : {int64_t(1), int64_t(u.lanes + 3), int64_t(129), int64_t(256), int64_t(300), int64_t(517)})
    for (const auto& rg : ranges) {
      const int64_t rows = rg[0], r0 = rg[1], r1 = rg[2], n = rows * C;
      const size_t nc = size_t(C);
      const Vec x = test::random_vec<float>(rng, n, -2, 3), dy = test::random_vec<float>(rng, n),
                mean = test::random_vec<float>(rng, C);
      Vec b[4], w[4];
      for (int i = 0; i < 4; ++i) b[i] = with_sentinel(nc), w[i] = with_sentinel(nc);
      u.bn_sum_x(r0, r1, C, x.data(), b[0].data());
      u.bn_sum_sq(r0, r1, C, x.data(), mean.data(), b[1].data());
      u.bn_grad_sums(r0, r1, C, dy.data(), x.data(), mean.data(), b[2].data(), b[3].data());
      u.bn_sum_x_whole(r0, r1, C, x.data(), w[0].data());
      u.bn_sum_sq_whole(r0, r1, C, x.data(), mean.data(), w[1].data());
      u.bn_grad_sums_whole(r0, r1, C, dy.data(), x.data(), mean.data(), w[2].data(), w[3].data());
      const std::string shape = at("whole rows r0 r1 C", {r0, r1, C});
      for (int i = 0; i < 4; ++i) {
        for (size_t c = 0; c < nc; ++c) r.same(w[i][c], b[i][c], shape + " sum " + std::to_string(i));
        r.untouched(w[i], nc, shape);
      }
      for (size_t c = 0; c < nc; ++c) {  // and one sum against double, so a change in both is caught
        double s = 0, m = 0;
        for (int64_t row = r0; row < r1; ++row) s += x[size_t(row * C) + c], m += std::fabs(x[size_t(row * C) + c]);
        r.near(w[0][c], s, m, "bn_sum_x_whole " + shape);
      }
    }
}

// ---- the channels-first batch-norm gradient over one plane of P values, against loops in double;
// the non-temporal dx (into a 64-byte aligned buffer) gives the same bits as the plain one.
void bn_grad_plane(const Rows& u, std::mt19937& rng, Report& r) {
  const int64_t L = u.lanes;
  for (int64_t P : {int64_t(1), L - 1, L, L + 1, 2 * L, 2 * L + 1, 3 * L + 5, int64_t(45)}) {
    if (P < 1) continue;
    const Vec x = test::random_vec<float>(rng, P, -2, 3), dy = test::random_vec<float>(rng, P);
    const Vec k = test::random_vec<float>(rng, 4);  // m, k1, k2, k3
    const std::string shape = at("P", {P});
    Vec s = with_sentinel(2);
    u.bn_grad_plane_sums(P, dy.data(), x.data(), k[0], &s[0], &s[1]);
    double want[2] = {}, mag[2] = {};
    for (int64_t i = 0; i < P; ++i) {
      const double g = dy[size_t(i)], t = g * (double(x[size_t(i)]) - k[0]);
      want[0] += g, mag[0] += std::fabs(g), want[1] += t, mag[1] += std::fabs(t);
    }
    r.near(s[0], want[0], mag[0], "bn_grad_plane_sums s0 " + shape);
    r.near(s[1], want[1], mag[1], "bn_grad_plane_sums s1 " + shape);
    r.untouched(s, 2, "bn_grad_plane_sums " + shape);
    Vec dxt = with_sentinel(size_t(P)), dxi = with_sentinel(size_t(P)), nt(size_t(P) + 16 + 1, kSentinel);
    float* dxs = nt.data() + (64 - reinterpret_cast<uintptr_t>(nt.data()) % 64) % 64 / sizeof(float);
    u.bn_grad_plane_dx(P, true, false, dy.data(), x.data(), k[0], k[1], k[2], k[3], dxt.data());
    u.bn_grad_plane_dx(P, false, false, dy.data(), x.data(), k[0], k[1], k[2], k[3], dxi.data());
    u.bn_grad_plane_dx(P, true, true, dy.data(), x.data(), k[0], k[1], k[2], k[3], dxs);
    for (int64_t i = 0; i < P; ++i) {
      const double t[3] = {double(dy[size_t(i)]) * k[1], (double(x[size_t(i)]) - k[0]) * k[2], k[3]};
      r.near(dxt[size_t(i)], t[0] + t[1] + t[2], std::fabs(t[0]) + std::fabs(t[1]) + std::fabs(t[2]),
             "bn_grad_plane_dx training " + shape);
      r.near(dxi[size_t(i)], t[0], std::fabs(t[0]), "bn_grad_plane_dx inference " + shape);
      r.same(dxs[i], dxt[size_t(i)], "bn_grad_plane_dx stream " + shape);
    }
    r.untouched(dxt, size_t(P), "bn_grad_plane_dx training " + shape);
    r.untouched(dxi, size_t(P), "bn_grad_plane_dx inference " + shape);
    r.expect(dxs[P] == kSentinel, "bn_grad_plane_dx stream past the plane " + shape);
  }
}

// ---- the depthwise gather row: R source rows of K taps each (offsets k*dilation - pad), source
// step 1 or 2, output pixel step 1 or 2 (the input gradient's phase classes), edges on both sides.
struct DwRowShape {
  int R, K, dilation;
  int64_t step, pad, dst_step;
};
const DwRowShape kDwRows[] = {
    {1, 1, 1, 1, 0, 1}, {1, 2, 1, 1, 1, 2}, {1, 3, 1, 1, 1, 1}, {2, 2, 1, 1, 0, 1}, {2, 3, 1, 1, 1, 1},
    {3, 3, 1, 1, 1, 1}, {3, 3, 1, 1, 2, 2}, {3, 2, 1, 1, 1, 1}, {3, 3, 1, 2, 1, 1}, {1, 3, 2, 1, 2, 1},
    {2, 2, 1, 2, 0, 1}, {3, 1, 1, 1, 0, 1}, {2, 3, 2, 1, 2, 1},
};

void dw_row(const Rows& u, std::mt19937& rng, Report& r) {
  for (const DwRowShape& s : kDwRows)
    for (int64_t nj : {1, 2, 3, 9, 17})
      for (int64_t C : channel_counts(u)) {
        const int64_t nt = int64_t(s.R) * s.K;
        // Source rows as wide as the output needs (the interior runs) or 1-3 pixels (edges only).
        for (int64_t src_w : {int64_t(1), int64_t(3), (nj - 1) * s.step + 1}) {
          std::vector<Vec> rows(static_cast<size_t>(s.R)), w(static_cast<size_t>(nt));
          std::vector<const float*> src(static_cast<size_t>(nt + 1)), wt(static_cast<size_t>(nt + 1));
          std::vector<int64_t> off(size_t(nt + 1), 0);
          for (auto& row : rows) row = test::random_vec<float>(rng, src_w * C);
          for (int64_t t = 0; t < nt; ++t) {
            w[size_t(t)] = test::random_vec<float>(rng, C);
            src[size_t(t)] = rows[size_t(t / s.K)].data();
            wt[size_t(t)] = w[size_t(t)].data();
            off[size_t(t)] = (t % s.K) * s.dilation - s.pad;
          }
          src[size_t(nt)] = src[0], wt[size_t(nt)] = wt[0];  // the drivers' terminator slot
          const int64_t ds = s.dst_step * C;
          Vec dst = with_sentinel(static_cast<size_t>((nj - 1) * ds + C));
          u.dw_row(nj, nt, src.data(), off.data(), wt.data(), s.step, src_w, C, dst.data(), s.dst_step);
          const std::string shape = at("dw_row R K dil step pad dst_step nj src_w C",
                                       {s.R, s.K, s.dilation, s.step, s.pad, s.dst_step, nj, src_w, C});
          for (int64_t i = 0; i < int64_t(dst.size()) - 1; ++i) {
            const int64_t j = i / ds, c = i % ds;
            if (c >= C) {  // between two output pixels of a strided row
              r.expect(dst[size_t(i)] == kSentinel, shape + ": wrote between pixels");
              continue;
            }
            double want = 0, mag = 0;
            for (int64_t t = 0; t < nt; ++t) {
              const int64_t q = j * s.step + off[size_t(t)];
              if (q < 0 || q >= src_w) continue;
              const double term = double(src[size_t(t)][q * C + c]) * wt[size_t(t)][c];
              want += term, mag += std::fabs(term);
            }
            r.near(dst[size_t(i)], want, mag, shape);
          }
          r.untouched(dst, dst.size() - 1, shape);
        }
      }
}

// ---- the stride-2 3-tap input-gradient row: dx[2j] = sum_r dy_r[j-1]*w_r[2] + sum_r dy_r[j]*w_r[0],
// dx[2j+1] = sum_r dy_r[j]*w_r[1] (ukernels/depthwise_gather.h dwx2_row).
void dwx2_row(const Rows& u, std::mt19937& rng, Report& r) {
  for (int R = 1; R <= 3; ++R) {
    if (!u.dwx2_row[R - 1]) continue;
    for (int64_t ow : {1, 2, 3, 8, 9, 17})
      for (int64_t C : channel_counts(u)) {
        std::vector<Vec> dyv(static_cast<size_t>(R)), wv(static_cast<size_t>(R));
        std::vector<const float*> dyr(static_cast<size_t>(R)), wr(static_cast<size_t>(R));
        for (int k = 0; k < R; ++k) {
          dyv[size_t(k)] = test::random_vec<float>(rng, ow * C);
          wv[size_t(k)] = test::random_vec<float>(rng, 3 * C);
          dyr[size_t(k)] = dyv[size_t(k)].data(), wr[size_t(k)] = wv[size_t(k)].data();
        }
        Vec dx = with_sentinel(static_cast<size_t>(2 * ow * C));
        u.dwx2_row[R - 1](dyr.data(), wr.data(), ow, C, dx.data());
        const std::string shape = at("dwx2_row R ow C", {R, ow, C});
        for (int64_t px = 0; px < 2 * ow; ++px)
          for (int64_t c = 0; c < C; ++c) {
            double want = 0, mag = 0;
            auto add = [&](const float* dyrow, int64_t j, const float* wrow, int64_t kx) {
              const double term = double(dyrow[j * C + c]) * wrow[kx * C + c];
              want += term, mag += std::fabs(term);
            };
            for (int k = 0; k < R; ++k) {
              if (px % 2 == 1) add(dyr[size_t(k)], px / 2, wr[size_t(k)], 1);
              else {
                if (px > 0) add(dyr[size_t(k)], px / 2 - 1, wr[size_t(k)], 2);
                add(dyr[size_t(k)], px / 2, wr[size_t(k)], 0);
              }
            }
            r.near(dx[size_t(px * C + c)], want, mag, shape);
          }
        r.untouched(dx, size_t(2 * ow * C), shape);
      }
  }
}

// ---- the few-input-channel filter gradient's single-row tile (kernels/conv2d_backprop_filter_few_c.h):
// row i < R, column j < NRV*lanes, b's pixels consecutive (ldb apart) over rows and columns:
//   c[i*ldc + j] (+)= sum_{r < nrows, q < ncols} a[r*ars + q*acs + i] * b[(r*ncols + q)*ldb + j]
// Strides wider than the data and sentinels in the gaps of c.
void few_c(const Rows& u, std::mt19937& rng, Report& r) {
  if (!u.few_c) return;
  for (int nrv : {1, 2}) {
    const int rmax = u.few_c_rows[nrv];
    for (int R : {1, (rmax + 1) / 2, rmax}) {
      if (R < 1 || R > rmax) continue;
      for (int64_t nrows : {1, 2, 5})
        for (int64_t ncols : {1, 3, 6})
          for (int acc_pf = 0; acc_pf < 4; ++acc_pf) {  // accumulate onto c; with the prefetch body
            const bool acc = acc_pf & 1;
            const int64_t pf_step = acc_pf & 2 ? 64 : 0;
            const int64_t nr = nrv * u.lanes, ldb = nr + u.lanes;
            const int64_t acs = R + 2, ars = ncols * acs + 3, ldc = nr + 3;
            const Vec a = test::random_vec<float>(rng, nrows * ars);
            const Vec b = test::random_vec<float>(rng, nrows * ncols * ldb);
            Vec c = with_sentinel(size_t(R * ldc));
            const Vec init = test::random_vec<float>(rng, int64_t(c.size()));
            for (int64_t e = 0; e < R * ldc; ++e)
              if (e % ldc < nr) c[size_t(e)] = init[size_t(e)];
            u.few_c(nrv, R, nrows, ncols, a.data(), ars, acs, b.data(), ldb, c.data(), ldc, acc, pf_step);
            const std::string shape = at("few_c NRV R nrows ncols acc pf_step", {nrv, R, nrows, ncols, acc, pf_step});
            for (int64_t e = 0; e < int64_t(c.size()); ++e) {
              const int64_t i = e / ldc, j = e % ldc;
              if (i >= R || j >= nr) {
                r.expect(c[size_t(e)] == kSentinel, shape + ": wrote outside the tile at " + std::to_string(e));
                continue;
              }
              double want = acc ? init[size_t(e)] : 0, mag = std::fabs(want);
              for (int64_t rr = 0; rr < nrows; ++rr)
                for (int64_t q = 0; q < ncols; ++q) {
                  const double term = double(a[size_t(rr * ars + q * acs + i)]) * b[size_t((rr * ncols + q) * ldb + j)];
                  want += term, mag += std::fabs(term);
                }
              r.near(c[size_t(e)], want, mag, shape);
            }
          }
    }
  }
}

// ---- the stacked tile: KY filter rows k of J values, rows k*J + i of c:
//   c[(k*J + i)*ldc + j] (+)= sum_{r < nrows, q < ncols} a[r*ars + q*acs + k*kys + i] * b[(r*ncols + q)*ldb + j]
void few_c_stack(const Rows& u, std::mt19937& rng, Report& r) {
  if (!u.few_c_stack) return;
  for (int KY : {2, 3})
    for (int nrv : {1, 2}) {
      const int jmax = u.few_c_stack_rows[KY][nrv];
      for (int J : {1, (jmax + 1) / 2, jmax}) {
        if (J < 1 || J > jmax) continue;
        for (int64_t nrows : {1, 3})
          for (int64_t ncols : {1, 5})
            for (int acc_pf = 0; acc_pf < 4; ++acc_pf) {  // accumulate onto c; with the prefetch body
              const bool acc = acc_pf & 1;
              const int64_t pf_step = acc_pf & 2 ? 64 : 0;
              const int64_t nr = nrv * u.lanes, ldb = nr + u.lanes, ldc = nr + 3;
              const int64_t kys = J + 5, acs = 2, ars = ncols * acs + KY * kys + 1;
              const Vec a = test::random_vec<float>(rng, nrows * ars);
              const Vec b = test::random_vec<float>(rng, nrows * ncols * ldb);
              Vec c = with_sentinel(size_t(KY * J * ldc));
              const Vec init = test::random_vec<float>(rng, int64_t(c.size()));
              for (int64_t e = 0; e < KY * J * ldc; ++e)
                if (e % ldc < nr) c[size_t(e)] = init[size_t(e)];
              u.few_c_stack(KY, nrv, J, nrows, ncols, a.data(), ars, acs, kys, b.data(), ldb, c.data(), ldc, acc, pf_step);
              const std::string shape =
                  at("few_c_stack KY NRV J nrows ncols acc pf_step", {KY, nrv, J, nrows, ncols, acc, pf_step});
              for (int64_t e = 0; e < int64_t(c.size()); ++e) {
                const int64_t row = e / ldc, j = e % ldc;
                if (row >= KY * J || j >= nr) {
                  r.expect(c[size_t(e)] == kSentinel, shape + ": wrote outside the tile at " + std::to_string(e));
                  continue;
                }
                const int64_t k = row / J, i = row % J;
                double want = acc ? init[size_t(e)] : 0, mag = std::fabs(want);
                for (int64_t rr = 0; rr < nrows; ++rr)
                  for (int64_t q = 0; q < ncols; ++q) {
                    const double term = double(a[size_t(rr * ars + q * acs + k * kys + i)]) * b[size_t((rr * ncols + q) * ldb + j)];
                    want += term, mag += std::fabs(term);
                  }
                r.near(c[size_t(e)], want, mag, shape);
              }
            }
      }
    }
}

const Tester kTesters[] = {{"relu", relu},
                           {"pooling", pooling},
                           {"fractional_pooling", fractional_pooling},
                           {"batch_norm", batch_norm},
                           {"bn_whole_rows", bn_whole_rows},
                           {"bn_grad_plane", bn_grad_plane},
                           {"dw_row", dw_row},
                           {"dwx2_row", dwx2_row},
                           {"few_c", few_c},
                           {"few_c_stack", few_c_stack},
                           {"dwf_interior", ukrows::dwf_interior},
                           {"dwf_block", ukrows::dwf_block},
                           {"dwf_chunk3", ukrows::dwf_chunk3},
                           {"bn_grad_dx_stream", ukrows::bn_grad_dx_stream},
                           {"dwg_wasm", ukrows::dwg_wasm},
                           {"dwf_wasm", ukrows::dwf_wasm},
                           {"dw_interior_wasm", ukrows::dw_interior_wasm}};

}  // namespace

TEST_CASE("cpu: non-GEMM micro-kernels of every ISA unit against the reference or a plain loop") {
  int units = 0;
  for (simd::Isa isa : simd::supported_isas()) {
    const Rows& u = simd::kernel_table(isa)->rows;
    REQUIRE(bool(u.relu[0]));
    ++units;
    for (const Tester& t : kTesters) {
      std::mt19937 rng(2212);
      Report r;
      t.run(u, rng, r);
      INFO(std::string(simd::isa_name(isa)) << " (" << u.lanes << " lanes) " << std::string(t.name) << ": " << r.bad << " mismatches, first: " << r.first);
      CHECK(r.bad == 0);
    }
  }
  CHECK(units >= 1);
  // The typed testers skip null slots: the best unit here must have filled them (x86-64 or
  // aarch64: every depthwise filter kernel; the NT dx pass on x86-64).
  const simd::TypedRowUkernels<float>& best = simd::kernel_table(simd::best_isa())->rows.f32;
  CHECK(bool(best.dwf_interior[9]));
#if !defined(__EMSCRIPTEN__)  // wasm_simd128 leaves these null by design: it runs dwf_wasm (simd/wasm/)
  CHECK((best.dwf_block[1][2][1] && best.dwf_chunk3[1][0]));
  CHECK(bool(simd::kernel_table(simd::best_isa())->rows.f64.dwf_chunk3[0][0]));
#elif defined(__wasm_simd128__)  // and fills its own kernels' slots
  const simd::RowUkernels& wasm = simd::kernel_table(simd::best_isa())->rows;
  CHECK((wasm.dwg_wasm[2][2] && wasm.dwf_wasm[1][1] && wasm.dw_interior_wasm && wasm.dwx2_row[2]));
#endif
#if defined(__x86_64__)
  CHECK(bool(best.bn_grad_dx_stream));
#endif
}

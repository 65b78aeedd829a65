// Testers of the depthwise filter gradient's micro-kernels (ukernels/depthwise_filter.h: dwf_interior,
// dwf_block, dwf_chunk3) and FusedBatchNormGrad's non-temporal dx pass (ukernels/batch_norm.h
// bn_grad_dx_stream), run from test_ukernels_rows.cpp's table at every ISA unit runnable here, at
// float and double: each against a double loop written here, with sentinels after every output
// row and in the channels a kernel must leave alone (past its vector channels, other channel groups).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "ukernel_rows.h"

namespace ukrows {
namespace {

using gradrt::ConvParams;
template <class T>
using Typed = gradrt::simd::TypedRowUkernels<T>;

int64_t floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

template <class T>
const Typed<T>& typed(const Rows& u) {
  if constexpr (sizeof(T) == 4) return u.f32;
  else return u.f64;
}

std::string type_name(int bytes) { return bytes == 4 ? "float " : "double "; }

// nt accumulator rows of C channels that start from random values (the kernels add to them),
// a sentinel after each.
template <class T>
struct AccRows {
  std::vector<std::vector<T>> acc, init;
  std::vector<T*> ptr;
  AccRows(std::mt19937& rng, int64_t nt, int64_t C) {
    for (int64_t t = 0; t < nt; ++t) {
      init.push_back(test::random_vec<T>(rng, C));
      acc.push_back(init.back());
      acc.back().push_back(kSentinelT<T>);
    }
    for (auto& a : acc) ptr.push_back(a.data());
  }
  // Row t after the call: channels c < cv hold init + sum over j in [j0, j1) of dy[j*C + c] *
  // px(j)[c] (px: tap t's source pixel for output pixel j, nullptr outside the row); the
  // others are unchanged, the sentinel too.
  template <class Px>
  void check(Report& r, int64_t t, int64_t cv, int64_t j0, int64_t j1, const std::vector<T>& dy, Px px,
             const std::string& shape) const {
    const int64_t C = int64_t(init[size_t(t)].size());
    for (int64_t c = 0; c < C; ++c) {
      const T got = acc[size_t(t)][size_t(c)], was = init[size_t(t)][size_t(c)];
      if (c >= cv) {
        r.same(got, was, shape + ": changed a tail channel");
        continue;
      }
      double want = was, mag = std::fabs(want);
      for (int64_t j = j0; j < j1; ++j)
        if (const T* x = px(j)) {
          const double term = double(dy[size_t(j * C + c)]) * x[c];
          want += term, mag += std::fabs(term);
        }
      r.near(got, want, mag, shape);
    }
    r.untouched(acc[size_t(t)], size_t(C), shape);
  }
};

// NT taps in R rows of K (ky-major, as the driver builds them): tap t reads row t / K at pixel
// j*step + (t % K)*dil - pad; acc rows start from random values (the kernel adds to them). The
// kernel runs j in [j0, j0 + nj), j0 the first pixel with every tap inside, over the vector
// channels it returns (C / L * L); the rest of each acc row must stay as it was.
template <class T>
void dwf_interior_t(const Typed<T>& u, std::mt19937& rng, Report& r) {
  for (int nt : {1, 2, 3, 4, 6, 9}) {
    const auto fn = u.dwf_interior[nt];
    if (!fn) continue;
    const int K = nt % 3 == 0 ? 3 : nt % 2 == 0 ? 2 : 1, R = nt / K;
    for (int64_t step : {1, 2})
      for (int64_t dil : {1, 2})
        for (int64_t pad : {0, 1, 2})
          for (int64_t nj : {0, 1, 2, 3, 9})
            for (int64_t C : channel_counts(u.lanes)) {
              std::vector<int64_t> off(static_cast<size_t>(nt));
              for (int t = 0; t < nt; ++t) off[size_t(t)] = (t % K) * dil - pad;
              const int64_t j0 = pad == 0 ? 0 : (pad + step - 1) / step;  // first j with j*step - pad >= 0
              const int64_t src_w = (j0 + nj) * step + (K - 1) * dil + 1;  // one spare pixel at most
              std::vector<std::vector<T>> rows(static_cast<size_t>(R));
              for (auto& row : rows) row = test::random_vec<T>(rng, src_w * C);
              const std::vector<T> dy = test::random_vec<T>(rng, (j0 + nj) * C + 1);
              AccRows<T> acc(rng, nt, C);
              std::vector<const T*> src(static_cast<size_t>(nt));
              for (int t = 0; t < nt; ++t) src[size_t(t)] = rows[size_t(t / K)].data();
              const int64_t cv = fn(j0, j0 + nj, dy.data(), src.data(), off.data(), acc.ptr.data(), step, C);
              const std::string shape =
                  type_name(sizeof(T)) + at("dwf_interior NT step dil pad nj C", {nt, step, dil, pad, nj, C});
              r.expect(cv == C / u.lanes * u.lanes, shape + ": returned " + std::to_string(cv));
              for (int t = 0; t < nt; ++t)
                acc.check(r, t, cv, j0, j0 + nj, dy, [&](int64_t j) { return src[size_t(t)] + (j * step + off[size_t(t)]) * C; },
                          shape);
            }
  }
}

// One grouped row: R source rows, group r's tap k reads pixel j*S + o[r] + k (the offsets of
// the groups may differ), j < nj; taps outside [0, src_w) add nothing. The kernel is told the
// interior [j_lo, j_hi) where every tap is inside (as dwf_row computes it) and runs the vector
// channels cv; acc rows start from random values.
template <class T>
void dwf_block_t(const Typed<T>& u, std::mt19937& rng, Report& r) {
  const int64_t offsets[][3] = {{0, 0, 0}, {-1, -1, -1}, {-2, -2, -2}, {-1, 0, -2}};
  for (int S = 1; S <= 2; ++S)
    for (int R = 1; R <= 3; ++R)
      for (int K = 2; K <= 3; ++K) {
        const auto fn = u.dwf_block[S - 1][R - 1][K - 2];
        if (!fn) continue;
        for (const auto& o : offsets)
          for (int64_t nj : {1, 2, 3, 8, 9, 17, 26})
            for (int64_t src_w : {int64_t(1), int64_t(2), int64_t(3), (nj - 1) * S + K, (nj - 1) * S + K + 2})
              for (int64_t C : channel_counts(u.lanes)) {
                const int64_t cv = C / u.lanes * u.lanes, nt = int64_t(R) * K;
                if (cv == 0) continue;  // (dwf_row leaves such a row to the caller)
                int64_t j_lo = 0, j_hi = nj;
                for (int g = 0; g < R; ++g) {
                  j_lo = std::max(j_lo, o[g] >= 0 ? 0 : (-o[g] + S - 1) / S);
                  j_hi = std::min(j_hi, floordiv(src_w - K - o[g], S) + 1);
                }
                j_lo = std::min(j_lo, nj);
                j_hi = std::max(j_hi, j_lo);
                std::vector<std::vector<T>> rows(static_cast<size_t>(R));
                std::vector<const T*> rowp(static_cast<size_t>(R));
                for (int g = 0; g < R; ++g) {
                  rows[size_t(g)] = test::random_vec<T>(rng, src_w * C);
                  rowp[size_t(g)] = rows[size_t(g)].data();
                }
                const std::vector<T> dy = test::random_vec<T>(rng, nj * C);
                AccRows<T> acc(rng, nt, C);
                fn(rowp.data(), o, nj, j_lo, j_hi, src_w, C, dy.data(), acc.ptr.data(), cv);
                const std::string shape = type_name(sizeof(T)) + at("dwf_block S R K o nj src_w C",
                                                                    {S, R, K, o[0], o[1], o[2], nj, src_w, C});
                for (int64_t t = 0; t < nt; ++t) {
                  const int64_t g = t / K, k = t % K;
                  acc.check(r, t, cv, 0, nj, dy, [&](int64_t j) -> const T* {
                    const int64_t q = j * S + o[g] + k;
                    return q < 0 || q >= src_w ? nullptr : rowp[size_t(g)] + q * C;
                  }, shape);
                }
              }
      }
}

// 3x3 filter gradient of channels [c, c + NV*L) over output rows [r0, r1) of a batch of 2
// (ranges that cross from one image into the next), widths 1-3 and rows wider than two pixel
// blocks, pads 0-2 on each side, stride_h 1-2, column strips of 8 and 16 and the whole row,
// with and without the row prefetch: out[t*C + c + i] = the sum, t = ky*3 + kx, written (not
// added); every other element of out keeps its sentinel.
struct Chunk3Shape {
  int64_t in_h, in_w, stride_h, pad_top, pad_bottom, pad_left, pad_right;
};
const Chunk3Shape kChunk3Shapes[] = {
    {1, 1, 1, 1, 1, 1, 1}, {2, 2, 1, 1, 1, 1, 1}, {3, 3, 1, 0, 0, 0, 0},  {4, 3, 2, 1, 1, 1, 1},
    {5, 20, 1, 1, 1, 1, 1}, {6, 21, 2, 1, 0, 1, 1}, {3, 40, 1, 0, 2, 2, 2}, {7, 37, 2, 2, 1, 0, 1},
};

template <class T>
void dwf_chunk3_t(const Typed<T>& u, std::mt19937& rng, Report& r) {
  const int64_t L = u.lanes;
  for (int S = 1; S <= 2; ++S)
    for (int NV = 1; NV <= 2; ++NV) {
      const auto fn = u.dwf_chunk3[S - 1][NV - 1];
      if (!fn) continue;
      for (const Chunk3Shape& s : kChunk3Shapes)
        for (int64_t C : {L, 2 * L, 3 * L}) {
          ConvParams p;
          p.batch = 2, p.in_h = s.in_h, p.in_w = s.in_w, p.in_c = C, p.out_c = C;
          p.filter_h = p.filter_w = 3, p.filter_in_c = 1;
          p.stride_h = s.stride_h, p.stride_w = S, p.pad_top = s.pad_top, p.pad_left = s.pad_left;
          p.out_h = (s.in_h + s.pad_top + s.pad_bottom - 3) / s.stride_h + 1;
          p.out_w = (s.in_w + s.pad_left + s.pad_right - 3) / S + 1;
          if (p.out_h <= 0 || p.out_w <= 0) continue;
          const int64_t OW = p.out_w, rows = p.batch * p.out_h;
          // The driver's interior columns: every kx inside x for j in [j_lo, j_hi).
          const int64_t j_lo = std::min(OW, (p.pad_left + S - 1) / S);
          const int64_t j_hi = std::max(j_lo, std::min(OW, floordiv(p.in_w - 3 + p.pad_left, S) + 1));
          const std::vector<T> x = test::random_vec<T>(rng, p.x_elements());
          const std::vector<T> dy = test::random_vec<T>(rng, rows * OW * C);
          const int64_t ranges[][2] = {{0, rows}, {1, rows - 1}, {p.out_h - 1, p.out_h + 1}};
          for (const auto& rr : ranges) {
            const int64_t r0 = rr[0], r1 = rr[1];
            if (r0 < 0 || r1 > rows || r0 >= r1) continue;
            for (int64_t strip : {int64_t(8), int64_t(16), OW})
              for (bool pf : {false, true})
                for (int64_t c = 0; c + NV * L <= C; c += NV * L) {
                  std::vector<T> out = with_sentinel<T>(size_t(9 * C));
                  fn(p, x.data(), dy.data(), r0, r1, c, j_lo, j_hi, strip, out.data() + c, pf);
                  const std::string shape = type_name(sizeof(T)) +
                                            at("dwf_chunk3 S NV in_h in_w sh pads C c r0 r1 strip pf",
                                               {S, NV, s.in_h, s.in_w, s.stride_h, s.pad_top, s.pad_bottom,
                                                s.pad_left, s.pad_right, C, c, r0, r1, strip, pf});
                  for (int64_t t = 0; t < 9; ++t)
                    for (int64_t ch = 0; ch < C; ++ch) {
                      const T got = out[size_t(t * C + ch)];
                      if (ch < c || ch >= c + NV * L) {
                        r.expect(got == kSentinelT<T>, shape + ": wrote outside its channels");
                        continue;
                      }
                      const int64_t ky = t / 3, kx = t % 3;
                      double want = 0, mag = 0;
                      for (int64_t row = r0; row < r1; ++row) {
                        const int64_t n = row / p.out_h, iy = (row % p.out_h) * p.stride_h - p.pad_top + ky;
                        if (iy < 0 || iy >= p.in_h) continue;
                        for (int64_t j = 0; j < OW; ++j) {
                          const int64_t ix = j * S - p.pad_left + kx;
                          if (ix < 0 || ix >= p.in_w) continue;
                          const double term = double(dy[size_t((row * OW + j) * C + ch)]) * x[size_t(p.x_at(n, iy, ix, ch))];
                          want += term, mag += std::fabs(term);
                        }
                      }
                      r.near(got, want, mag, shape);
                    }
                  r.untouched(out, size_t(9 * C), shape);
                }
          }
        }
    }
}

// The training dx pass over rows [r0, r1) of [rows, C], C a multiple of L, dx vector-aligned
// (the driver's conditions): dx = dy*k1 + ((x - mean)*k2 + k3), the rows outside left alone.
// Float: also the same bits as the cached-store pass (bn_grad_dx; the NT stores never change
// a value).
template <class T>
void bn_grad_dx_stream_t(const Rows& rows_u, const Typed<T>& u, std::mt19937& rng, Report& r) {
  if (!u.bn_grad_dx_stream) return;
  const int64_t L = u.lanes;
  const int64_t ranges[][3] = {{1, 0, 1}, {2, 1, 2}, {5, 0, 5}, {7, 2, 6}};  // rows r0 r1
  for (const auto& rg : ranges)
    for (int64_t C : {L, 2 * L, 3 * L, 5 * L}) {
      const int64_t rows = rg[0], r0 = rg[1], r1 = rg[2], n = rows * C;
      const std::vector<T> x = test::random_vec<T>(rng, n, -2, 3), dy = test::random_vec<T>(rng, n);
      const std::vector<T> mean = test::random_vec<T>(rng, C), k1 = test::random_vec<T>(rng, C),
                           k2 = test::random_vec<T>(rng, C), k3 = test::random_vec<T>(rng, C);
      // dx at the first vector-aligned element of the buffer, a sentinel after it.
      std::vector<T> buf(size_t(n + 1 + L), kSentinelT<T>);
      const uintptr_t align = uintptr_t(L) * sizeof(T), a0 = reinterpret_cast<uintptr_t>(buf.data());
      T* dx = buf.data() + ((align - a0 % align) % align) / sizeof(T);
      u.bn_grad_dx_stream(r0, r1, C, dy.data(), x.data(), mean.data(), k1.data(), k2.data(), k3.data(), dx);
      const std::string shape = type_name(sizeof(T)) + at("bn_grad_dx_stream rows r0 r1 C", {rows, r0, r1, C});
      std::vector<float> cached;
      if constexpr (sizeof(T) == 4) {
        cached.assign(size_t(n), kSentinel);
        rows_u.bn_grad_dx(r0, r1, C, true, dy.data(), x.data(), mean.data(), k1.data(), k2.data(), k3.data(),
                          cached.data());
      }
      for (int64_t i = 0; i <= n; ++i) {
        const int64_t row = i / C, c = i % C;
        if (i == n || row < r0 || row >= r1) {
          r.expect(dx[i] == kSentinelT<T>, shape + ": wrote outside its rows");
          continue;
        }
        const double d = double(x[size_t(i)]) - mean[size_t(c)];
        const double t[3] = {double(dy[size_t(i)]) * k1[size_t(c)], d * k2[size_t(c)], double(k3[size_t(c)])};
        r.near(dx[i], t[0] + t[1] + t[2], std::fabs(t[0]) + std::fabs(t[1]) + std::fabs(t[2]), shape);
        if constexpr (sizeof(T) == 4) r.same(dx[i], cached[size_t(i)], shape + ": bits differ from bn_grad_dx");
      }
    }
}

}  // namespace

void dwf_interior(const Rows& u, std::mt19937& rng, Report& r) {
  dwf_interior_t<float>(u.f32, rng, r);
  dwf_interior_t<double>(u.f64, rng, r);
}
void dwf_block(const Rows& u, std::mt19937& rng, Report& r) {
  dwf_block_t<float>(u.f32, rng, r);
  dwf_block_t<double>(u.f64, rng, r);
}
void dwf_chunk3(const Rows& u, std::mt19937& rng, Report& r) {
  dwf_chunk3_t<float>(u.f32, rng, r);
  dwf_chunk3_t<double>(u.f64, rng, r);
}
void bn_grad_dx_stream(const Rows& u, std::mt19937& rng, Report& r) {
  bn_grad_dx_stream_t<float>(u, u.f32, rng, r);
  bn_grad_dx_stream_t<double>(u, u.f64, rng, r);
}

}  // namespace ukrows

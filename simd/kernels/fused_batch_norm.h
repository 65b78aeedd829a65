// FusedBatchNorm forward pieces over x seen as [rows, channels] (rows = N*H*W):
//   batch_norm_stats: mean = (sum x) * (1/R), variance = (sum (x - mean)^2) * (1/R)  (biased,
//                     two passes, as TF's CPU kernel; 1/R is the float reciprocal)
//   batch_norm_apply: y = (x - mean) * (rsqrt(variance + eps) * scale) + offset
// Reductions: rows cut into fixed chunks (independent of threads), per-chunk partial sums
// per channel, added in chunk order. Channels in the lanes; blocks of channels keep their
// accumulators in registers while the chunk's rows stream by.
#pragma once

#include <cmath>
#include <type_traits>

#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Row chunking of the batch-norm reductions.
inline int64_t bn_grain(int64_t rows) { return reduction_grain(rows, 128, 256); }

// Per-channel sums over rows [r0, r1): f.vec<V>(r, c, a, b) adds row r's terms for channels
// c.. (one vector, or one channel with the scalar Vec) into the running sums a and b, which
// are stored to s0[c] and (if s1) s1[c]. Blocks of U vectors of channels per pass over the
// rows: a pass reads U*L contiguous values of each row (with U = 2, a 1 KB row was read in
// 128-byte pieces at a 1 KB stride, which the prefetchers do not follow: 8 latency-bound
// passes per chunk at 256 channels).
template <class T, class Arch, int U, class F>
GRADRT_SIMD_NOINLINE void bn_row_sums_block(int64_t r0, int64_t r1, int64_t c, T* s0, T* s1, const F& f) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  B a[U], b[U];
  for (int u = 0; u < U; ++u) a[u] = b[u] = V::zero();
  for (int64_t r = r0; r < r1; ++r) {
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u) f.template vec<V>(r, c + u * L, a[u], b[u]);
  }
  for (int u = 0; u < U; ++u) {
    V::store(s0 + c + u * L, a[u]);
    if (s1) V::store(s1 + c + u * L, b[u]);
  }
}

template <class T, class Arch, class F>
inline void bn_row_sums(int64_t r0, int64_t r1, int64_t C, T* s0, T* s1, F&& f) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  constexpr int U = std::is_same_v<T, float> ? kTiles.bn_vectors_f32 : kTiles.bn_vectors_f64;  // 2U sums (+ U means)
  int64_t c = 0;
  for (; c + U * L <= C; c += U * L) bn_row_sums_block<T, Arch, U>(r0, r1, c, s0, s1, f);
  // The rest in one pass where it fits a block of 4, 2 or 1 vectors (each at most once).
  if (U > 4 && c + 4 * L <= C) {
    bn_row_sums_block<T, Arch, 4>(r0, r1, c, s0, s1, f);
    c += 4 * L;
  }
  if (c + 2 * L <= C) {
    bn_row_sums_block<T, Arch, 2>(r0, r1, c, s0, s1, f);
    c += 2 * L;
  }
  if (c + L <= C) {
    bn_row_sums_block<T, Arch, 1>(r0, r1, c, s0, s1, f);
    c += L;
  }
  for (; c < C; ++c) {
    T a0 = T(0), b0 = T(0);
    for (int64_t r = r0; r < r1; ++r) f.template vec<Vec<T, scalar_arch>>(r, c, a0, b0);
    s0[c] = a0;
    if (s1) s1[c] = b0;
  }
}

// out[c] = sum over chunks k of part[k*stride + c], in chunk order.
template <class T, class Arch>
inline void bn_combine(int64_t chunks, const T* part, int64_t stride, int64_t C, T* out) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  int64_t c = 0;
  for (; c + L <= C; c += L) {
    auto s = V::zero();
    for (int64_t k = 0; k < chunks; ++k) s = s + V::load(part + k * stride + c);
    V::store(out + c, s);
  }
  for (; c < C; ++c) {
    T s = T(0);
    for (int64_t k = 0; k < chunks; ++k) s += part[k * stride + c];
    out[c] = s;
  }
}

template <class T>
struct BnSumX {
  const T* x;
  int64_t C;
  template <class V, class B>
  void vec(int64_t r, int64_t c, B& a, B&) const { a = a + V::load(x + r * C + c); }
};

template <class T>
struct BnSumSq {
  const T* x;
  const T* mean;
  int64_t C;
  template <class V, class B>
  void vec(int64_t r, int64_t c, B& a, B&) const {
    B d = V::load(x + r * C + c) - V::load(mean + c);
    a = V::fma(d, d, a);
  }
};

template <class T, class Arch>
void batch_norm_stats(const Exec& exec, const BatchNormParams& p, const T* x, T* mean, T* variance) {
  const int64_t R = p.rows, C = p.channels;
  if (C == 0) return;
  const int64_t grain = bn_grain(R), chunks = nchunks(R, grain);
  T* part = static_cast<T*>(workspace(0, sizeof(T) * (chunks * C + 1)));
  const T inv_r = R > 0 ? T(1) / T(R) : T(0);
  par(exec, R, grain, [&](int64_t r0, int64_t r1) {
    bn_row_sums<T, Arch>(r0, r1, C, part + (r0 / grain) * C, static_cast<T*>(nullptr), BnSumX<T>{x, C});
  });
  bn_combine<T, Arch>(chunks, part, C, C, mean);
  for (int64_t c = 0; c < C; ++c) mean[c] *= inv_r;
  par(exec, R, grain, [&](int64_t r0, int64_t r1) {
    bn_row_sums<T, Arch>(r0, r1, C, part + (r0 / grain) * C, static_cast<T*>(nullptr),
                         BnSumSq<T>{x, mean, C});
  });
  bn_combine<T, Arch>(chunks, part, C, C, variance);
  for (int64_t c = 0; c < C; ++c) variance[c] *= inv_r;
}

// y = (x - m) * k + o per channel, rows split across threads (no reduction).
template <class T, class Arch>
inline void bn_affine_rows(const Exec& exec, int64_t R, int64_t C, const T* x, const T* m, const T* k,
                           const T* o, T* y) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  par(exec, R, imax(1, 16384 / imax(1, C)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* xr = x + r * C;
      T* yr = y + r * C;
      int64_t c = 0;
      for (; c + L <= C; c += L)
        V::store(yr + c, V::fma(V::load(xr + c) - V::load(m + c), V::load(k + c), V::load(o + c)));
      for (; c < C; ++c) yr[c] = (xr[c] - m[c]) * k[c] + o[c];
    }
  });
}

template <class T, class Arch>
void batch_norm_apply(const Exec& exec, const BatchNormParams& p, const T* x, const T* scale,
                      const T* offset, const T* mean, const T* variance, T* y) {
  const int64_t R = p.rows, C = p.channels;
  if (C == 0 || R == 0) return;
  // TF's order: (x - mean) * (rsqrt(variance + eps) * scale) + offset.
  T* k = static_cast<T*>(workspace(0, sizeof(T) * C));
  for (int64_t c = 0; c < C; ++c) k[c] = T(1) / std::sqrt(variance[c] + T(p.epsilon)) * scale[c];
  bn_affine_rows<T, Arch>(exec, R, C, x, mean, k, offset, y);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// FusedBatchNormGrad (TF: y_backprop = dy, x, scale, reserve_space_1 = mean mu,
// reserve_space_2 = biased variance; outputs x_backprop = dx, scale_backprop = dscale,
// offset_backprop = doffset). R = rows, inv = rsqrt(var + eps), xc = x - mu.
//   training:  doffset = sum dy, dscale = (sum dy*xc) * inv,
//              dx = scale*inv * (dy - (sum dy)/R - xc * inv^2 * (sum dy*xc)/R)
//   inference: doffset = sum dy, dscale = (sum dy*xc) * inv, dx = dy * scale * inv
// Two passes: the sums (fixed row chunks, partials added in chunk order), then dx as one
// fused multiply-add chain per element: dx = dy*k1 + (xc*k2 + k3) with per-channel k's.
//
// Both passes stream dy and x from L3 or memory (one tensor is megabytes; the sums must be
// complete before any dx), so their cost is bytes moved. A trap measured on Zen 5: inputs
// that are not 64-byte aligned (a std::vector's data is 16 mod 64) make every vector load
// straddle two cache lines; with AVX-512 the row loops then load aligned vectors and shift
// them into place (RowLoader below; ~10% faster at 56x56x256), which gives the same values.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__AVX512F__) && !defined(__EMSCRIPTEN__)
#include <immintrin.h>
#endif

#include "fused_batch_norm.h"

#if defined(__GNUC__)
#define GRADRT_BN_INLINE __attribute__((always_inline))
#else
#define GRADRT_BN_INLINE
#endif

namespace gradrt::simd::GRADRT_SIMD_NS {

// Loads of row vectors p[0 .. N*L) of a tensor whose rows all share one misalignment s
// (elements past the previous 64-byte boundary): with `shift` it loads the N+1 aligned
// vectors covering them and picks each vector out of two neighbours with one permute.
// It reads s elements before p and L - s after p + N*L (the same cache lines, so never a
// new page, but outside the tensor in its first and last row: callers use plain loads there).
// The generic version has no shift and loads directly.
template <class T, class Arch>
struct RowLoader {
  using V = Vec<T, Arch>;
  static constexpr bool kCanShift = false;
  explicit RowLoader(int64_t) {}
  template <int N>
  void load(const T* p, typename V::type (&out)[N]) const {
    for (int u = 0; u < N; ++u) out[u] = V::load(p + u * V::width);
  }
};

#if defined(__AVX512F__) && !defined(__EMSCRIPTEN__)
template <>
struct RowLoader<float, xsimd::avx512f> {
  using V = Vec<float, xsimd::avx512f>;
  static constexpr bool kCanShift = true;
  int64_t s;
  __m512i idx;  // lanes s .. s+15 of the pair (a, b): 16 and up select from b
  explicit RowLoader(int64_t shift)
      : s(shift), idx(_mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                       _mm512_set1_epi32(static_cast<int>(shift)))) {}
  template <int N>
  void load(const float* p, V::type (&out)[N]) const {
    const float* a = p - s;
    __m512 prev = _mm512_load_ps(a);
#pragma GCC unroll 16
    for (int u = 0; u < N; ++u) {
      const __m512 next = _mm512_load_ps(a + (u + 1) * 16);
      out[u] = _mm512_permutex2var_ps(prev, idx, next);
      prev = next;
    }
  }
};

template <>
struct RowLoader<double, xsimd::avx512f> {
  using V = Vec<double, xsimd::avx512f>;
  static constexpr bool kCanShift = true;
  int64_t s;
  __m512i idx;
  explicit RowLoader(int64_t shift)
      : s(shift), idx(_mm512_add_epi64(_mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), _mm512_set1_epi64(shift))) {}
  template <int N>
  void load(const double* p, V::type (&out)[N]) const {
    const double* a = p - s;
    __m512d prev = _mm512_load_pd(a);
#pragma GCC unroll 16
    for (int u = 0; u < N; ++u) {
      const __m512d next = _mm512_load_pd(a + (u + 1) * 8);
      out[u] = _mm512_permutex2var_pd(prev, idx, next);
      prev = next;
    }
  }
};
#endif

// Elements of p past the previous 64-byte boundary, or -1 when p is not even T-aligned.
template <class T>
inline int64_t bn_misalignment(const T* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return a % sizeof(T) != 0 ? -1 : static_cast<int64_t>(a % 64 / sizeof(T));
}

// The shifted loads pay off when a misaligned tensor's rows keep one misalignment (rows of
// whole cache lines) and there are rows in between the first and last.
template <class T, class Arch>
inline bool bn_use_shift(int64_t R, int64_t C, const T* dy, const T* x) {
  if (!RowLoader<T, Arch>::kCanShift || C * int64_t(sizeof(T)) % 64 != 0 || R < 3) return false;
  const int64_t a = bn_misalignment(dy), b = bn_misalignment(x);
  return a >= 0 && b >= 0 && (a != 0 || b != 0);
}

// Sums over rows [r0, r1) for channels [c, c + U*L) into s0 (sum dy) and s1 (sum dy*xc).
// Shift: rows strictly inside the tensor load through the RowLoaders (same values).
template <class T, class Arch, int U, bool Shift>
GRADRT_SIMD_NOINLINE void bn_grad_sum_block(int64_t r0, int64_t r1, int64_t R, int64_t C, int64_t c, const T* dy,
                                            const T* x, const T* mean, const RowLoader<T, Arch>& ldy,
                                            const RowLoader<T, Arch>& lx, T* s0, T* s1) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  B a[U], b[U], m[U];
  for (int u = 0; u < U; ++u) {
    a[u] = b[u] = V::zero();
    m[u] = V::load(mean + c + u * L);
  }
  const T* dyr = dy + r0 * C + c;
  const T* xr = x + r0 * C + c;
  for (int64_t r = r0; r < r1; ++r, dyr += C, xr += C) {
    B d[U], v[U];
    if (Shift && r > 0 && r + 1 < R) {
      ldy.load(dyr, d);
      lx.load(xr, v);
    } else {
      for (int u = 0; u < U; ++u) {
        d[u] = V::load(dyr + u * L);
        v[u] = V::load(xr + u * L);
      }
    }
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u) {
      a[u] = a[u] + d[u];
      b[u] = V::fma(d[u], v[u] - m[u], b[u]);
    }
  }
  for (int u = 0; u < U; ++u) {
    V::store(s0 + c + u * L, a[u]);
    V::store(s1 + c + u * L, b[u]);
  }
}

// dx of row r, channels [c, c + U*L) (training: k2, k3 used; else dx = dy*k1).
template <class T, class Arch, int U, bool Shift, bool Training>
inline GRADRT_BN_INLINE void bn_grad_dx_vectors(int64_t r, int64_t R, int64_t C, int64_t c, const T* dy,
                                                const T* x, const T* mean, const T* k1, const T* k2, const T* k3,
                                                const RowLoader<T, Arch>& ldy, const RowLoader<T, Arch>& lx, T* dx) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  const T* dyr = dy + r * C + c;
  const T* xr = x + r * C + c;
  T* dxr = dx + r * C + c;
  B d[U], v[U];
  if (Shift && r > 0 && r + 1 < R) {
    ldy.load(dyr, d);
    if (Training) lx.load(xr, v);
  } else {
    for (int u = 0; u < U; ++u) {
      d[u] = V::load(dyr + u * L);
      if (Training) v[u] = V::load(xr + u * L);
    }
  }
#pragma GCC unroll 16
  for (int u = 0; u < U; ++u) {
    const int64_t o = c + u * L;
    if (Training) {
      const B t = V::fma(v[u] - V::load(mean + o), V::load(k2 + o), V::load(k3 + o));
      V::store(dxr + u * L, V::fma(d[u], V::load(k1 + o), t));
    } else {
      V::store(dxr + u * L, d[u] * V::load(k1 + o));
    }
  }
}

template <class T, class Arch, bool Shift>
void bn_grad_sum_rows(int64_t r0, int64_t r1, int64_t R, int64_t C, const T* dy, const T* x, const T* mean,
                      const RowLoader<T, Arch>& ldy, const RowLoader<T, Arch>& lx, T* s0, T* s1) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  // Blocks of U channel vectors: 2U running sums and U means in registers while the chunk's
  // rows stream by (sums kept in memory instead stall on 4K aliasing with the loads).
  constexpr int U = L >= 16 ? 8 : 4;  // vectors per block: 3U registers
  int64_t c = 0;
  for (; c + U * L <= C; c += U * L)
    bn_grad_sum_block<T, Arch, U, Shift>(r0, r1, R, C, c, dy, x, mean, ldy, lx, s0, s1);
  for (; c + L <= C; c += L) bn_grad_sum_block<T, Arch, 1, Shift>(r0, r1, R, C, c, dy, x, mean, ldy, lx, s0, s1);
  for (; c < C; ++c) {
    T a = T(0), b = T(0);
    for (int64_t r = r0; r < r1; ++r) {
      a += dy[r * C + c];
      b += dy[r * C + c] * (x[r * C + c] - mean[c]);
    }
    s0[c] = a;
    s1[c] = b;
  }
}

// dx for rows [r0, r1), a row at a time (its vectors in blocks of U).
template <class T, class Arch, bool Shift, bool Training>
GRADRT_SIMD_NOINLINE void bn_grad_dx_rows(int64_t r0, int64_t r1, int64_t R, int64_t C, const T* dy, const T* x,
                                          const T* mean, const T* k1, const T* k2, const T* k3,
                                          const RowLoader<T, Arch>& ldy, const RowLoader<T, Arch>& lx, T* dx) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  constexpr int U = L >= 16 ? 8 : 4;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t c = 0;
    for (; c + U * L <= C; c += U * L)
      bn_grad_dx_vectors<T, Arch, U, Shift, Training>(r, R, C, c, dy, x, mean, k1, k2, k3, ldy, lx, dx);
    for (; c + L <= C; c += L)
      bn_grad_dx_vectors<T, Arch, 1, Shift, Training>(r, R, C, c, dy, x, mean, k1, k2, k3, ldy, lx, dx);
    for (; c < C; ++c) {
      const int64_t e = r * C + c;
      dx[e] = Training ? dy[e] * k1[c] + ((x[e] - mean[c]) * k2[c] + k3[c]) : dy[e] * k1[c];
    }
  }
}

template <class T, class Arch>
void fused_batch_norm_grad(const Exec& exec, const BatchNormParams& p, const T* dy, const T* x,
                           const T* scale, const T* mean, const T* variance, T* dx, T* dscale,
                           T* doffset) {
  const int64_t R = p.rows, C = p.channels;
  if (C == 0) return;
  const int64_t grain = bn_grain(R), chunks = nchunks(R, grain);
  // part: [chunk][2][C]; k: k1, k2, k3, then the two sums, per channel.
  T* part = static_cast<T*>(workspace(0, sizeof(T) * (chunks * 2 * C + 1)));
  T* k = static_cast<T*>(workspace(1, sizeof(T) * 5 * C));
  T* sdy = k + 3 * C;
  T* sdyxc = k + 4 * C;
  const bool shift = bn_use_shift<T, Arch>(R, C, dy, x);
  const RowLoader<T, Arch> ldy(shift ? bn_misalignment(dy) : 0), lx(shift ? bn_misalignment(x) : 0);
  par(exec, R, grain, [&](int64_t r0, int64_t r1) {
    T* s0 = part + (r0 / grain) * 2 * C;
    if (shift)
      bn_grad_sum_rows<T, Arch, true>(r0, r1, R, C, dy, x, mean, ldy, lx, s0, s0 + C);
    else
      bn_grad_sum_rows<T, Arch, false>(r0, r1, R, C, dy, x, mean, ldy, lx, s0, s0 + C);
  });
  bn_combine<T, Arch>(chunks, part, 2 * C, C, sdy);
  bn_combine<T, Arch>(chunks, part + C, 2 * C, C, sdyxc);
  const T inv_r = R > 0 ? T(1) / T(R) : T(0);
  T* k1 = k;
  T* k2 = k + C;
  T* k3 = k + 2 * C;
  for (int64_t c = 0; c < C; ++c) {
    const T inv = T(1) / std::sqrt(variance[c] + T(p.epsilon));
    doffset[c] = sdy[c];
    dscale[c] = sdyxc[c] * inv;
    k1[c] = scale[c] * inv;
    // training: dx = k1*dy - k1*(sum dy)/R - k1*inv^2*(sum dy*xc)/R * xc
    k2[c] = p.is_training ? -k1[c] * (inv * inv * (sdyxc[c] * inv_r)) : T(0);
    k3[c] = p.is_training ? -k1[c] * (sdy[c] * inv_r) : T(0);
  }
  if (R == 0) return;
  // Plain stores: streaming (non-temporal) stores of dx measured no faster here, at batch 1
  // (L3-resident) or 8 (memory-bound, results too noisy on the shared machine to show a gain).
  par(exec, R, imax(1, 16384 / C), [&](int64_t r0, int64_t r1) {
    if (shift) {
      if (p.is_training) bn_grad_dx_rows<T, Arch, true, true>(r0, r1, R, C, dy, x, mean, k1, k2, k3, ldy, lx, dx);
      else bn_grad_dx_rows<T, Arch, true, false>(r0, r1, R, C, dy, x, mean, k1, k2, k3, ldy, lx, dx);
    } else {
      if (p.is_training) bn_grad_dx_rows<T, Arch, false, true>(r0, r1, R, C, dy, x, mean, k1, k2, k3, ldy, lx, dx);
      else bn_grad_dx_rows<T, Arch, false, false>(r0, r1, R, C, dy, x, mean, k1, k2, k3, ldy, lx, dx);
    }
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

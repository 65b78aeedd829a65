// Batch-norm micro-kernels over x (and dy) seen as [rows, channels], channels in the lanes:
// per-channel sums over a range of rows (partials that the drivers combine in chunk order),
// the elementwise passes, non-temporal stores. Every buffer an argument.
#pragma once

#include <type_traits>

#include "vec.h"

#if (defined(__SSE2__) || defined(__AVX__)) && !defined(__EMSCRIPTEN__)
#include <immintrin.h>
#define GRADRT_BN_STREAM 1
#endif

namespace gradrt::simd::GRADRT_SIMD_NS {

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

// The scalar channels [c0, C) one at a time over the rows. One out-of-line copy for both walks:
// inlined, GCC contracted a*b + c into an FMA in one caller and not the other (other bits).
template <class T, class F>
GRADRT_SIMD_NOINLINE void bn_row_sums_tail(int64_t r0, int64_t r1, int64_t c0, int64_t C, T* s0, T* s1, const F& f) {
  for (int64_t c = c0; c < C; ++c) {
    T a0 = T(0), b0 = T(0);
    for (int64_t r = r0; r < r1; ++r) f.template vec<Vec<T, scalar_arch>>(r, c, a0, b0);
    s0[c] = a0;
    if (s1) s1[c] = b0;
  }
}

// U: channel vectors per pass (2U sums, + U means; the unit's Tiles::bn_vectors_*, drivers'
// bn_vectors<T>(kTiles)).
template <class T, class Arch, int U, class F>
inline void bn_row_sums(int64_t r0, int64_t r1, int64_t C, T* s0, T* s1, F&& f) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
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
  bn_row_sums_tail<T>(r0, r1, c, C, s0, s1, f);
}

// The same sums walking whole rows: each row's C values in address order, the running sums
// in s0 / s1 (memory, L1) instead of registers. The same bits as bn_row_sums (each channel
// adds its rows in the same order from the same +0). For inputs far beyond the caches: the
// blocks above read each row in U*L-wide pieces at the row stride, an order the hardware
// prefetchers follow badly from DRAM. Zen 4 (1 thread, FusedBatchNormGrad's sums over 2 x
// 25.7 MB, 256 channels): blocks of 128 channels 4.7-6.4 ms, whole rows 2.0-2.5 ms, a plain
// sequential read of both 2.6-2.9 ms; in L2 the blocks are faster (0.66 vs 0.85 ms per 25k rows).
template <class T, class Arch, class F>
GRADRT_SIMD_NOINLINE void bn_whole_row_sums(int64_t r0, int64_t r1, int64_t C, T* s0, T* s1, const F& f) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t cv = C - C % L;
  for (int64_t c = 0; c < cv; ++c) {
    s0[c] = T(0);
    if (s1) s1[c] = T(0);
  }
  for (int64_t r = r0; r < r1; ++r) {
    for (int64_t c = 0; c < cv; c += L) {
      auto a = V::load(s0 + c), b = s1 ? V::load(s1 + c) : V::zero();
      f.template vec<V>(r, c, a, b);
      V::store(s0 + c, a);
      if (s1) V::store(s1 + c, b);
    }
  }
  // The C % L scalar channels by bn_row_sums' own tail (a pass over the rows: rare widths).
  bn_row_sums_tail<T>(r0, r1, cv, C, s0, s1, f);
}

// bn_row_sums, or (whole_rows, where the channels take more than one block) bn_whole_row_sums.
template <class T, class Arch, int U, class F>
inline void bn_sums(bool whole_rows, int64_t r0, int64_t r1, int64_t C, T* s0, T* s1, const F& f) {
  if (whole_rows && C > U * Vec<T, Arch>::width)
    bn_whole_row_sums<T, Arch>(r0, r1, C, s0, s1, f);
  else
    bn_row_sums<T, Arch, U>(r0, r1, C, s0, s1, f);
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

// FusedBatchNormGrad's training sums as a bn_row_sums term: a += dy, b += dy * (x - mean), the
// operations of bn_grad_sums (same bits).
template <class T>
struct BnGradSum {
  const T* dy;
  const T* x;
  const T* mean;
  int64_t C;
  template <class V, class B>
  void vec(int64_t r, int64_t c, B& a, B& b) const {
    const B d = V::load(dy + r * C + c);
    a = a + d;
    b = V::fma(d, V::load(x + r * C + c) - V::load(mean + c), b);
  }
};

// y = (x - m) * k + o per channel over rows [r0, r1).
template <class T, class Arch>
inline void bn_affine(int64_t r0, int64_t r1, int64_t C, const T* x, const T* m, const T* k, const T* o, T* y) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  for (int64_t r = r0; r < r1; ++r) {
    const T* xr = x + r * C;
    T* yr = y + r * C;
    int64_t c = 0;
    for (; c + L <= C; c += L)
      V::store(yr + c, V::fma(V::load(xr + c) - V::load(m + c), V::load(k + c), V::load(o + c)));
    for (; c < C; ++c) yr[c] = (xr[c] - m[c]) * k[c] + o[c];
  }
}

// Whether stream_store<T, Arch> is a real non-temporal store on this ISA (else no NT path).
template <class T, class Arch>
constexpr bool bn_can_stream() {
#if defined(GRADRT_BN_STREAM)
  if constexpr (std::is_same_v<Arch, scalar_arch>) {
    return false;
  } else {
    constexpr size_t bytes = sizeof(T) * Vec<T, Arch>::width;
#if defined(__AVX512F__)
    if (bytes == 64) return true;
#endif
#if defined(__AVX__)
    if (bytes == 32) return true;
#endif
    return bytes == 16;
  }
#else
  return false;
#endif
}

// Non-temporal store of one vector to a vector-aligned p (only where bn_can_stream).
template <class T, class Arch>
inline void stream_store(T* p, const typename Vec<T, Arch>::type& v) {
#if defined(GRADRT_BN_STREAM)
  constexpr size_t bytes = sizeof(T) * Vec<T, Arch>::width;
  constexpr bool f = std::is_same_v<T, float>;
#if defined(__AVX512F__)
  if constexpr (bytes == 64) {
    if constexpr (f) _mm512_stream_ps(p, v); else _mm512_stream_pd(p, v);
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (bytes == 32) {
    if constexpr (f) _mm256_stream_ps(p, v); else _mm256_stream_pd(p, v);
    return;
  }
#endif
  if constexpr (bytes == 16) {
    if constexpr (f) _mm_stream_ps(p, v); else _mm_stream_pd(p, v);
    return;
  }
#endif
  Vec<T, Arch>::store(p, v);
}

// Training dx of channels [c, c + L) of one row: dy*k1 + ((x - mean)*k2 + k3).
template <class T, class Arch>
inline typename Vec<T, Arch>::type bn_grad_dx_vec(const T* dyr, const T* xr, const T* mean, const T* k1, const T* k2,
                                                  const T* k3, int64_t c) {
  using V = Vec<T, Arch>;
  auto xc = V::load(xr + c) - V::load(mean + c);
  return V::fma(V::load(dyr + c), V::load(k1 + c), V::fma(xc, V::load(k2 + c), V::load(k3 + c)));
}

// The training dx pass over rows [r0, r1), C a multiple of the vector width and dx
// vector-aligned: NT stores, then a fence so the joining thread sees them.
template <class T, class Arch>
GRADRT_SIMD_NOINLINE void bn_grad_dx_stream(int64_t r0, int64_t r1, int64_t C, const T* dy, const T* x,
                                             const T* mean, const T* k1, const T* k2, const T* k3, T* dx) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  for (int64_t r = r0; r < r1; ++r) {
    const T* dyr = dy + r * C;
    const T* xr = x + r * C;
    T* dxr = dx + r * C;
    for (int64_t c = 0; c < C; c += L) stream_store<T, Arch>(dxr + c, bn_grad_dx_vec<T, Arch>(dyr, xr, mean, k1, k2, k3, c));
  }
#if defined(GRADRT_BN_STREAM)
  _mm_sfence();
#endif
}

// Training sums of FusedBatchNormGrad over rows [r0, r1): s0[c] = sum dy, s1[c] = sum dy*(x - mean).
// U channel vectors per pass (3U registers).
template <class T, class Arch, int U>
inline void bn_grad_sums(int64_t r0, int64_t r1, int64_t C, const T* dy, const T* x, const T* mean, T* s0, T* s1) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  // Blocks of U channel vectors: 2U running sums and U means in registers while the chunk's
  // rows stream by (sums kept in memory instead stall on 4K aliasing with the loads).
  int64_t c = 0;
  for (; c + U * L <= C; c += U * L) {
    typename V::type a[U], b[U], m[U];
    for (int u = 0; u < U; ++u) {
      a[u] = b[u] = V::zero();
      m[u] = V::load(mean + c + u * L);
    }
    const T* dyr = dy + r0 * C + c;
    const T* xr = x + r0 * C + c;
    for (int64_t r = r0; r < r1; ++r, dyr += C, xr += C) {
#pragma GCC unroll 8
      for (int u = 0; u < U; ++u) {
        const auto d = V::load(dyr + u * L);
        a[u] = a[u] + d;
        b[u] = V::fma(d, V::load(xr + u * L) - m[u], b[u]);
      }
    }
    for (int u = 0; u < U; ++u) {
      V::store(s0 + c + u * L, a[u]);
      V::store(s1 + c + u * L, b[u]);
    }
  }
  for (; c + L <= C; c += L) {
    auto a = V::zero(), b = V::zero();
    const auto m = V::load(mean + c);
    for (int64_t r = r0; r < r1; ++r) {
      const auto d = V::load(dy + r * C + c);
      a = a + d;
      b = V::fma(d, V::load(x + r * C + c) - m, b);
    }
    V::store(s0 + c, a);
    V::store(s1 + c, b);
  }
  bn_row_sums_tail<T>(r0, r1, c, C, s0, s1, BnGradSum<T>{dy, x, mean, C});
}

// Channels-first FusedBatchNormGrad (NCHW): one image's plane of one channel, P contiguous
// values. Sums: s0 = sum dy, s1 = sum dy*(x - m), in two vector pairs (even and odd vectors),
// then the pair added, its lanes in lane order, the scalar tail last: a fixed order per P.
template <class T, class Arch>
inline void bn_grad_plane_sums(int64_t P, const T* dy, const T* x, T m, T* s0, T* s1) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  auto a0 = V::zero(), a1 = V::zero(), b0 = V::zero(), b1 = V::zero();
  const auto mv = V::set1(m);
  int64_t i = 0;
  for (; i + 2 * L <= P; i += 2 * L) {
    const auto d0 = V::load(dy + i), d1 = V::load(dy + i + L);
    a0 = a0 + d0;
    a1 = a1 + d1;
    b0 = V::fma(d0, V::load(x + i) - mv, b0);
    b1 = V::fma(d1, V::load(x + i + L) - mv, b1);
  }
  if (i + L <= P) {
    const auto d0 = V::load(dy + i);
    a0 = a0 + d0;
    b0 = V::fma(d0, V::load(x + i) - mv, b0);
    i += L;
  }
  T la[L], lb[L];
  V::store(la, a0 + a1);
  V::store(lb, b0 + b1);
  T sa = T(0), sb = T(0);
  for (int64_t l = 0; l < L; ++l) {
    sa += la[l];
    sb += lb[l];
  }
  for (; i < P; ++i) {
    sa += dy[i];
    sb += dy[i] * (x[i] - m);
  }
  *s0 = sa;
  *s1 = sb;
}

// dx of one channels-first plane (the channel's constants as scalars): training dy*k1 +
// ((x - m)*k2 + k3), inference dy*k1, as bn_grad_dx per element. stream (training, where
// bn_can_stream): NT stores, dx vector-aligned.
template <class T, class Arch>
inline void bn_grad_plane_dx(int64_t P, bool training, bool stream, const T* dy, const T* x, T m, T k1, T k2, T k3,
                             T* dx) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const auto mv = V::set1(m), k1v = V::set1(k1), k2v = V::set1(k2), k3v = V::set1(k3);
  int64_t i = 0;
  if (!training) {
    for (; i + L <= P; i += L) V::store(dx + i, V::load(dy + i) * k1v);
    for (; i < P; ++i) dx[i] = dy[i] * k1;
    return;
  }
  auto at = [&](int64_t j) { return V::fma(V::load(dy + j), k1v, V::fma(V::load(x + j) - mv, k2v, k3v)); };
  if (stream) {
    for (; i + L <= P; i += L) stream_store<T, Arch>(dx + i, at(i));
#if defined(GRADRT_BN_STREAM)
    _mm_sfence();  // the joining thread sees the NT stores
#endif
  } else {
    for (; i + L <= P; i += L) V::store(dx + i, at(i));
  }
  for (; i < P; ++i) dx[i] = dy[i] * k1 + ((x[i] - m) * k2 + k3);
}

// dx of FusedBatchNormGrad over rows [r0, r1): training dx = dy*k1 + ((x - mean)*k2 + k3),
// inference dx = dy*k1 (per-channel k's).
template <class T, class Arch>
inline void bn_grad_dx(int64_t r0, int64_t r1, int64_t C, bool training, const T* dy, const T* x, const T* mean,
                       const T* k1, const T* k2, const T* k3, T* dx) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  for (int64_t r = r0; r < r1; ++r) {
    const T* dyr = dy + r * C;
    const T* xr = x + r * C;
    T* dxr = dx + r * C;
    int64_t c = 0;
    if (training) {
      for (; c + L <= C; c += L) V::store(dxr + c, bn_grad_dx_vec<T, Arch>(dyr, xr, mean, k1, k2, k3, c));
      for (; c < C; ++c) dxr[c] = dyr[c] * k1[c] + ((xr[c] - mean[c]) * k2[c] + k3[c]);
    } else {
      for (; c + L <= C; c += L) V::store(dxr + c, V::load(dyr + c) * V::load(k1 + c));
      for (; c < C; ++c) dxr[c] = dyr[c] * k1[c];
    }
  }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// Depthwise row kernels that reuse source vectors along kx (M == 1, channels in the lanes).
//
// Both depthwise gradients and the forward walk a row of pixels j with a tap table
//   tap t: source pixel j*step + off[t] of row src[t], weight/accumulator row t.
// The callers build the table ky-major, so it usually comes as R groups of K taps that
// share one source row and whose offsets are consecutive (dilation 1): off = o_r + k,
// k = 0..K-1 (in either order inside the group). Then pixel j's tap k and pixel j+1's
// tap k-1 (step 1) read the same source vector: a block of P pixels needs only
// (P-1)*step + K source loads per group instead of P*K, each feeding up to K
// multiply-adds from registers. `tap_groups` detects that shape; dwg_row (gather: the
// forward and the input gradient) and dwf_row (filter-gradient accumulation) use it.
#pragma once

#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Pixels per register block. With 32 vector registers (AVX-512, NEON) 8 pixels fit next to
// 9 weights/accumulators; with 16 (SSE, AVX2) or V8's 15 usable on x64 (WASM, which also
// needs a temporary for every product: no FMA), 4.
#if defined(__AVX512F__) || defined(__aarch64__)
constexpr int kDwP = 8;
#else
constexpr int kDwP = 4;
#endif

// Pins a loaded vector in a register. Without it GCC folds the load back into every
// multiply-add that uses it (a memory operand per FMA: the reuse this file is about is
// undone, and unaligned 64-byte loads split across cache lines cost twice).
template <class B>
inline void dw_pin(B& x) {
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
  if constexpr (sizeof(B) >= 16) {
    auto r = static_cast<typename B::register_type>(x);
#if defined(__x86_64__)
    asm("" : "+v"(r));
#else
    asm("" : "+w"(r));
#endif
    x = B(r);
  }
#else
  (void)x;
#endif
}

// The grouped form of a tap table: group r reads row base[r] (already offset to the
// group's lowest source pixel o_r, i.e. base[r] = src + o_r*C), and its k-th tap (source
// pixel j*step + o_r + k) has table index idx[r*K + k].
struct TapGroups {
  int R = 0, K = 0;
  int64_t o[3];    // lowest offset of each group
  int64_t idx[9];  // table index of group r, tap k
};

// Whether taps [0, nt) form R <= 3 groups of K (2 or 3) consecutive offsets sharing a row;
// fills g if so. A group is K taps in a row of the table with equal src pointer.
template <class T>
inline bool tap_groups(int64_t nt, const T* const* src, const int64_t* off, TapGroups* g) {
  for (int K = 3; K >= 2; --K) {
    if (nt % K != 0 || nt / K > 3) continue;
    const int R = static_cast<int>(nt / K);
    bool ok = true;
    for (int r = 0; r < R && ok; ++r) {
      const int64_t t0 = int64_t(r) * K;
      int64_t lo = off[t0];
      for (int k = 1; k < K; ++k) {
        if (src[t0 + k] != src[t0]) ok = false;
        lo = imin(lo, off[t0 + k]);
      }
      // Offsets must be exactly lo .. lo+K-1 (each once).
      int64_t seen = 0;
      for (int k = 0; k < K && ok; ++k) {
        const int64_t d = off[t0 + k] - lo;
        if (d < 0 || d >= K || (seen >> d & 1)) ok = false;
        else {
          seen |= int64_t(1) << d;
          g->idx[r * K + d] = t0 + k;
        }
      }
      g->o[r] = lo;
    }
    if (ok) {
      g->R = R;
      g->K = K;
      return true;
    }
  }
  return false;
}

// Gather, source step 1, one vector of channels at a time:
//   dst[j*ds + c] = sum_{r, k} base[r][(j + k)*C + c] * w[r*K + k][c],  j < nj, c < cv,
// summed r ascending, then k ascending (also in the remainder loop), from zero.
// base[r] points at pixel 0's lowest source; every source must be inside (interior).
template <class T, class Arch, int R, int K>
GRADRT_SIMD_NOINLINE void dwg_block(int64_t nj, const T* const* base, const T* const* w, int64_t C, int64_t cv,
                                    T* dst, int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = kDwP;
  for (int64_t c = 0; c < cv; c += L) {
    B wv[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) wv[t] = V::load(w[t] + c);
    int64_t j = 0;
    for (; j + P <= nj; j += P) {
      B a[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) a[p] = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = base[r] + j * C + c;
        // Source pixel q feeds pixel p = q - k through tap k; for a fixed p the taps come
        // in k ascending order, as in the remainder loop below.
#pragma GCC unroll 16
        for (int q = 0; q < P + K - 1; ++q) {
          B x = V::load(s + q * C);
          dw_pin(x);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q - k >= 0 && q - k < P) a[q - k] = V::fma(x, wv[r * K + k], a[q - k]);
        }
      }
      T* out = dst + j * ds + c;
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) V::store(out + p * ds, a[p]);
    }
    for (; j < nj; ++j) {
      B a = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k) a = V::fma(V::load(base[r] + (j + k) * C + c), wv[r * K + k], a);
      V::store(dst + j * ds + c, a);
    }
  }
}

// Runs dwg_block for the interior [j_lo, j_hi) of a dw_row with grouped taps (step 1);
// returns the first channel left for the caller's scalar tail.
template <class T, class Arch>
inline int64_t dwg_interior(const TapGroups& g, int64_t j_lo, int64_t j_hi, const T* const* src, const T* const* wt,
                            int64_t C, T* dst, int64_t ds) {
  constexpr int64_t L = Vec<T, Arch>::width;
  const int64_t cv = C / L * L;
  if (j_hi <= j_lo || cv == 0) return 0;
  const T* base[3];
  const T* w[9];
  for (int r = 0; r < g.R; ++r) base[r] = src[g.idx[r * g.K]] + (j_lo + g.o[r]) * C;
  for (int t = 0; t < g.R * g.K; ++t) w[t] = wt[g.idx[t]];
  const int64_t nj = j_hi - j_lo;
  T* d = dst + j_lo * ds;
  switch (g.R * 4 + g.K) {
    case 1 * 4 + 2: dwg_block<T, Arch, 1, 2>(nj, base, w, C, cv, d, ds); break;
    case 2 * 4 + 2: dwg_block<T, Arch, 2, 2>(nj, base, w, C, cv, d, ds); break;
    case 3 * 4 + 2: dwg_block<T, Arch, 3, 2>(nj, base, w, C, cv, d, ds); break;
    case 1 * 4 + 3: dwg_block<T, Arch, 1, 3>(nj, base, w, C, cv, d, ds); break;
    case 2 * 4 + 3: dwg_block<T, Arch, 2, 3>(nj, base, w, C, cv, d, ds); break;
    case 3 * 4 + 3: dwg_block<T, Arch, 3, 3>(nj, base, w, C, cv, d, ds); break;
    default: return 0;
  }
  return cv;
}

// Filter-gradient accumulation over one output row, one vector of channels at a time:
//   acc[r*K + k][c] += sum_j dy[j*C + c] * base[r][(j*step + k)*C + c],  j < nj, c < cv,
// with the sum over j in ascending order from zero, then added to acc. P dy vectors stay
// in registers; each source vector feeds every (pixel, tap) pair that reads it.
template <class T, class Arch, int R, int K, int S>
GRADRT_SIMD_NOINLINE void dwf_block(int64_t nj, const T* dy, const T* const* base, T* const* acc, int64_t C,
                                    int64_t cv) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = kDwP;
  constexpr int Q = (P - 1) * S + K;  // source pixels a block of P reads per group
  for (int64_t c = 0; c < cv; c += L) {
    B a[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) a[t] = V::zero();
    int64_t j = 0;
    for (; j + P <= nj; j += P) {
      B d[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        d[p] = V::load(dy + (j + p) * C + c);
        dw_pin(d[p]);
      }
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = base[r] + j * S * C + c;
        // Source pixel q = p*S + k: tap k of pixel p. For a fixed tap, p ascends with q.
#pragma GCC unroll 32
        for (int q = 0; q < Q; ++q) {
          B x = V::load(s + q * C);
          dw_pin(x);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q >= k && (q - k) % S == 0 && (q - k) / S < P) a[r * K + k] = V::fma(d[(q - k) / S], x, a[r * K + k]);
        }
      }
    }
    for (; j < nj; ++j) {
      const B d0 = V::load(dy + j * C + c);
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k)
          a[r * K + k] = V::fma(d0, V::load(base[r] + (j * S + k) * C + c), a[r * K + k]);
    }
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) V::store(acc[t] + c, V::load(acc[t] + c) + a[t]);
  }
}

template <class T, class Arch, int S>
inline void dwf_dispatch(const TapGroups& g, int64_t nj, const T* dy, const T* const* base, T* const* acc, int64_t C,
                         int64_t cv) {
  switch (g.R * 4 + g.K) {
    case 1 * 4 + 2: dwf_block<T, Arch, 1, 2, S>(nj, dy, base, acc, C, cv); break;
    case 2 * 4 + 2: dwf_block<T, Arch, 2, 2, S>(nj, dy, base, acc, C, cv); break;
    case 3 * 4 + 2: dwf_block<T, Arch, 3, 2, S>(nj, dy, base, acc, C, cv); break;
    case 1 * 4 + 3: dwf_block<T, Arch, 1, 3, S>(nj, dy, base, acc, C, cv); break;
    case 2 * 4 + 3: dwf_block<T, Arch, 2, 3, S>(nj, dy, base, acc, C, cv); break;
    case 3 * 4 + 3: dwf_block<T, Arch, 3, 3, S>(nj, dy, base, acc, C, cv); break;
    default: break;
  }
}

// The filter-gradient interior [j_lo, j_hi) of one output row with grouped taps, source
// step 1 or 2: accp[t] += contributions of every vector channel block. Returns the first
// channel left for the caller, or 0 if it did nothing (other step).
template <class T, class Arch>
inline int64_t dwf_interior_grouped(const TapGroups& g, int64_t j_lo, int64_t j_hi, const T* dyrow,
                                    const T* const* src, T* const* accp, int64_t step, int64_t C) {
  constexpr int64_t L = Vec<T, Arch>::width;
  const int64_t cv = C / L * L;
  if (j_hi <= j_lo || cv == 0 || (step != 1 && step != 2)) return 0;
  const T* base[3];
  T* acc[9];
  for (int r = 0; r < g.R; ++r) base[r] = src[g.idx[r * g.K]] + (j_lo * step + g.o[r]) * C;
  for (int t = 0; t < g.R * g.K; ++t) acc[t] = accp[g.idx[t]];
  const T* dy = dyrow + j_lo * C;
  if (step == 1) dwf_dispatch<T, Arch, 1>(g, j_hi - j_lo, dy, base, acc, C, cv);
  else dwf_dispatch<T, Arch, 2>(g, j_hi - j_lo, dy, base, acc, C, cv);
  return cv;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

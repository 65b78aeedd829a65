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
#if defined(__wasm_simd128__)
#include <type_traits>

#include "depthwise_wasm.h"
#endif

namespace gradrt::simd::GRADRT_SIMD_NS {

// Pixels per register block. With 32 vector registers (AVX-512, NEON) 8 pixels fit next to
// 9 weights/accumulators; with 16 (SSE, AVX2), 4.
// WASM: V8 has 15 usable on x64 and needs a temporary for every product (no FMA), and
// neither LLVM nor Binaryen keep the source order of a block (they hoist its loads and
// compute one accumulator's whole chain at a time), so a block must fit even with every
// value of it live at once: the gather reloads the K weights of one group per block
// (4 pixels: 6 sources + 3 weights + 4 sums); the filter gradient keeps dwf_interior.
constexpr int kDwP = kTiles.dw_block_pixels;
constexpr bool kDwWasm = kTiles.wasm;

// Pins a loaded vector in a register. Without it GCC folds the load back into every
// multiply-add that uses it (a memory operand per FMA: the reuse this file is about is
// undone, and unaligned 64-byte loads split across cache lines cost twice).
// WASM: LLVM does not model registers there (locals are free) and hoists every load of a
// block to its top, computing pixel after pixel; V8 then spills most of them. The pin is
// an ordering point instead (volatile, memory clobber): no load moves across it.
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
#elif defined(__wasm_simd128__)
  if constexpr (sizeof(B) >= 16) {
    auto r = static_cast<typename B::register_type>(x);
    asm volatile("" : "+r"(r) : : "memory");
    x = B(r);
  }
#else
  (void)x;
#endif
}

// WASM: keeps an accumulator's update before the next dw_pin (see there), so the
// multiply-adds of one source vector run before the next one is loaded. Native: nothing.
template <class B>
inline void dw_keep(B& a) {
#if defined(__wasm_simd128__)
  if constexpr (sizeof(B) >= 16) {
    auto r = static_cast<typename B::register_type>(a);
    asm volatile("" : "+r"(r));
    a = B(r);
  }
#else
  (void)a;
#endif
}

// Pins a pointer in a register, so that an unrolled walk `load(q); q += C;` stays one add
// per step instead of GCC precomputing every multiple of C (one register each: spilled).
template <class T>
inline void dw_pin_ptr(T*& q) {
#if defined(__GNUC__) && !defined(__wasm__)
  asm("" : "+r"(q));
#else
  (void)q;
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

// A row in grouped form for the kernels below: group r reads source row row[r], its tap k
// at source pixel j*S + o[r] + k; every tap of pixel j is inside the row (0 <= pixel <
// src_w) for j in [j_lo, j_hi) (the interior); the edge pixels outside it test each tap.
template <class T>
struct GroupedRow {
  const T* row[3];
  int64_t o[3];
  int64_t nj, j_lo, j_hi, src_w, C;
};

// Gather over a whole row, source step 1, one vector of channels at a time (c < cv):
//   dst[j*ds + c] = sum_{r, k} row[r][(j + o[r] + k)*C + c] * w[r*K + k][c]   (taps inside),
// summed r ascending, then k ascending, from zero, for every pixel (block, remainder, edge).
// Channels from c0 (dwg_pair did those before it).
template <class T, class Arch, int R, int K>
GRADRT_SIMD_NOINLINE void dwg_block(const GroupedRow<T>& gr, const T* const* w, int64_t c0, int64_t cv, T* dst,
                                    int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = kDwP;
  const int64_t C = gr.C, nj = gr.nj, j_lo = gr.j_lo, j_hi = gr.j_hi;
  for (int64_t c = c0; c < cv; c += L) {
    B wv[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) wv[t] = V::load(w[t] + c);
    auto edge = [&](int64_t j) {
      B a = V::zero();
      for (int r = 0; r < R; ++r)
        for (int k = 0; k < K; ++k) {
          const int64_t q = j + gr.o[r] + k;
          if (q >= 0 && q < gr.src_w) a = V::fma(V::load(gr.row[r] + q * C + c), wv[r * K + k], a);
        }
      V::store(dst + j * ds + c, a);
    };
    for (int64_t j = 0; j < j_lo; ++j) edge(j);
    // Running pointers: group r's lowest source of the block, the block's first output.
    const T* sr[R];
    for (int r = 0; r < R; ++r) sr[r] = gr.row[r] + (j_lo + gr.o[r]) * C + c;
    T* out = dst + j_lo * ds + c;
    int64_t j = j_lo;
    for (; j + P <= j_hi; j += P) {
      B a[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) a[p] = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = sr[r];
        sr[r] += P * C;
        B wr[K];  // WASM: this group's weights, reloaded per block (see kDwP)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k) wr[k] = kDwWasm ? V::load(w[r * K + k] + c) : wv[r * K + k];
        // Source pixel q feeds pixel p = q - k through tap k; for a fixed p the taps come
        // in k ascending order, as in the remainder and edge loops.
#pragma GCC unroll 16
        for (int q = 0; q < P + K - 1; ++q) {
          B x = V::load(s);
          s += C;
          dw_pin_ptr(s);
          dw_pin(x);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q - k >= 0 && q - k < P) {
              a[q - k] = V::fma(x, wr[k], a[q - k]);
              dw_keep(a[q - k]);
            }
        }
      }
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        V::store(out, a[p]);
        out += ds;
        dw_pin_ptr(out);
      }
    }
    for (; j < j_hi; ++j) {
      B a = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k) a = V::fma(V::load(gr.row[r] + (j + gr.o[r] + k) * C + c), wv[r * K + k], a);
      V::store(dst + j * ds + c, a);
    }
    for (j = imax(j_hi, j_lo); j < nj; ++j) edge(j);
  }
}

// dwg_block for two adjacent channel vectors at once (native, 32 registers: 2*R*K <= 18
// weights + 2 x 4 sums), channels [0, cv2), cv2 a multiple of 2L: each pass along the row
// reads and writes two adjacent lines per pixel (the whole pixel when C = 2L) instead of
// one. Same sums in the same order as dwg_block (r ascending, then k, from zero).
template <class T, class Arch, int R, int K>
GRADRT_SIMD_NOINLINE void dwg_pair(const GroupedRow<T>& gr, const T* const* w, int64_t cv2, T* dst, int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = 4;
  const int64_t C = gr.C, nj = gr.nj, j_lo = gr.j_lo, j_hi = gr.j_hi;
  for (int64_t c = 0; c < cv2; c += 2 * L) {
    B wv[R * K], wu[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) {
      wv[t] = V::load(w[t] + c);
      wu[t] = V::load(w[t] + c + L);
    }
    auto one = [&](int64_t j, bool test) {
      B a = V::zero(), b = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k) {
          const int64_t q = j + gr.o[r] + k;
          if (!test || (q >= 0 && q < gr.src_w)) {
            const T* s = gr.row[r] + q * C + c;
            a = V::fma(V::load(s), wv[r * K + k], a);
            b = V::fma(V::load(s + L), wu[r * K + k], b);
          }
        }
      V::store(dst + j * ds + c, a);
      V::store(dst + j * ds + c + L, b);
    };
    for (int64_t j = 0; j < j_lo; ++j) one(j, true);
    const T* sr[R];
    for (int r = 0; r < R; ++r) sr[r] = gr.row[r] + (j_lo + gr.o[r]) * C + c;
    T* out = dst + j_lo * ds + c;
    int64_t j = j_lo;
    for (; j + P <= j_hi; j += P) {
      B a[P], b[P];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) a[p] = b[p] = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = sr[r];
        sr[r] += P * C;
#pragma GCC unroll 8
        for (int q = 0; q < P + K - 1; ++q) {
          B x = V::load(s), y = V::load(s + L);
          s += C;
          dw_pin_ptr(s);
          dw_pin(x);
          dw_pin(y);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q - k >= 0 && q - k < P) {
              a[q - k] = V::fma(x, wv[r * K + k], a[q - k]);
              b[q - k] = V::fma(y, wu[r * K + k], b[q - k]);
            }
        }
      }
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
        V::store(out, a[p]);
        V::store(out + L, b[p]);
        out += ds;
        dw_pin_ptr(out);
      }
    }
    for (; j < j_hi; ++j) one(j, false);
    for (j = imax(j_hi, j_lo); j < nj; ++j) one(j, true);
  }
}

// Filter-gradient accumulation over a whole output row, one vector of channels at a time:
//   acc[r*K + k][c] += sum_j dy[j*C + c] * row[r][(j*S + o[r] + k)*C + c]   (taps inside).
// P dy vectors stay in registers; each source vector feeds every (pixel, tap) pair that
// reads it. The per-tap sum runs over j ascending into a0, except that with 8-pixel blocks
// the odd pixels of each block go to a second set a1 (two dependency chains per tap: 8
// chained multiply-adds per block would otherwise wait on the FMA latency); acc += a0 + a1.
// The order depends only on the row's geometry, never on threads.
template <class T, class Arch, int R, int K, int S>
GRADRT_SIMD_NOINLINE void dwf_block(const GroupedRow<T>& gr, const T* dy, T* const* acc, int64_t cv) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = kDwP;
  constexpr bool kSplit = P >= 8;
  constexpr int Q = (P - 1) * S + K;  // source pixels a block of P reads per group
  const int64_t C = gr.C, nj = gr.nj, j_lo = gr.j_lo, j_hi = gr.j_hi;
  for (int64_t c = 0; c < cv; c += L) {
    B a0[R * K], a1[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) a0[t] = a1[t] = V::zero();
    auto edge = [&](int64_t j) {
      const B d0 = V::load(dy + j * C + c);
      for (int r = 0; r < R; ++r)
        for (int k = 0; k < K; ++k) {
          const int64_t q = j * S + gr.o[r] + k;
          if (q >= 0 && q < gr.src_w) a0[r * K + k] = V::fma(d0, V::load(gr.row[r] + q * C + c), a0[r * K + k]);
        }
    };
    for (int64_t j = 0; j < j_lo; ++j) edge(j);
    const T* sr[R];  // running pointers, as in dwg_block
    for (int r = 0; r < R; ++r) sr[r] = gr.row[r] + (j_lo * S + gr.o[r]) * C + c;
    const T* dq = dy + j_lo * C + c;
    int64_t j = j_lo;
    for (; j + P <= j_hi; j += P) {
      B d[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        d[p] = V::load(dq);
        dq += C;
        dw_pin_ptr(dq);
        dw_pin(d[p]);
      }
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = sr[r];
        sr[r] += P * S * C;
        // Source pixel q = p*S + k: tap k of pixel p. For a fixed tap, p ascends with q.
#pragma GCC unroll 32
        for (int q = 0; q < Q; ++q) {
          B x = V::load(s);
          s += C;
          dw_pin_ptr(s);
          dw_pin(x);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q >= k && (q - k) % S == 0 && (q - k) / S < P) {
              const int pp = (q - k) / S;
              if (kSplit && (pp & 1)) {
                a1[r * K + k] = V::fma(d[pp], x, a1[r * K + k]);
              } else {
                a0[r * K + k] = V::fma(d[pp], x, a0[r * K + k]);
                dw_keep(a0[r * K + k]);
              }
            }
        }
      }
    }
    for (; j < j_hi; ++j) {
      const B d0 = V::load(dy + j * C + c);
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k)
          a0[r * K + k] = V::fma(d0, V::load(gr.row[r] + (j * S + gr.o[r] + k) * C + c), a0[r * K + k]);
    }
    for (j = imax(j_hi, j_lo); j < nj; ++j) edge(j);
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) {
      const B sum = kSplit ? a0[t] + a1[t] : a0[t];
      V::store(acc[t] + c, V::load(acc[t] + c) + sum);
    }
  }
}

// Fills gr and the per-group-tap pointers (w or acc, reordered to group order) for a row
// whose taps form groups g. Returns the vector channel count cv (0: nothing to do here).
template <class T, class Arch, class P>
inline int64_t grouped_row(const TapGroups& g, const T* const* src, const P* tab, int64_t nj, int64_t j_lo,
                           int64_t j_hi, int64_t src_w, int64_t C, GroupedRow<T>* gr, P* out) {
  constexpr int64_t L = Vec<T, Arch>::width;
  for (int r = 0; r < g.R; ++r) {
    gr->row[r] = src[g.idx[r * g.K]];
    gr->o[r] = g.o[r];
  }
  for (int t = 0; t < g.R * g.K; ++t) out[t] = tab[g.idx[t]];
  gr->nj = nj;
  gr->j_lo = j_lo;
  gr->j_hi = j_hi;
  gr->src_w = src_w;
  gr->C = C;
  return C / L * L;
}

// The whole row of a dw_row gather with grouped taps (step 1), vector channels; returns
// the first channel left for the caller's scalar tail (0 if the groups are not handled).
template <class T, class Arch>
inline int64_t dwg_row(const TapGroups& g, int64_t nj, int64_t j_lo, int64_t j_hi, const T* const* src,
                       const T* const* wt, int64_t src_w, int64_t C, T* dst, int64_t ds) {
  GroupedRow<T> gr;
  const T* w[9];
  const int64_t cv = grouped_row<T, Arch>(g, src, wt, nj, j_lo, j_hi, src_w, C, &gr, w);
  if (cv == 0) return 0;
#if defined(__wasm_simd128__)
  // WASM (float, one offset for all groups): the sliding-window kernels of depthwise_wasm.h.
  if constexpr (std::is_same_v<T, float>) {
    bool same = true;
    for (int r = 1; r < g.R; ++r) same = same && gr.o[r] == gr.o[0];
    if (same) {
      // Through a volatile function pointer: Binaryen inlines a function with one caller
      // (noinline does not reach it), and V8 allocates registers worse in the big merged
      // function; as an indirect call it stays its own (small) function.
      using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                          const float* const*, int64_t, float*, int64_t);
      static Fn volatile const kFns[6] = {&dwg_wasm<1, 2>, &dwg_wasm<2, 2>, &dwg_wasm<3, 2>,
                                          &dwg_wasm<1, 3>, &dwg_wasm<2, 3>, &dwg_wasm<3, 3>};
      if (g.R >= 1 && g.R <= 3 && (g.K == 2 || g.K == 3)) {
        kFns[(g.K - 2) * 3 + g.R - 1](gr.row, gr.o[0], nj, j_lo, j_hi, src_w, C, w, cv, dst, ds);
        return cv;
      }
    }
  }
#endif
  // Native with 32 registers: channel vectors in pairs (dwg_pair), then the odd one.
  constexpr int64_t L = Vec<T, Arch>::width;
  const int64_t cv2 = kTiles.dw_channel_pairs ? cv / (2 * L) * (2 * L) : 0;
  const int64_t c0 = cv2;
  switch (g.R * 4 + g.K) {
    case 1 * 4 + 2: if (cv2) dwg_pair<T, Arch, 1, 2>(gr, w, cv2, dst, ds); dwg_block<T, Arch, 1, 2>(gr, w, c0, cv, dst, ds); break;
    case 2 * 4 + 2: if (cv2) dwg_pair<T, Arch, 2, 2>(gr, w, cv2, dst, ds); dwg_block<T, Arch, 2, 2>(gr, w, c0, cv, dst, ds); break;
    case 3 * 4 + 2: if (cv2) dwg_pair<T, Arch, 3, 2>(gr, w, cv2, dst, ds); dwg_block<T, Arch, 3, 2>(gr, w, c0, cv, dst, ds); break;
    case 1 * 4 + 3: if (cv2) dwg_pair<T, Arch, 1, 3>(gr, w, cv2, dst, ds); dwg_block<T, Arch, 1, 3>(gr, w, c0, cv, dst, ds); break;
    case 2 * 4 + 3: if (cv2) dwg_pair<T, Arch, 2, 3>(gr, w, cv2, dst, ds); dwg_block<T, Arch, 2, 3>(gr, w, c0, cv, dst, ds); break;
    case 3 * 4 + 3: if (cv2) dwg_pair<T, Arch, 3, 3>(gr, w, cv2, dst, ds); dwg_block<T, Arch, 3, 3>(gr, w, c0, cv, dst, ds); break;
    default: return 0;
  }
  return cv;
}

template <class T, class Arch, int S>
inline bool dwf_dispatch(const TapGroups& g, const GroupedRow<T>& gr, const T* dy, T* const* acc, int64_t cv) {
  switch (g.R * 4 + g.K) {
    case 1 * 4 + 2: dwf_block<T, Arch, 1, 2, S>(gr, dy, acc, cv); return true;
    case 2 * 4 + 2: dwf_block<T, Arch, 2, 2, S>(gr, dy, acc, cv); return true;
    case 3 * 4 + 2: dwf_block<T, Arch, 3, 2, S>(gr, dy, acc, cv); return true;
    case 1 * 4 + 3: dwf_block<T, Arch, 1, 3, S>(gr, dy, acc, cv); return true;
    case 2 * 4 + 3: dwf_block<T, Arch, 2, 3, S>(gr, dy, acc, cv); return true;
    case 3 * 4 + 3: dwf_block<T, Arch, 3, 3, S>(gr, dy, acc, cv); return true;
    default: return false;
  }
}

// The filter gradient of one whole output row with grouped taps, source step 1 or 2:
// accp[t] += contributions of the vector channels of every column. Returns the first
// channel left for the caller (0 if it did nothing).
template <class T, class Arch>
inline int64_t dwf_row(const TapGroups& g, int64_t nj, int64_t j_lo, int64_t j_hi, const T* dyrow,
                       const T* const* src, T* const* accp, int64_t step, int64_t src_w, int64_t C) {
  // WASM: dwf_interior's 9 accumulators + 1 dy + 1 source fit V8's registers and measured
  // faster there (about 23 vs 17-22 GFLOP/s in Node 20) than any dwf_block shape tried:
  // LLVM/Binaryen reorder a block so that its reused sources all stay live (see kDwP).
#if defined(__wasm_simd128__)
  // WASM (float, one offset for all groups): the sliding-window kernel of depthwise_wasm.h
  // (a filter row and 8 channels per pass, the dy window in registers).
  if constexpr (std::is_same_v<T, float>) {
    if (step != 1 && step != 2) return 0;
    GroupedRow<T> gr;
    T* acc[9];
    const int64_t cv = grouped_row<T, Arch>(g, src, accp, nj, j_lo, j_hi, src_w, C, &gr, acc);
    if (cv == 0) return 0;
    for (int r = 1; r < g.R; ++r)
      if (gr.o[r] != gr.o[0]) return 0;
    // Through a volatile function pointer, as in dwg_row. One row: no parts, no running sums.
    using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, const float*, float* const*,
                        int64_t, int64_t, int64_t, int64_t, float*, int64_t);
    static Fn volatile const kFns[2][2] = {{&dwf_wasm<2, 1>, &dwf_wasm<3, 1>}, {&dwf_wasm<2, 2>, &dwf_wasm<3, 2>}};
    if (g.R < 1 || g.R > 3 || (g.K != 2 && g.K != 3)) return 0;
    kFns[step - 1][g.K - 2](gr.row, g.R, gr.o[0], nj, src_w, C, dyrow, acc, cv, 1, 0, 0, nullptr, 1);
    return cv;
  }
#endif
  if (kDwWasm || (step != 1 && step != 2)) return 0;
  GroupedRow<T> gr;
  T* acc[9];
  const int64_t cv = grouped_row<T, Arch>(g, src, accp, nj, j_lo, j_hi, src_w, C, &gr, acc);
  if (cv == 0) return 0;
  const bool done = step == 1 ? dwf_dispatch<T, Arch, 1>(g, gr, dyrow, acc, cv) : dwf_dispatch<T, Arch, 2>(g, gr, dyrow, acc, cv);
  return done ? cv : 0;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// WASM SIMD128 sliding-window depthwise row kernels (float, M == 1, channels in the lanes),
// written with <wasm_simd128.h> directly. Only the WASM SIMD unit includes this file
// (through kernels.h, from arch/wasm_simd128.cpp); native builds never see it.
//
// Why a separate form for WASM: V8 (x64) has 15 usable vector registers, no FMA (a*b + c
// is a multiply into a temporary, then an add), and LLVM/Binaryen do not keep the source
// order of an unrolled block (they hoist its loads). So the blocks of ukernels/depthwise_*.h
// either spill or reload. Here a row is walked one column (pixel) per step, with the taps'
// reuse carried in a short window of registers instead of an unrolled block:
//   gather (input gradient):   R*K weights + K accumulators (pixels p .. p+K-1) + x + temp,
//   filter gradient:           R*K accumulators + D dy vectors (pixels p-D+1 .. p) + x + temp,
// at most 14 live vectors for 3x3, and each source vector is loaded once per row.
//
// Geometry (as in GroupedRow, with one offset o shared by the R groups): tap (r, k) of
// pixel j reads source pixel j*S + o + k of row[r]; it exists when that pixel is in
// [0, src_w). Pixels [j_lo, j_hi) have every tap inside (the interior); the steps that touch
// only interior pixels run unchecked, the few others test each tap.
#pragma once

#pragma once

#include <wasm_simd128.h>

#include <utility>

#include "../ukernels/vec.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// a[i] = a[i + 1] (down) or a[i] = a[i - 1] (up) for a window of N <= 3 vectors, written
// out: as a loop, LLVM turns it into a memmove of the array (loop idiom, before unrolling)
// and the window then lives in memory instead of locals.
template <int N>
inline void dw_wasm_shift_down(v128_t* a) {
  static_assert(N >= 1 && N <= 3);
  if constexpr (N >= 2) a[0] = a[1];
  if constexpr (N >= 3) a[1] = a[2];
}
// V8 (TurboFan, Node 20) unrolls a small innermost wasm loop once, and in the copy it
// schedules the loads of a step above its arithmetic: with 9 accumulators and the dy window
// live, the filter-gradient loop then spills accumulators, which go through a store-to-load
// chain every iteration. V8 never unrolls a loop that holds another loop, so a hot loop
// that would spill (dwf_wasm_pass's 4-channel tail) holds an empty one that never runs: `for (i = never; i > p; --i)` with never =
// kDwWasmNever (-1, volatile: opaque to LLVM and Binaryen), one compare per step. (The gather
// kernels measured slower that way: their unrolled copies do not spill.)
inline volatile int64_t kDwWasmNever = -1;

template <int N>
inline void dw_wasm_shift_up(v128_t* a) {
  static_assert(N >= 1 && N <= 3);
  if constexpr (N >= 3) a[2] = a[1];
  if constexpr (N >= 2) a[1] = a[0];
}

// Gather, source step 1, dst pixel stride ds (floats), channels c < cv (multiple of 4):
//   dst[j*ds + c] = sum_{k, r} row[r][(j + o + k)*C + c] * w[r*K + k][c]   (taps inside),
// summed k ascending, then r ascending, from zero.
// Step p loads source pixel q = p + o + K - 1 of each group: tap K-1-i of pixel p+i, so the
// window a[i] holds pixels p .. p+K-1 and pixel p is complete (stored) after step p.
template <int R, int K>
GRADRT_SIMD_NOINLINE void dwg_wasm(const float* const* row, int64_t o, int64_t nj, int64_t j_lo, int64_t j_hi,
                                   int64_t src_w, int64_t C, const float* const* w, int64_t cv, float* dst,
                                   int64_t ds) {
  // Unchecked steps: pixels p .. p+K-1 all interior.
  const int64_t u0 = j_lo, u1 = imax(j_lo, j_hi - (K - 1));
  for (int64_t c = 0; c < cv; c += 4) {
    v128_t wv[R * K];
#pragma clang loop unroll(full)
    for (int t = 0; t < R * K; ++t) wv[t] = wasm_v128_load(w[t] + c);
    v128_t a[K];
#pragma clang loop unroll(full)
    for (int i = 0; i < K; ++i) a[i] = wasm_f32x4_splat(0.0f);
    auto checked = [&](int64_t p) __attribute__((always_inline)) {
      const int64_t q = p + o + K - 1;
      a[K - 1] = wasm_f32x4_splat(0.0f);
      if (q >= 0 && q < src_w) {
#pragma clang loop unroll(full)
        for (int r = 0; r < R; ++r) {
          const v128_t x = wasm_v128_load(row[r] + q * C + c);
#pragma clang loop unroll(full)
          for (int i = 0; i < K; ++i)
            if (p + i >= 0 && p + i < nj) a[i] = wasm_f32x4_add(a[i], wasm_f32x4_mul(x, wv[r * K + K - 1 - i]));
        }
      }
      if (p >= 0) wasm_v128_store(dst + p * ds + c, a[0]);
      dw_wasm_shift_down<K>(a);
    };
    int64_t p = -(K - 1);
    for (; p < u0; ++p) checked(p);
    // Running pointers: each group's source pixel p + o + K - 1, and dst pixel p.
    const float* s[R];
#pragma clang loop unroll(full)
    for (int r = 0; r < R; ++r) s[r] = row[r] + (p + o + K - 1) * C + c;
    float* out = dst + p * ds + c;
    for (; p < u1; ++p) {
      {
        const v128_t x = wasm_v128_load(s[0]);
        s[0] += C;
#pragma clang loop unroll(full)
        for (int i = 0; i + 1 < K; ++i) a[i] = wasm_f32x4_add(a[i], wasm_f32x4_mul(x, wv[K - 1 - i]));
        a[K - 1] = wasm_f32x4_mul(x, wv[0]);
      }
#pragma clang loop unroll(full)
      for (int r = 1; r < R; ++r) {
        const v128_t x = wasm_v128_load(s[r]);
        s[r] += C;
#pragma clang loop unroll(full)
        for (int i = 0; i < K; ++i) a[i] = wasm_f32x4_add(a[i], wasm_f32x4_mul(x, wv[r * K + K - 1 - i]));
      }
      wasm_v128_store(out, a[0]);
      out += ds;
      dw_wasm_shift_down<K>(a);
    }
    for (; p < nj; ++p) checked(p);
  }
}

// Filter gradient, source step S, one filter row per pass and V = 2 channel vectors (8
// channels) per step: K*V accumulators + D*V dy vectors + x + temp (S = 2: 12 live vectors,
// S = 1: 14). The second vector's loads sit at +16 bytes, an immediate of the wasm load, so
// a step costs the same address adds as one vector (the earlier form, all R*K = 9
// accumulators of one vector, needed one running pointer per source row). Step p loads dy
// pixel p and source pixels p*S + o + s (s < S); source pixel p*S + o + s is tap k (k = s,
// s + S, ...) of pixel p - (k - s)/S, so the dy window d[i] holds pixels p - i, i < D =
// (K - 1)/S + 1. Pass (c, r) over the nr rows (row i: source row rw0 + i*xrs, dy + i*dys):
//   acc[r*K + k][c..c+4V) += sum_i sum_j dy_i[j*C + c] * row_i[r][(j*S + o + k)*C + c],
// each tap's sum over i, then j, ascending from zero, then added to acc (taps inside only).
// The passes run channel block outer, filter row inner: the R passes of a block read the
// same dy lines and overlapping x lines, in L1. V8 schedules a step's loads before its
// arithmetic: K*V accumulators + the (D-1)*V dy vectors carried + all of a step's loads +
// a temp (S = 2: 6 + 2 + 6 + 1 = 15, S = 1: 6 + 4 + 4 + 1 = 15) just fit, so the 8-channel
// loop goes without the never-loop and V8 unrolls it (3-4x, a loop exit between the copies;
// ~30% fewer instructions per step on 112x112x32); the 4-channel tail keeps it.
// (Parts, first, last, sum: see dwf_wasm.)
template <int K, int S, int V>
__attribute__((always_inline)) inline void dwf_wasm_pass(const float* rw0, int64_t o, int64_t nj, int64_t u0, int64_t u1,
                                                         int64_t src_w, int64_t C, const float* dy0, float* const* acc,
                                                         int64_t c, int64_t nr, int64_t xrs, int64_t dys,
                                                         int64_t never, float* sum, bool first, bool last) {
  constexpr int D = (K - 1) / S + 1;
  v128_t a[V][K], d[V][D];
#pragma clang loop unroll(full)
  for (int v = 0; v < V; ++v)
#pragma clang loop unroll(full)
    for (int k = 0; k < K; ++k) a[v][k] = first ? wasm_f32x4_splat(0.0f) : wasm_v128_load(sum + k * C + c + 4 * v);
  for (int64_t ri = 0; ri < nr; ++ri) {
    const float* rw = rw0 + ri * xrs;
    const float* dyr = dy0 + ri * dys;
#pragma clang loop unroll(full)
    for (int v = 0; v < V; ++v)
#pragma clang loop unroll(full)
      for (int i = 0; i < D; ++i) d[v][i] = wasm_f32x4_splat(0.0f);
    // One step at pixel p with every source pixel q tested: dy pixel p enters the window
    // (dy_in: load it, else zeros), and tap k (dy window slot (k-s)/S) adds where has(k, s).
    auto step = [&](int64_t p, auto dy_in, auto has) __attribute__((always_inline)) {
#pragma clang loop unroll(full)
      for (int v = 0; v < V; ++v) {
        dw_wasm_shift_up<D>(d[v]);
        d[v][0] = dy_in() ? wasm_v128_load(dyr + p * C + 4 * v) : wasm_f32x4_splat(0.0f);
      }
#pragma clang loop unroll(full)
      for (int s = 0; s < S; ++s) {
        const int64_t q = p * S + o + s;
        if (q < 0 || q >= src_w) continue;
#pragma clang loop unroll(full)
        for (int v = 0; v < V; ++v) {
          const v128_t x = wasm_v128_load(rw + q * C + 4 * v);
#pragma clang loop unroll(full)
          for (int k = s; k < K; k += S)
            if (has(k, s)) a[v][k] = wasm_f32x4_add(a[v][k], wasm_f32x4_mul(d[v][(k - s) / S], x));
        }
      }
    };
    // Generic: the taps whose pixel p - (k-s)/S exists.
    auto checked = [&](int64_t p) __attribute__((always_inline)) {
      step(
          p, [&] { return p < nj; },
          [&](int k, int s) {
            const int64_t pp = p - (k - s) / S;
            return pp >= 0 && pp < nj;
          });
    };
    // Edge step p = P (left, P < D-1) or nj + P (right, P < D-1) when the unchecked steps are
    // exactly [D-1, nj): which taps exist is known at compile time (pixel p - (k-s)/S >= 0,
    // resp. < nj); only the source pixel q is tested.
    auto edge = [&]<bool Left, int P>() __attribute__((always_inline)) {
      step(
          Left ? P : nj + P, [] { return Left; },
          [](int k, int s) { return Left ? (k - s) / S <= P : (k - s) / S > P; });
    };
    const bool exact = u0 == D - 1 && u1 == nj;
    int64_t p = 0;
    if (exact) {
      [&]<int... P>(std::integer_sequence<int, P...>) { (edge.template operator()<true, P>(), ...); }(
          std::make_integer_sequence<int, D - 1>{});
      p = D - 1;
    }
    for (; p < imin(u0, u1); ++p) checked(p);
    const float* s0 = rw + (p * S + o) * C;
    const float* dq = dyr + p * C;
    for (; p < u1; ++p) {
      if (V == 1)
        for (int64_t i = never; i > p; --i) asm volatile("");
#pragma clang loop unroll(full)
      for (int v = 0; v < V; ++v) {
        dw_wasm_shift_up<D>(d[v]);
        d[v][0] = wasm_v128_load(dq + 4 * v);
      }
      dq += C;
#pragma clang loop unroll(full)
      for (int s = 0; s < S; ++s)
#pragma clang loop unroll(full)
        for (int v = 0; v < V; ++v) {
          const v128_t x = wasm_v128_load(s0 + s * C + 4 * v);
#pragma clang loop unroll(full)
          for (int k = s; k < K; k += S) a[v][k] = wasm_f32x4_add(a[v][k], wasm_f32x4_mul(d[v][(k - s) / S], x));
        }
      s0 += S * C;
    }
    if (exact)
      [&]<int... P>(std::integer_sequence<int, P...>) { (edge.template operator()<false, P>(), ...); }(
          std::make_integer_sequence<int, D - 1>{});
    else
      for (; p < nj + D - 1; ++p) checked(p);
  }
#pragma clang loop unroll(full)
  for (int v = 0; v < V; ++v)
#pragma clang loop unroll(full)
    for (int k = 0; k < K; ++k)
      if (last)
        wasm_v128_store(acc[k] + c + 4 * v, wasm_f32x4_add(wasm_v128_load(acc[k] + c + 4 * v), a[v][k]));
      else
        wasm_v128_store(sum + k * C + c + 4 * v, a[v][k]);
}

// R filter rows (row[r], acc[r*K ..]), channels c < cv (multiple of 4): blocks of 8
// channels, then one of 4 (cv % 8 == 4). The nr rows go in parts of up to sub rows, each part
// block by block (the L1 footprint of a block's pass grows with its rows): a tap's running
// sum moves from one part to the next through sum[t*C + c] (t = r*K + k; exact, so the bits
// are those of one pass over the nr rows). With sub >= nr there is one part and sum may be null.
template <int K, int S>
GRADRT_SIMD_NOINLINE void dwf_wasm(const float* const* row, int64_t R, int64_t o, int64_t nj, int64_t src_w,
                                    int64_t C, const float* dy, float* const* acc, int64_t cv, int64_t nr, int64_t xrs,
                                    int64_t dys, float* sum, int64_t sub) {
  constexpr int D = (K - 1) / S + 1;
  // Unchecked steps: pixels p-D+1 .. p all exist (p >= D-1, p < nj) and every source
  // p*S + o + s (s < S) is inside (a step needs no more; every tap of pixel p inside would
  // also exclude the last pixel of a stride-2 SAME row, kx = 2 outside).
  const int64_t u0 = imax(D - 1, (-o + S - 1) / S), u1 = imax(u0, imin(nj, floordiv(src_w - o - S, S) + 1));
  const int64_t never = kDwWasmNever;
  for (int64_t i0 = 0; i0 < nr; i0 += sub) {
    const int64_t n = imin(sub, nr - i0);
    const bool first = i0 == 0, last = i0 + n == nr;
    int64_t c = 0;
    for (; c + 8 <= cv; c += 8)
      for (int64_t r = 0; r < R; ++r)
        dwf_wasm_pass<K, S, 2>(row[r] + i0 * xrs + c, o, nj, u0, u1, src_w, C, dy + i0 * dys + c, acc + r * K, c, n,
                               xrs, dys, never, sum ? sum + r * K * C : nullptr, first, last);
    if (c < cv)
      for (int64_t r = 0; r < R; ++r)
        dwf_wasm_pass<K, S, 1>(row[r] + i0 * xrs + c, o, nj, u0, u1, src_w, C, dy + i0 * dys + c, acc + r * K, c, n,
                               xrs, dys, never, sum ? sum + r * K * C : nullptr, first, last);
  }
}

// Input gradient along a row with stride 2 and 3 taps (dilation 1, pad_left 0, in_w ==
// 2*out_w), both column phases at once: dy pixel j of each filter row r feeds dx pixels
// 2j, 2j+1, 2j+2 through kx = 0, 1, 2:
//   dx[2j]   = sum_r dy_r[j-1]*w_r[2] (j >= 1) + sum_r dy_r[j]*w_r[0],
//   dx[2j+1] = sum_r dy_r[j]*w_r[1],
// each sum r ascending; dy_r = dyr[r] (rows of C floats per pixel), w_r[kx] = wr[r] + kx*C.
// One dy load per filter row feeds 3 multiply-adds (the phase-class form loads it twice);
// 3R weights + 4 sums + x + temp <= 15 registers. Channels c < cv (multiple of 4).
// Pixels in blocks of P = 8 (as dwx2_row), channel vectors inside a block, pixels innermost:
// a block's dy (R x 8 pixels) and dx (16 pixels) stay in L1 while its channel vectors pass
// over them. One pass per vector over the whole row (before session 15) walked 2*ow dx lines
// and R*ow dy lines per vector at a stride of C floats: 1.08x the time at C = 144, 1.35x at
// C = 32 and 2.2x at C = 256 (whose 1 KiB strides fall into a few L1 sets) on Cascade Lake;
// P = 4 is 1-4% behind 8, P = 16 loses (NOTES.md). The weights and the sum carried in from the
// block's left neighbour, dy_r[j0-1]*w_r[2], are reloaded per block and vector (4R loads per 8
// pixels); the carried sum is formed in the loop's order, so the bits are those of one pass.
template <int R>
GRADRT_SIMD_NOINLINE void dwx2_wasm(const float* const* dyr, const float* const* wr, int64_t ow, int64_t C, int64_t cv,
                                    float* dx) {
  constexpr int64_t P = 8;
  for (int64_t j0 = 0; j0 < ow; j0 += P) {
    const int64_t n = ow - j0 < P ? ow - j0 : P;
    for (int64_t c = 0; c < cv; c += 4) {
      v128_t w0[R], w1[R], w2[R];
      const float* s[R];
#pragma clang loop unroll(full)
      for (int r = 0; r < R; ++r) {
        w0[r] = wasm_v128_load(wr[r] + c);
        w1[r] = wasm_v128_load(wr[r] + C + c);
        w2[r] = wasm_v128_load(wr[r] + 2 * C + c);
        s[r] = dyr[r] + j0 * C + c;
      }
      v128_t pend = wasm_f32x4_splat(0.0f);
      if (j0 > 0) {
        pend = wasm_f32x4_mul(wasm_v128_load(s[0] - C), w2[0]);
#pragma clang loop unroll(full)
        for (int r = 1; r < R; ++r) pend = wasm_f32x4_add(pend, wasm_f32x4_mul(wasm_v128_load(s[r] - C), w2[r]));
      }
      float* out = dx + 2 * j0 * C + c;
      for (int64_t j = 0; j < n; ++j) {
        v128_t e = pend, o, pn;
        {
          const v128_t x = wasm_v128_load(s[0]);
          s[0] += C;
          e = wasm_f32x4_add(e, wasm_f32x4_mul(x, w0[0]));
          o = wasm_f32x4_mul(x, w1[0]);
          pn = wasm_f32x4_mul(x, w2[0]);
        }
#pragma clang loop unroll(full)
        for (int r = 1; r < R; ++r) {
          const v128_t x = wasm_v128_load(s[r]);
          s[r] += C;
          e = wasm_f32x4_add(e, wasm_f32x4_mul(x, w0[r]));
          o = wasm_f32x4_add(o, wasm_f32x4_mul(x, w1[r]));
          pn = wasm_f32x4_add(pn, wasm_f32x4_mul(x, w2[r]));
        }
        wasm_v128_store(out, e);
        wasm_v128_store(out + C, o);
        out += 2 * C;
        pend = pn;
      }
    }
  }
}

// WASM SIMD128 interior of dw_row for more than 4 taps (dw_interior keeps the rest): V8 on
// x64 has 15 vector registers and no FMA (a*b + c needs a temporary for the product), so
// dw_interior's 2 x NT weight vectors + 8 accumulators spill (NT = 9: 26 live vectors).
// Here 8 (then 4, then 1) pixels x 1 vector of channels, the weight vector reloaded per
// tap from L1. Pixels outer, channels inner, so the source rows and dst are walked
// contiguously. Out of line and called once per row (V8 tiers up a function on a later call).
//   base_t = tap t's source at interior pixel 0, channel 0 = src[t] + (p0 + off[t])*C, with
//            p0 = j_lo*step the source column of the first interior pixel;
//   dst[j*ds + c] = sum_t base_t[j*ss + c] * wt[t][c]   for j < nj, c < cv (cv: multiple of L).
// base_t is formed per tap inside the loops (one offset load and multiply-add per tap per 8
// multiply-adds) rather than kept in a table: no scratch, so nothing outside the plan's
// workspace. Summation order per element: t ascending from zero, as in dw_interior.
template <class T, class Arch>
GRADRT_SIMD_NOINLINE void dw_interior_wasm(int64_t nj, int64_t nt, const T* const* src, const int64_t* off,
                                           int64_t p0, int64_t C, const T* const* wt, int64_t ss, int64_t cv, T* dst,
                                           int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  int64_t j = 0, jo = 0;  // jo = j*ss: source offset of pixel j
  // P pixels per step while P fit: P accumulators + weight + source + product (8 pixels: 11
  // registers); the per-tap pointer loads (src[t], off[t], wt[t]) and the weight load are
  // shared by P multiply-adds. The accumulator array is fully unrolled (clang keeps it in
  // registers, as the named accumulators it replaces: same code, same bits).
  auto pixels = [&]<int P>() __attribute__((always_inline)) {
    for (; j + P <= nj; j += P, jo += P * ss, dst += P * ds) {
      for (int64_t c = 0; c < cv; c += L) {
        B a[P];
#pragma clang loop unroll(full)
        for (int k = 0; k < P; ++k) a[k] = V::zero();
        for (int64_t t = 0; t < nt; ++t) {
          const B w = V::load(wt[t] + c);
          const T* q = src[t] + (p0 + off[t]) * C + jo + c;
#pragma clang loop unroll(full)
          for (int k = 0; k < P; ++k) a[k] = V::fma(V::load(q + k * ss), w, a[k]);
        }
#pragma clang loop unroll(full)
        for (int k = 0; k < P; ++k) V::store(dst + k * ds + c, a[k]);
      }
    }
  };
  pixels.template operator()<8>();
  pixels.template operator()<4>();
  pixels.template operator()<1>();
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// WASM SIMD128 sliding-window depthwise row kernels (float, M == 1, channels in the lanes),
// written with <wasm_simd128.h> directly. Only the WASM SIMD build includes this file
// (depthwise_taps.h, under __wasm_simd128__); native builds never see it.
//
// Why a separate form for WASM: V8 (x64) has 15 usable vector registers, no FMA (a*b + c
// is a multiply into a temporary, then an add), and LLVM/Binaryen do not keep the source
// order of an unrolled block (they hoist its loads). So the blocks of depthwise_taps.h
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

#include <wasm_simd128.h>

#include "common.h"

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
// chain every iteration. V8 never unrolls a loop that holds another loop, so the hot loop of
// dwf_wasm holds an empty one that never runs: `for (i = never; i > p; --i)` with never =
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

// Filter gradient, source step S, channels c < cv (multiple of 4):
//   acc[r*K + k][c] += sum_j dy[j*C + c] * row[r][(j*S + o + k)*C + c]   (taps inside),
// each tap's sum over j ascending from zero, then added to acc.
// Step p loads dy pixel p and source pixels p*S + o + s (s < S) of each group; source
// pixel p*S + o + s is tap k (k = s, s + S, ...) of pixel p - (k - s)/S, so the dy window
// d[i] holds pixels p - i, i < D = (K - 1)/S + 1.
template <int R, int K, int S>
GRADRT_SIMD_NOINLINE void dwf_wasm(const float* const* row, int64_t o, int64_t nj, int64_t j_lo, int64_t j_hi,
                                   int64_t src_w, int64_t C, const float* dy, float* const* acc, int64_t cv) {
  constexpr int D = (K - 1) / S + 1;
  // Unchecked steps: pixels p-D+1 .. p all interior.
  const int64_t u0 = j_lo + D - 1, u1 = imax(u0, j_hi);
  const int64_t never = kDwWasmNever;
  for (int64_t c = 0; c < cv; c += 4) {
    v128_t a[R * K], d[D];
#pragma clang loop unroll(full)
    for (int t = 0; t < R * K; ++t) a[t] = wasm_f32x4_splat(0.0f);
#pragma clang loop unroll(full)
    for (int i = 0; i < D; ++i) d[i] = wasm_f32x4_splat(0.0f);
    auto checked = [&](int64_t p) __attribute__((always_inline)) {
      dw_wasm_shift_up<D>(d);
      d[0] = p < nj ? wasm_v128_load(dy + p * C + c) : wasm_f32x4_splat(0.0f);
#pragma clang loop unroll(full)
      for (int s = 0; s < S; ++s) {
        const int64_t q = p * S + o + s;
        if (q < 0 || q >= src_w) continue;
#pragma clang loop unroll(full)
        for (int r = 0; r < R; ++r) {
          const v128_t x = wasm_v128_load(row[r] + q * C + c);
#pragma clang loop unroll(full)
          for (int k = s; k < K; k += S) {
            const int64_t pp = p - (k - s) / S;
            if (pp >= 0 && pp < nj) a[r * K + k] = wasm_f32x4_add(a[r * K + k], wasm_f32x4_mul(d[(k - s) / S], x));
          }
        }
      }
    };
    int64_t p = 0;
    for (; p < imin(u0, u1); ++p) checked(p);
    const float* s0[R];
#pragma clang loop unroll(full)
    for (int r = 0; r < R; ++r) s0[r] = row[r] + (p * S + o) * C + c;
    const float* dq = dy + p * C + c;
    for (; p < u1; ++p) {
      for (int64_t i = never; i > p; --i) asm volatile("");
      dw_wasm_shift_up<D>(d);
      d[0] = wasm_v128_load(dq);
      dq += C;
#pragma clang loop unroll(full)
      for (int r = 0; r < R; ++r) {
#pragma clang loop unroll(full)
        for (int s = 0; s < S; ++s) {
          const v128_t x = wasm_v128_load(s0[r] + s * C);
#pragma clang loop unroll(full)
          for (int k = s; k < K; k += S)
            a[r * K + k] = wasm_f32x4_add(a[r * K + k], wasm_f32x4_mul(d[(k - s) / S], x));
        }
        s0[r] += S * C;
      }
    }
    for (; p < nj + D - 1; ++p) checked(p);
#pragma clang loop unroll(full)
    for (int t = 0; t < R * K; ++t) wasm_v128_store(acc[t] + c, wasm_f32x4_add(wasm_v128_load(acc[t] + c), a[t]));
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
template <int R>
GRADRT_SIMD_NOINLINE void dwx2_wasm(const float* const* dyr, const float* const* wr, int64_t ow, int64_t C, int64_t cv,
                                    float* dx) {
  for (int64_t c = 0; c < cv; c += 4) {
    v128_t w0[R], w1[R], w2[R];
    const float* s[R];
#pragma clang loop unroll(full)
    for (int r = 0; r < R; ++r) {
      w0[r] = wasm_v128_load(wr[r] + c);
      w1[r] = wasm_v128_load(wr[r] + C + c);
      w2[r] = wasm_v128_load(wr[r] + 2 * C + c);
      s[r] = dyr[r] + c;
    }
    v128_t pend = wasm_f32x4_splat(0.0f);
    float* out = dx + c;
    for (int64_t j = 0; j < ow; ++j) {
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

}  // namespace gradrt::simd::GRADRT_SIMD_NS

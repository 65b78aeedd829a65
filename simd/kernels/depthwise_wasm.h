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

#include <utility>

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

// The filter gradient (3x3, dilation 1, M == 1, column stride 1 or 2, C % 4 == 0) as chunk
// partials, for the caller to combine in chunk order: returns *chunks partials of 9*C floats
// (workspace slot 0), or nullptr for other shapes (the caller takes the generic path). Rows
// are cut into at most 16 chunks of >= 2 rows (by the row count only, as the generic path:
// the same bits for any thread count). Inside a chunk, runs of up to kDwfRows consecutive
// output rows of one image with all 3 ky inside x go to one dwf_wasm call (see there);
// rows with some ky outside x go alone, with fewer filter rows.
// Where the time goes (56x56x144 stride 2, Node 20, Zen 5 guest; 67 us, the same as with the
// earlier kernel, all 9 taps of one channel vector per step): with every channel group
// reading group 0's x and dy lines (so all but the first group hit L1) it runs in 54-55 us,
// so the first touch of each 64-byte line costs ~13 us; the rest is the loop itself (earlier
// kernel: ~40 x64 instructions per step in V8 for 9 multiply-adds; dwf_wasm, unrolled 3x by
// V8: ~25 per step for 6: 6 loads, 6 mul, 6 add, 3 address adds, counter; 88% of its
// samples). 112x112x32 stride 1 is compute-bound (the
// same time with half its lines never touched): 218 -> 180 us. Measured and lost (A/B,
// dwmicro.mjs), this kernel:
// - 3 channel vectors per step (stride 2: 9 accumulators + 6 dy): V8 schedules a step's
//   loads first, so 9 loaded vectors are live: spills, 100 us; a compiler barrier between the
//   vectors does not stop V8 (only a loop exit between them does, as in its own unrolling).
// - the earlier 9-tap kernel without the never-loop for stride 1: spills, 222 us.
// - the never-loop in the 8-channel loop: stride 1 ~12% slower (it stops V8's unrolling);
//   keeping it only for the first-touch blocks (c % 16 == 0): +2 us.
// - touch loads (volatile i32, 1 instruction each) of the next 16 channels' lines: 3 per
//   step in the blocks that touch no new line: +5 us; 2 per step in every block (the lines
//   of the block after next): +3 us. Filter row outer, channel block inner: +4 us. A loop on
//   the dy pointer instead of a counter: no change (LLVM keeps the counter).
// The earlier 9-tap kernel:
// - packing each 16-channel group's x and dy rows into L1 scratch (pixel stride 64 B) before
//   its 4 passes: 113 us; packing all groups of a run at once with in-order reads: 118 us.
//   The compute on packed L1 data is ~52 us, but the copy (2.1 MB of stores per call, reads
//   missing the same lines) costs more than the misses it removes.
// - a scalar "touch" load per step (GPR sink, no vector register) of the next run's x rows
//   (in order) or of the next group's lines (stride C): no gain / +6 us; one call per channel
//   group instead of per run: +5 us. A separate in-order touch pass over a run's rows: +13 us.
//   In this kernel, touching the next group's line at the current pixel (rows 0/1, both
//   pixels, over a group's 4 passes): no gain. So the first-touch cost is not the latency
//   of the first pass's misses alone (L2-resident 28x28x144: 20.0 us vs 18.0 us all-L1).
// - C as a compile-time constant (immediate load offsets): -2.4 us only.
constexpr int64_t kDwfRows = 3, kDwfL1Bytes = 32 << 10;
inline const float* dwf_wasm_chunks(const Exec& exec, const ConvParams& p, const float* x, const float* dy,
                                    int64_t* chunks_out) {
  const int64_t C = p.in_c, W = p.in_w, OW = p.out_w;
  if (p.depth_multiplier != 1 || p.filter_h != 3 || p.filter_w != 3 || p.dilation_h != 1 || p.dilation_w != 1 ||
      (p.stride_w != 1 && p.stride_w != 2) || C % 4 != 0 || C == 0)
    return nullptr;
  const int64_t rows = p.batch * p.out_h, nw = 9 * C;
  if (rows == 0 || OW == 0) return nullptr;
  const int64_t grain = reduction_grain(rows, 2, 16), chunks = nchunks(rows, grain);
  const int64_t S = p.stride_w;
  // The chunk partials, then per chunk the running sums of dwf_wasm.
  float* part = static_cast<float*>(workspace(0, sizeof(float) * (2 * chunks * nw + 1)));
  using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, const float*, float* const*,
                      int64_t, int64_t, int64_t, int64_t, float*, int64_t);
  // Through a volatile function pointer, as in dwf_row (Binaryen would inline them).
  static Fn volatile const kFns[2] = {&dwf_wasm<3, 1>, &dwf_wasm<3, 2>};
  const int64_t xrs = p.stride_h * W * C, dys = OW * C;
  // Rows per part (dwf_wasm): one 8-channel pass over n rows reads (n-1)*stride_h + 3 x rows
  // and n dy rows, min(64, 4C) bytes (its line) per pixel; the next 8 channels (same lines)
  // find them in L1 if that stays within kDwfL1Bytes (112x112x32 stride 1: 1 row, 56x56x144
  // stride 2: 2 rows; 1 row each: 168 vs 193 us and 71 vs 68 us).
  const int64_t line = imin(64, 4 * C);
  int64_t sub = 1;
  while (sub < kDwfRows && ((sub * p.stride_h + 3) * W + (sub + 1) * OW) * line <= kDwfL1Bytes) ++sub;
  par(exec, rows, grain, [&](int64_t r0, int64_t r1) {
    float* out = part + (r0 / grain) * nw;
    float* sum = part + (chunks + r0 / grain) * nw;
    for (int64_t i = 0; i < nw; ++i) out[i] = 0.0f;
    for (int64_t r = r0; r < r1;) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      const int64_t iy0 = oy * p.stride_h - p.pad_top;
      const int64_t k0 = imax(0, -iy0), k1 = imin(3, p.in_h - iy0);
      int64_t nr = 1;
      if (k0 == 0 && k1 == 3)  // more rows of this image with every ky inside, up to kDwfRows
        while (nr < kDwfRows && r + nr < r1 && oy + nr < p.out_h && iy0 + nr * p.stride_h + 3 <= p.in_h) ++nr;
      if (k1 > k0) {
        const float* xr = x + (n * p.in_h + iy0) * W * C;  // row iy0 (maybe outside x: not read then)
        const float* rws[3];
        float* acc[9];
        for (int64_t ky = k0; ky < k1; ++ky) {
          rws[ky - k0] = xr + ky * W * C;
          for (int kx = 0; kx < 3; ++kx) acc[(ky - k0) * 3 + kx] = out + (ky * 3 + kx) * C;
        }
        kFns[S - 1](rws, k1 - k0, -p.pad_left, OW, W, C, dy + r * dys, acc, C, nr, xrs, dys, sum, sub);
      }
      r += nr;
    }
  });
  *chunks_out = chunks;
  return part;
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

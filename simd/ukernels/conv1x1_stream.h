// The streaming micro-kernel of the 1x1 stride-1 input gradient with few input channels
// (kernels/conv2d_backprop_input_stream.h): R consecutive pixels' dx rows, read from their dy
// rows in place.
//   dx[i*ci + c] = sum_{k < co} dy[i*co + k] * wt[k*NR + c],   i < R, c < ci <= NR = CV*L
// dy rows are consecutive (ldy = co) and so are dx rows (ldx = ci): the tile reads one
// contiguous block of R*co values and writes one of R*ci values. wt is W transposed, [co][NR],
// zero past column ci (a few KB: it stays in L1). Per k: CV vector loads of wt, R broadcasts of
// dy, R*CV FMAs; the R x CV accumulators stay in registers for the whole k loop.
// Each dx value sums its k in order 0..co-1 in one FMA chain, as the GEMM path's 1x1 tiles do.
//
// Prefetch (prefetch = true): step k also prefetches bytes [k*R, (k+1)*R) * sizeof(T) of the
// block after the tile's (dy + R*co, the next tile's dy), so that the co steps cover the whole
// next block, one line or two per step. Without it the tile reads
// R lines at a time in a column order (row i's line j, then row i+1's) that the hardware
// prefetchers did not follow: EMR, 1 thread, 32768 pixels of 16 <- 96 (12.6 MB of dy, from L3)
// took 1.2-2.0 ms, 0.70 ms with it. Prefetching the whole next block up front was slower
// (session 12). A prefetch past the end of dy (the last tile) never faults.
#pragma once

#include "gemm.h"

// The k loop unrolled 4x in the AVX-512 unit only (GRADRT_GEMM_K_LOOP's measurement there). The
// avx2 unit keeps it rolled: unrolled (session 14) the Keras 1x1 32x32x32 <- 32 (4 vectors x 3
// rows, 16 of 16 ymm) took 1.16x the CPU time of the rolled loop on the Emerald Rapids Xeon.
#if defined(__AVX512F__)
#define GRADRT_STREAM_K_LOOP _Pragma("GCC unroll 4")
#else
#define GRADRT_STREAM_K_LOOP
#endif

namespace gradrt::simd::GRADRT_SIMD_NS {

// The half-width vectors of a unit's arch, for dx rows of at most half its vector (void: none).
// AVX-512's 8-float rows (the Keras step's 32x32x8 <- 48) in zmm filled 8 of 16 lanes of every
// FMA and stored each row across its neighbour's; in ymm (with AVX512VL's 32 registers: 24 rows
// a tile) they took 0.90x the time (EMR, 1 thread). FMA in both: the same bits.
template <class Arch>
struct HalfArch {
  using type = void;
};
#if XSIMD_WITH_AVX512F
template <>
struct HalfArch<xsimd::avx512f> {
  using type = xsimd::fma3<xsimd::avx2>;
};
#endif

template <class T, class Arch, int R, int CV>
struct Conv1x1Stream {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  static constexpr int64_t L = V::width;
  static constexpr int64_t NR = CV * L;

  // Exactly R rows: [dx, dx + R*ci) is the tile's own (no other tile or thread writes it).
  // prefetch: see above (the 1-row kernel gets false).
  GRADRT_SIMD_NOINLINE static void run(int64_t co, int64_t ci, const T* dy, const T* wt, T* dx, bool prefetch) {
    B acc[R][CV];
#pragma GCC unroll 32
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < CV; ++j) acc[i][j] = V::zero();
    // Row i's dy value at k is g[i/4][(i%4)*co]: one pointer per 4 rows, advanced by one per k,
    // and offsets 0, co, 2co, 3co that x86 addressing forms from two registers (co scaled by 4
    // or 8, 3co). With an offset per row (dy[i*co + k]), 16 rows wanted 16 index registers and
    // GCC spilled them (a vmovq or a stack load per broadcast).
    constexpr int NG = (R + 3) / 4;
    const T* g[NG];
#pragma GCC unroll 8
    for (int q = 0; q < NG; ++q) g[q] = dy + 4 * q * co;
    const int64_t co3 = 3 * co;
    // The prefetch address (an address, not a pointer: the last tile's points past the end of
    // dy); step k covers [k*PB, (k+1)*PB) of the next block in NP lines. A fixed count, and the
    // loop chosen once per call: a run-time count (an inner loop) kept GCC from unrolling the k
    // loop 4x and took 1.01-1.21x main's time with the prefetch off.
    constexpr int64_t PB = R * int64_t(sizeof(T)), NP = (PB + 63) / 64;
    uintptr_t pf = reinterpret_cast<uintptr_t>(dy) + uintptr_t(R * co) * sizeof(T);
    auto k_loop = [&]<bool PF>() {
      GRADRT_STREAM_K_LOOP
      for (int64_t k = 0; k < co; ++k, wt += NR) {
        B wv[CV];
#pragma GCC unroll 4
        for (int j = 0; j < CV; ++j) wv[j] = V::load(wt + j * L);
#pragma GCC unroll 32
        for (int i = 0; i < R; ++i) {
          const T* gi = g[i / 4];
          const B av = V::set1(i % 4 == 0 ? gi[0] : i % 4 == 1 ? gi[co] : i % 4 == 2 ? gi[2 * co] : gi[co3]);
#pragma GCC unroll 4
          for (int j = 0; j < CV; ++j) acc[i][j] = V::fma(av, wv[j], acc[i][j]);
        }
#pragma GCC unroll 8
        for (int q = 0; q < NG; ++q) ++g[q];
        if constexpr (PF) {
#pragma GCC unroll 4
          for (int64_t b = 0; b < NP; ++b) prefetch_lines<Arch>(reinterpret_cast<const void*>(pf + 64 * b), 1);
          pf += PB;
        }
      }
    };
    if (prefetch)
      k_loop.template operator()<true>();
    else
      k_loop.template operator()<false>();
    if (ci == NR) {
#pragma GCC unroll 32
      for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < CV; ++j) V::store(dx + i * ci + j * L, acc[i][j]);
      return;
    }
    // ci < NR: row i's full-width store covers [i*ci, i*ci + NR), spilling NR - ci padding
    // values into the rows after it, which their own stores (later, in row order) overwrite.
    // So every row whose store ends inside the tile (i*ci + NR <= R*ci) stores whole vectors;
    // the last rows go through tmp and copy their ci values (never past the tile: another
    // thread's rows, or the end of dx).
    alignas(64) T tmp[NR];
#pragma GCC unroll 32
    for (int i = 0; i < R; ++i) {
      if (i * ci + NR <= R * ci) {
#pragma GCC unroll 4
        for (int j = 0; j < CV; ++j) V::store(dx + i * ci + j * L, acc[i][j]);
      } else {
        for (int j = 0; j < CV; ++j) V::store(tmp + j * L, acc[i][j]);
        for (int64_t c = 0; c < ci; ++c) dx[i * ci + c] = tmp[c];
      }
    }
  }
};

}  // namespace gradrt::simd::GRADRT_SIMD_NS

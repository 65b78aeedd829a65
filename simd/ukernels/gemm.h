// Register-blocked micro-kernels shared by the convolution kernels: an MR x NR tile of C
// (NR = NRV vectors) kept in registers over the whole reduction.
//
// B is always a packed panel: row k of the panel is NR contiguous values (zero padded past
// the last real column), so the kernel loads NRV full vectors per k with no tail code.
// A comes in one of two shapes, both read in place (no im2col buffer):
//   rows(): "indirect" A, as in XNNPACK's indirect convolution. For each tap t, MR row
//           pointers a[t*as + i] (as >= MR), each to kc contiguous values (a pixel's
//           channels). A pixel that falls into padding points at a zero buffer instead.
//           Used by conv2d (A = x) and conv2d_backprop_input (A = dy).
//   cols(): a pointer per k to MR contiguous values, A[i][k] = a[k][i]. Used by
//           conv2d_backprop_filter, where k runs over output pixels and i over input channels.
// Per k step: NRV vector loads of B, MR broadcasts of A, MR*NRV FMAs.
#pragma once

#include "vec.h"

// Out of line on purpose: inlined into the conv drivers, GCC -O3 spills the accumulator
// tile (measured 25% slower); alone, the k loop is 2 loads + MR broadcasts + 2*MR FMAs.
// (GRADRT_SIMD_NOINLINE is defined in common.h.)

// The k loops run unrolled 4x in the AVX-512 unit: rolled, the conv gradients and Conv2D took
// 1-4% more time on an Emerald Rapids Xeon (bench/results_xeon_emr.txt; likely the loop's
// add/cmp/jne competing with the 24 FMAs per k step for ports 0 and 5). Not measured on Zen 4 /
// Zen 5, which run the same unit. Unrolling leaves each accumulator's chain of FMAs as it was:
// the same bits. The avx2 unit too (session 14; __FMA__ leaves the sse4_2 unit out): its k step
// is 12 FMAs with the same per-step loop and pointer work as AVX-512's 24 (the filter gradient's
// 6x2 k loop ran at ~86% of the ymm FMA peak rolled; bench/results_xeon_emr.txt "AVX2 on
// Emerald Rapids"). The other units keep the rolled loops they were measured with.
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#define GRADRT_GEMM_K_LOOP _Pragma("GCC unroll 4")
#else
#define GRADRT_GEMM_K_LOOP
#endif

// Makes the compiler treat pointer p as computed here (no code): the loads through it then take
// constant displacements from one register.
#if defined(__GNUC__) && !defined(__clang__)
#define GRADRT_OPAQUE_POINTER(p) __asm__("" : "+r"(p))
#else
#define GRADRT_OPAQUE_POINTER(p) ((void)0)
#endif

namespace gradrt::simd::GRADRT_SIMD_NS {

// Smaller tiles of the same micro-kernel for remainders of an MR-row tile: 2MR/3 and MR/3 rows.
constexpr int rows_b(int mr) { return mr * 2 / 3 > 0 ? mr * 2 / 3 : 1; }
constexpr int rows_c(int mr) { return mr / 3 > 0 ? mr / 3 : 1; }

template <class T, class Arch, int MR, int NRV>
struct Gemm {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  static constexpr int64_t L = V::width;
  static constexpr int64_t NR = NRV * L;

  // c[i][0..nr) = sum_{t < ntaps} sum_{k < kc} a[t*as+i][k] * b[t][k*NR + j], for i < mr.
  // Rows i >= mr still need valid a pointers (zeros) but c[i] is not touched.
  GRADRT_SIMD_NOINLINE static void rows(int64_t ntaps, int64_t kc, const T* const* a, int64_t as, const T* const* b,
                                        T* const* c, int64_t mr, int64_t nr) {
    rows_of<false>(ntaps, kc, a, as, b, c, mr, nr);
  }
  // rows, adding to what c holds (rows i < mr, columns j < nr): the running sum is loaded first,
  // so a reduction cut into K blocks adds in k order across calls, the same bits as one call.
  GRADRT_SIMD_NOINLINE static void rows_acc(int64_t ntaps, int64_t kc, const T* const* a, int64_t as,
                                            const T* const* b, T* const* c, int64_t mr, int64_t nr) {
    rows_of<true>(ntaps, kc, a, as, b, c, mr, nr);
  }

 private:
  template <bool ACC>
  GRADRT_SIMD_INLINE static void rows_of(int64_t ntaps, int64_t kc, const T* const* a, int64_t as, const T* const* b,
                                         T* const* c, int64_t mr, int64_t nr) {
    B acc[MR][NRV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NRV; ++j) acc[i][j] = V::zero();
    if constexpr (ACC) {
      alignas(64) T tmp[NR];
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        if (i >= mr) break;
        if (nr == NR) {
#pragma GCC unroll 4
          for (int j = 0; j < NRV; ++j) acc[i][j] = V::load(c[i] + j * L);
        } else {
          for (int64_t j = 0; j < NR; ++j) tmp[j] = j < nr ? c[i][j] : T(0);
          for (int j = 0; j < NRV; ++j) acc[i][j] = V::load(tmp + j * L);
        }
      }
    }
    for (int64_t t = 0; t < ntaps; ++t) {
      const T* ap[MR];
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) ap[i] = a[t * as + i];
      const T* bp = b[t];
      GRADRT_GEMM_K_LOOP
      for (int64_t k = 0; k < kc; ++k, bp += NR) {
        B bv[NRV];
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) bv[j] = V::load(bp + j * L);
#pragma GCC unroll 16
        for (int i = 0; i < MR; ++i) {
          B av = V::set1(ap[i][k]);
#pragma GCC unroll 4
          for (int j = 0; j < NRV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
        }
      }
    }
    if (nr == NR) {
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        if (i >= mr) break;
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) V::store(c[i] + j * L, acc[i][j]);
      }
    } else {
      alignas(64) T tmp[NR];
      for (int i = 0; i < MR; ++i) {
        if (i >= mr) break;
        for (int j = 0; j < NRV; ++j) V::store(tmp + j * L, acc[i][j]);
        for (int64_t j = 0; j < nr; ++j) c[i][j] = tmp[j];
      }
    }
  }

 public:
  // c[i*ldc + j] (+)= sum_{k < kc} a[k][a_off + i] * b[k*ldb + j] for i < mr, j < nr; accumulate
  // adds to what c holds (the running sum is loaded first, so the order of additions is k
  // order across calls too). Rows i >= mr of a[k] must still be readable.
  // b's rows hold NR readable values (a packed panel, ldb = NR, or NR columns of a wider matrix).
  GRADRT_SIMD_NOINLINE static void cols(int64_t kc, const T* const* a, int64_t a_off, const T* b, int64_t ldb, T* c,
                                        int64_t ldc, int64_t mr, int64_t nr, bool accumulate) {
    cols_of(kc, [a, a_off](int64_t k) { return a[k] + a_off; }, b, ldb, c, ldc, mr, nr, accumulate);
  }

  // cols with A's rows at a constant stride: a[k] = a + k*lda (the 1x1 stride-1 filter gradient's
  // x pixels, read with no pointer table). The same FMAs in the same order: the same bits.
  GRADRT_SIMD_NOINLINE static void cols_strided(int64_t kc, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                                                int64_t ldc, int64_t mr, int64_t nr, bool accumulate) {
    cols_of(kc, [a, lda](int64_t k) { return a + k * lda; }, b, ldb, c, ldc, mr, nr, accumulate);
  }

  // cols and cols_strided, and step k also prefetches into L2 the lines at pa + k*sa and pb + k*sb
  // (addresses, never read: the driver's next K chunk of x and dy). The same bits. Both streams
  // issue every step: one with a step under 64 repeats its lines, one with step 0 its first (an
  // L1 hit, a load slot); a test per step would cost the accumulators their registers.
  GRADRT_SIMD_NOINLINE static void cols_pf(int64_t kc, const T* const* a, int64_t a_off, const T* b, int64_t ldb, T* c,
                                           int64_t ldc, int64_t mr, int64_t nr, bool accumulate, uintptr_t pa,
                                           int64_t sa, uintptr_t pb, int64_t sb) {
    cols_of<true>(kc, [a, a_off](int64_t k) { return a[k] + a_off; }, b, ldb, c, ldc, mr, nr, accumulate, pa, sa, pb,
                  sb);
  }
  GRADRT_SIMD_NOINLINE static void cols_strided_pf(int64_t kc, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
                                                   int64_t ldc, int64_t mr, int64_t nr, bool accumulate, uintptr_t pa,
                                                   int64_t sa, uintptr_t pb, int64_t sb) {
    cols_of<true>(kc, [a, lda](int64_t k) { return a + k * lda; }, b, ldb, c, ldc, mr, nr, accumulate, pa, sa, pb, sb);
  }

 private:
  template <bool PF = false, class Row>
  GRADRT_SIMD_INLINE static void cols_of(int64_t kc, Row row, const T* b, int64_t ldb, T* c, int64_t ldc, int64_t mr,
                                         int64_t nr, bool accumulate, uintptr_t pa = 0, int64_t sa = 0,
                                         uintptr_t pb = 0, int64_t sb = 0) {
    B acc[MR][NRV];
    alignas(64) T tmp[NR];
    bool full = nr == NR && mr == MR;
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 4
      for (int j = 0; j < NRV; ++j) acc[i][j] = V::zero();
      if (accumulate && i < mr) {
        if (full) {
#pragma GCC unroll 4
          for (int j = 0; j < NRV; ++j) acc[i][j] = V::load(c + i * ldc + j * L);
        } else {
          for (int64_t j = 0; j < NR; ++j) tmp[j] = j < nr ? c[i * ldc + j] : T(0);
          for (int j = 0; j < NRV; ++j) acc[i][j] = V::load(tmp + j * L);
        }
      }
    }
    GRADRT_GEMM_K_LOOP
    for (int64_t k = 0; k < kc; ++k, b += ldb) {
      const T* ak = row(k);
      // One base register for the MR broadcasts: left alone, GCC kept a_off + i in a register
      // per row (12 for the 12x2 tile, more than the free GPRs: it parked them in xmm31 and
      // moved them back every k step; the Keras 1x1 filter gradients ran at ~46% of peak).
      GRADRT_OPAQUE_POINTER(ak);
      B bv[NRV];
#pragma GCC unroll 4
      for (int j = 0; j < NRV; ++j) bv[j] = V::load(b + j * L);
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        B av = V::set1(ak[i]);
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
      }
      if constexpr (PF) {
        prefetch_line_l2<Arch>(pa);
        prefetch_line_l2<Arch>(pb);
        pa += uintptr_t(sa), pb += uintptr_t(sb);
      }
    }
    if (full) {
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) V::store(c + i * ldc + j * L, acc[i][j]);
    } else {
      for (int i = 0; i < MR; ++i) {
        if (i >= mr) break;
        for (int j = 0; j < NRV; ++j) V::store(tmp + j * L, acc[i][j]);
        for (int64_t j = 0; j < nr; ++j) c[i * ldc + j] = tmp[j];
      }
    }
  }
};

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// Packing routines of the GEMM drivers (conv2d, conv2d_backprop_input/filter): copies of
// operands into the panel layouts the micro-kernels of gemm.h read. Every buffer an argument.
#pragma once

#include <type_traits>

#include "vec.h"

#if defined(__AVX__) && !defined(__EMSCRIPTEN__)
#include <immintrin.h>
#endif

namespace gradrt::simd::GRADRT_SIMD_NS {

// Packs columns [n0, n0+nr) of a row-major k x ld matrix src (rows k0..k0+kc) into a panel
// dst[k][NR], zero-padding columns nr..NR.
template <class T>
inline void pack_panel(const T* src, int64_t ld, int64_t kc, int64_t nr, int64_t NR, T* dst) {
  for (int64_t k = 0; k < kc; ++k, src += ld, dst += NR) {
    int64_t j = 0;
    for (; j < nr; ++j) dst[j] = src[j];
    for (; j < NR; ++j) dst[j] = T(0);
  }
}

// Packs panels j0..j1-1 of a row-major kc x ld matrix src with ncols valid columns: panel j
// (columns j*NR..j*NR+NR) into dst + j*KC*NR as [k][NR], the columns past ncols zero (only the
// last panel, j = ncols/NR, can have them). One pass over src's rows, panels inner: each row's
// panels are adjacent in src, and a full panel is a fixed NR-value copy the compiler turns into
// vector moves (pack_panel per panel walked every row once per panel with a run-time width:
// the wasm 1x1 filter gradient spent a third of its time there).
template <int64_t NR, class T>
inline void pack_panels(const T* src, int64_t ld, int64_t kc, int64_t ncols, int64_t j0, int64_t j1, int64_t KC,
                        T* dst) {
  const int64_t full = ncols / NR < j1 ? ncols / NR : j1;  // panels j0..full-1 are whole
  const int64_t tail = ncols - full * NR;                  // valid columns of panel `full`, if j1 > full
  for (int64_t k = 0; k < kc; ++k, src += ld) {
    for (int64_t j = j0; j < full; ++j) {
      const T* s = src + j * NR;
      T* d = dst + (j * KC + k) * NR;
      for (int64_t i = 0; i < NR; ++i) d[i] = s[i];
    }
    if (full < j1) {
      const T* s = src + full * NR;
      T* d = dst + (full * KC + k) * NR;
      for (int64_t i = 0; i < NR; ++i) d[i] = i < tail ? s[i] : T(0);
    }
  }
}

// dst[q*ldd + r] = src[r*lds + q] for r, q < 8: an 8x8 float transpose in registers (AVX and
// up; the filter transposes of conv2d_backprop_input were a scalar load and store per value).
// Returns false where the unit has no AVX, and the caller transposes one value at a time.
template <class T>
inline bool transpose8x8(const T* src, int64_t lds, T* dst, int64_t ldd) {
#if defined(__AVX__) && !defined(__EMSCRIPTEN__)
  if constexpr (std::is_same_v<T, float>) {
    __m256 r[8], t[8], u[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
    for (int i = 0; i < 4; ++i) {  // t[2i], t[2i+1]: rows 2i, 2i+1 interleaved (lo, hi pairs)
      t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
      t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int h = 0; h < 2; ++h) {  // u[4h + c]: columns c and c+4 of rows 4h..4h+3
      u[4 * h + 0] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * h + 1] = _mm256_shuffle_ps(t[4 * h], t[4 * h + 2], _MM_SHUFFLE(3, 2, 3, 2));
      u[4 * h + 2] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(1, 0, 1, 0));
      u[4 * h + 3] = _mm256_shuffle_ps(t[4 * h + 1], t[4 * h + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int c = 0; c < 4; ++c) {
      _mm256_storeu_ps(dst + c * ldd, _mm256_permute2f128_ps(u[c], u[4 + c], 0x20));
      _mm256_storeu_ps(dst + (c + 4) * ldd, _mm256_permute2f128_ps(u[c], u[4 + c], 0x31));
    }
    return true;
  }
#endif
  (void)src, (void)lds, (void)dst, (void)ldd;
  return false;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

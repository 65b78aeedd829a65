// FractionalAvgPool(Grad) micro-kernels: one row of pooling cells (forward) or of gradient
// pixels (backward), channels in the lanes. Every buffer an argument.
#pragma once

#include "vec.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Output row q = (n, r) of FractionalAvgPool: each cell the sum of its window, in T, / count.
template <class T, class Arch>
inline void frac_pool_row(const FracPoolParams& p, int64_t q, const T* x, T* y) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t C = p.channels;
  const int64_t n = q / p.out_h, r = q % p.out_h;
  const int64_t rs = p.row_start(r), re = p.row_end(r);
  for (int64_t oc = 0; oc < p.out_w; ++oc) {
    const int64_t cs = p.col_start(oc), ce = p.col_end(oc);
    const int64_t cnt = (re - rs + 1) * (ce - cs + 1);
    T* out = y + (q * p.out_w + oc) * C;
    if (cnt <= 0) {  // an empty cell (repeated sequence entries): 0, as the reference
      for (int64_t c = 0; c < C; ++c) out[c] = T(0);
      continue;
    }
    const T count = T(cnt);
    int64_t c = 0;
    for (; c + L <= C; c += L) {
      auto s = V::zero();
      for (int64_t i = rs; i <= re; ++i)
        for (int64_t j = cs; j <= ce; ++j) s = s + V::load(x + ((n * p.in_h + i) * p.in_w + j) * C + c);
      V::store(out + c, s / V::set1(count));
    }
    for (; c < C; ++c) {
      T s = T(0);
      for (int64_t i = rs; i <= re; ++i)
        for (int64_t j = cs; j <= ce; ++j) s += x[((n * p.in_h + i) * p.in_w + j) * C + c];
      out[c] = s / count;
    }
  }
}

// dx row q = (n, i) of FractionalAvgPoolGrad: each pixel gathers the terms of the cells that
// cover it, in (r, c) order; rr[2i..2i+1] / cr[2j..2j+1]: the covering cell ranges.
template <class T, class Arch>
inline void frac_pool_grad_row(const FracPoolParams& p, int64_t q, const int64_t* rr, const int64_t* cr, const T* dy,
                               T* dx) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t C = p.channels;
  const int64_t n = q / p.in_h, i = q % p.in_h;
  for (int64_t j = 0; j < p.in_w; ++j) {
    // dx pixel (i, j) = 0 + the covering cells' terms in (r, c) order, accumulated in
    // place: the cell walk and its counts once per pixel, not once per channel vector.
    T* out = dx + (q * p.in_w + j) * C;
    int64_t ch = 0;
    for (; ch + L <= C; ch += L) V::store(out + ch, V::zero());
    for (; ch < C; ++ch) out[ch] = T(0);
    for (int64_t r = rr[2 * i]; r < rr[2 * i + 1]; ++r) {
      if (p.row_end(r) < i) continue;  // an empty cell inside the range
      for (int64_t c = cr[2 * j]; c < cr[2 * j + 1]; ++c) {
        if (p.col_end(c) < j) continue;
        const T count = T((p.row_end(r) - p.row_start(r) + 1) * (p.col_end(c) - p.col_start(c) + 1));
        const T* src = dy + ((n * p.out_h + r) * p.out_w + c) * C;
        const auto vcount = V::set1(count);
        ch = 0;
        for (; ch + L <= C; ch += L) V::store(out + ch, V::load(out + ch) + V::load(src + ch) / vcount);
        for (; ch < C; ++ch) out[ch] = out[ch] + src[ch] / count;
      }
    }
  }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

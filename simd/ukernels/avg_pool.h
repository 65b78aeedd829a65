// AvgPool(Grad) micro-kernels over the real cells of each window (params.h PoolParams),
// channels in the lanes (ukernels/pool.h). In T, in TF's CPU order:
// the forward sums a window row-major and divides by the count; the gradient adds
// dy * T(1 / count) of each window containing the cell in (oy, ox) order. Every buffer an argument.
#pragma once

#include "pool.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

inline int64_t avg_pool_count(const PoolParams& p, int64_t oy, int64_t ox) {
  return (p.row_end(oy) - p.row_begin(oy)) * (p.col_end(ox) - p.col_begin(ox));
}

template <class V, class T>
inline void avg_pool_window(const PoolParams& p, const T* x_img, int64_t oy, int64_t ox, int64_t c, T* out) {
  const int64_t C = p.channels;
  auto s = V::zero();
  for (int64_t iy = p.row_begin(oy); iy < p.row_end(oy); ++iy)
    for (int64_t ix = p.col_begin(ox); ix < p.col_end(ox); ++ix) s = s + V::load(x_img + (iy * p.in_w + ix) * C + c);
  V::store(out, s / V::set1(T(avg_pool_count(p, oy, ox))));
}

// Output row q = (n, oy).
template <class T, class Arch>
GRADRT_SIMD_NOINLINE void avg_pool_row(const PoolParams& p, int64_t q, const T* x, T* y) {
  pool_row<T, Arch>(q, p.out_h, p.out_w, p.channels, y,
                    [&](auto v, int64_t n, int64_t oy, int64_t ox, int64_t c, T* o) {
                      avg_pool_window<decltype(v)>(p, x + n * p.in_h * p.in_w * p.channels, oy, ox, c, o);
                    });
}

// dx row q = (n, iy): dy * T(1 / count) of each window containing the cell, in (oy, ox) order.
template <class T, class Arch>
GRADRT_SIMD_NOINLINE void avg_pool_grad_row(const PoolParams& p, int64_t q, const T* dy, T* dx) {
  pool_gather_row<T, Arch>(
      p, q, dx, [&](int64_t oy, int64_t ox, int64_t) { return T(1.0 / double(avg_pool_count(p, oy, ox))); },
      [&](auto v, int64_t at, T scale) {
        using V = decltype(v);
        return V::load(dy + at) * V::set1(scale);
      });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

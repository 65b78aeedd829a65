// MaxPool(Grad) micro-kernels (TF's CPU rule, params.h PoolParams), channels in the lanes
// (ukernels/pool.h). Every buffer an argument.
#pragma once

#include <limits>

#include "pool.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// TF's "replace only when greater": m < v ? then : otherwise, lane by lane (false for NaN).
// select is found by argument-dependent lookup: the WebAssembly scalar flavour's xsimd declares no
// select (no SIMD arch), and a qualified xsimd::select would fail there even uninstantiated.
template <class T, class A>
inline xsimd::batch<T, A> if_less(const xsimd::batch<T, A>& m, const xsimd::batch<T, A>& v, const xsimd::batch<T, A>& then,
                                  const xsimd::batch<T, A>& otherwise) {
  return select(m < v, then, otherwise);
}
template <class T>
inline T if_less(T m, T v, T then, T otherwise) {
  return m < v ? then : otherwise;
}
// a == b ? then : 0, lane by lane.
template <class T, class A>
inline xsimd::batch<T, A> if_equal(const xsimd::batch<T, A>& a, const xsimd::batch<T, A>& b, const xsimd::batch<T, A>& then) {
  return select(a == b, then, xsimd::batch<T, A>(T(0)));
}
template <class T>
inline T if_equal(T a, T b, T then) {
  return a == b ? then : T(0);
}

// Channels [c, c + V::width) of output (n, oy, ox). x_img: image n. Forward: the max from
// lowest(), keeping m unless m < v. Argmax: m starts at the first real cell, idx at 0; a
// later cell k replaces both only when m < v (TF's argmax; the first cell never replaces
// itself, a NaN never wins). idx: the winner's cell_index, as T (exact: kernels/max_pool_grad.h
// runs the reference beyond 2^24 cells per window in float).
template <class V, class T>
inline void max_pool_window(const PoolParams& p, const T* x_img, int64_t oy, int64_t ox, int64_t c, bool argmax, T* out) {
  const int64_t C = p.channels;
  const int64_t rb = p.row_begin(oy), re = p.row_end(oy), cb = p.col_begin(ox), ce = p.col_end(ox);
  auto m = argmax ? V::load(x_img + (rb * p.in_w + cb) * C + c) : V::set1(std::numeric_limits<T>::lowest());
  auto idx = V::zero();
  T k = T(0);
  for (int64_t iy = rb; iy < re; ++iy)
    for (int64_t ix = cb; ix < ce; ++ix, k += T(1)) {
      const auto v = V::load(x_img + (iy * p.in_w + ix) * C + c);
      if (argmax) idx = if_less(m, v, V::set1(k), idx);
      m = if_less(m, v, v, m);
    }
  V::store(out, argmax ? idx : m);
}

// Output row q = (n, oy): y (forward) or the argmax indices (argmax = true), NHWC-shaped like y.
template <class T, class Arch>
GRADRT_SIMD_NOINLINE void max_pool_row(const PoolParams& p, int64_t q, const T* x, bool argmax, T* out) {
  pool_row<T, Arch>(q, p.out_h, p.out_w, p.channels, out,
                    [&](auto v, int64_t n, int64_t oy, int64_t ox, int64_t c, T* o) {
                      max_pool_window<decltype(v)>(p, x + n * p.in_h * p.in_w * p.channels, oy, ox, c, argmax, o);
                    });
}

// dx row q = (n, iy) from the argmax indices and dy (both shaped like y): each cell is 0 + the dy
// of each window containing it whose argmax it is, in (oy, ox) order (TF's order; the +0 of the
// other windows changes no sum, which is never -0 as it starts at +0).
template <class T, class Arch>
GRADRT_SIMD_NOINLINE void max_pool_grad_row(const PoolParams& p, int64_t q, const T* idx, const T* dy, T* dx) {
  const int64_t iy = q % p.in_h;
  pool_gather_row<T, Arch>(
      p, q, dx, [&](int64_t oy, int64_t ox, int64_t ix) { return T(p.cell_index(oy, ox, iy, ix)); },
      [&](auto v, int64_t at, T k) {
        using V = decltype(v);
        return if_equal(V::load(idx + at), V::set1(k), V::load(dy + at));
      });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

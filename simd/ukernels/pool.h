// What the MaxPool(Grad) and AvgPool(Grad) micro-kernels share: walking a row of output pixels
// (pool_row: the forward ops and MaxPoolGrad's argmax pass) or of input pixels (pool_gather_row: the
// gradients) with the channels in the lanes: a full vector of channels takes Vec<T, Arch>, the
// channel tail the same code on Vec<T, scalar_arch>.
#pragma once

#include "vec.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// f(V{}, c) for each full vector of channels [c, c + V::width), then f(S{}, c) for each tail channel.
template <class T, class Arch, class F>
inline void over_channels(int64_t channels, F f) {
  using V = Vec<T, Arch>;
  int64_t c = 0;
  for (; c + V::width <= channels; c += V::width) f(V{}, c);
  for (; c < channels; ++c) f(Vec<T, scalar_arch>{}, c);
}

// Row q = (n, r) of an NHWC tensor of height x width pixels (y: out_h x out_w):
// cell(V{}, n, r, col, c, out + offset of (n, r, col, c)) for every pixel and channel block.
template <class T, class Arch, class Cell>
inline void pool_row(int64_t q, int64_t height, int64_t width, int64_t channels, T* out, Cell cell) {
  const int64_t n = q / height, r = q % height;
  for (int64_t col = 0; col < width; ++col) {
    T* o = out + (q * width + col) * channels;
    over_channels<T, Arch>(channels, [&](auto v, int64_t c) { cell(v, n, r, col, c, o + c); });
  }
}

// dx row q = (n, iy) of a gradient gather: each pixel's channels start at 0 and take, for each
// window (oy, ox) containing the pixel in (oy, ox) order (TF's order of additions), the term
// term(V{}, at + c, k) with at the offset of (n, oy, ox, 0) in y-shaped arrays and k = per_window(oy, ox, ix),
// computed once per window for all channels.
template <class T, class Arch, class PerWindow, class Term>
inline void pool_gather_row(const PoolParams& p, int64_t q, T* dx, PerWindow per_window, Term term) {
  const int64_t C = p.channels, n = q / p.in_h, iy = q % p.in_h;
  for (int64_t ix = 0; ix < p.in_w; ++ix) {
    T* o = dx + (q * p.in_w + ix) * C;
    over_channels<T, Arch>(C, [&](auto v, int64_t c) { decltype(v)::store(o + c, decltype(v)::zero()); });
    for (int64_t oy = p.out_row_begin(iy); oy < p.out_row_end(iy); ++oy)
      for (int64_t ox = p.out_col_begin(ix); ox < p.out_col_end(ix); ++ox) {
        const T k = per_window(oy, ox, ix);
        const int64_t at = ((n * p.out_h + oy) * p.out_w + ox) * C;
        over_channels<T, Arch>(C, [&](auto v, int64_t c) {
          using V = decltype(v);
          V::store(o + c, V::load(o + c) + term(v, at + c, k));
        });
      }
  }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

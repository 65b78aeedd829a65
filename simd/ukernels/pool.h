// What the MaxPool(Grad) and AvgPool(Grad) micro-kernels share: walking a row of output pixels
// (forward, and MaxPoolGrad's argmax pass) or of input pixels (the gradients' gather) with the
// channels in the lanes: a full vector of channels takes Vec<T, Arch>, the channel tail the same
// code on Vec<T, scalar_arch>.
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

// Row q = (n, r) of an NHWC tensor of height x width pixels (y: out_h x out_w, or dx: in_h x in_w):
// cell(V{}, n, r, col, c, out + offset of (n, r, col, c)) for every pixel and channel block.
template <class T, class Arch, class Cell>
inline void pool_row(int64_t q, int64_t height, int64_t width, int64_t channels, T* out, Cell cell) {
  const int64_t n = q / height, r = q % height;
  for (int64_t col = 0; col < width; ++col) {
    T* o = out + (q * width + col) * channels;
    over_channels<T, Arch>(channels, [&](auto v, int64_t c) { cell(v, n, r, col, c, o + c); });
  }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

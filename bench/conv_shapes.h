// Shapes shared by the benchmark programs (vulkan_bench, gradrt_step): resolved ConvParams of
// a square NHWC convolution with SAME padding, as core would hand them to a kernel.
#pragma once

#include <algorithm>
#include <cstdint>

#include "params.h"

namespace gradrt::bench {

// n x hw x hw x ci, an f x f filter at `stride`, co output channels (depthwise: co = ci * multiplier).
inline ConvParams same_conv(int64_t n, int64_t hw, int64_t ci, int64_t co, int64_t f, int64_t stride, bool depthwise) {
  ConvParams p;
  p.batch = n;
  p.in_h = p.in_w = hw;
  p.in_c = ci;
  p.filter_h = p.filter_w = f;
  p.stride_h = p.stride_w = stride;
  p.out_h = p.out_w = (hw + stride - 1) / stride;  // SAME
  const int64_t need = std::max<int64_t>(0, (p.out_h - 1) * stride + f - hw);
  p.pad_top = p.pad_left = need / 2;  // TF puts the odd pixel at the bottom/right
  p.filter_in_c = ci;
  p.out_c = co;
  if (depthwise) p.depth_multiplier = co / ci;
  return p;
}

}  // namespace gradrt::bench

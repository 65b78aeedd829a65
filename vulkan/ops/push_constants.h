// C++ mirrors of the GLSL push-constant blocks (vulkan/shaders/common/*.glsl and the shaders
// that declare their own). std430-compatible: only 4-byte int32/float members, so the C++
// layout equals the GLSL one; the static_asserts pin sizes and a few offsets. Vulkan
// guarantees 128 bytes of push constants; every block must stay within that.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gradrt::vk {

// shaders/common/conv_push.glsl: every convolution shader (conv2d*, depthwise_conv2d_native*).
struct ConvPush {
  int32_t batch, in_h, in_w, in_c;
  int32_t out_h, out_w, out_c;
  int32_t filter_h, filter_w, filter_in_c;
  int32_t groups, depth_multiplier;
  int32_t stride_h, stride_w, dilation_h, dilation_w;
  int32_t pad_top, pad_left;
  int32_t k_chunk;  // split-K: reduction elements per split (filter gradients)
  int32_t splits;   // split-K: number of splits
};
static_assert(sizeof(ConvPush) == 80 && sizeof(ConvPush) <= 128);
static_assert(offsetof(ConvPush, groups) == 40 && offsetof(ConvPush, pad_top) == 64 &&
              offsetof(ConvPush, splits) == 76);

// shaders/sum_partials.comp: out[i] = scale * sum_{s < splits} partial[s * n + i], or the sum
// divided by `divisor` when that is > 0 (float64 means).
struct ReducePush {
  int32_t n, splits;
  float scale;
  int32_t divisor;
};
static_assert(sizeof(ReducePush) == 16 && offsetof(ReducePush, scale) == 8);

// shaders/common/batch_norm_push.glsl: batch_norm_stats, batch_norm_apply,
// fused_batch_norm_grad*.
struct BatchNormPush {
  int32_t rows, channels;
  int32_t row_chunk, splits;  // partial sums: rows [s*row_chunk, (s+1)*row_chunk) per split s
  float epsilon;
  float inv_rows;             // float(1.0f / rows), TF multiplies sums by this reciprocal
  int32_t is_training;
  int32_t mode;               // batch_norm_stats: 0 sum x, 1 sum (x - mean)^2
};
static_assert(sizeof(BatchNormPush) == 32 && offsetof(BatchNormPush, epsilon) == 16 &&
              offsetof(BatchNormPush, mode) == 28);

// shaders/common/pool_push.glsl: fractional_avg_pool(_grad).
struct PoolPush {
  int32_t batch, in_h, in_w, channels, out_h, out_w;
};
static_assert(sizeof(PoolPush) == 24 && offsetof(PoolPush, out_w) == 20);

}  // namespace gradrt::vk

// ConvPush: every convolution shader (conv2d*, depthwise_conv2d_native*). All int32: the host
// refuses shapes whose element counts do not fit (vulkan/ops/common.h, make_conv_push).
#include "push_block.glsl"
GRADRT_PUSH_BLOCK(ConvPush) {
  int batch, in_h, in_w, in_c;
  int out_h, out_w, out_c;
  int filter_h, filter_w, filter_in_c;
  int groups, depth_multiplier;
  int stride_h, stride_w, dilation_h, dilation_w;
  int pad_top, pad_left;
  int k_chunk;  // split-K: reduction elements per split (filter gradients)
  int splits;   // split-K: number of splits
} GRADRT_PUSH_END;

// Mirror: gradrt::vk::ConvPush in vulkan/ops/push_constants.h (80 bytes). All int32: the host
// refuses shapes whose element counts do not fit.
layout(push_constant) uniform ConvPush {
  int batch, in_h, in_w, in_c;
  int out_h, out_w, out_c;
  int filter_h, filter_w, filter_in_c;
  int groups, depth_multiplier;
  int stride_h, stride_w, dilation_h, dilation_w;
  int pad_top, pad_left;
  int k_chunk;
  int splits;
} p;

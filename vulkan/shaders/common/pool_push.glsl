// Mirror: gradrt::vk::PoolPush in vulkan/ops/push_constants.h (24 bytes).
layout(push_constant) uniform PoolPush {
  int batch, in_h, in_w, channels, out_h, out_w;
} p;

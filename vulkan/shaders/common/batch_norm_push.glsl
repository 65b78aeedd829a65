// Mirror: gradrt::vk::BatchNormPush in vulkan/ops/push_constants.h (32 bytes).
layout(push_constant) uniform BatchNormPush {
  int rows, channels;
  int row_chunk, splits;
  float epsilon;
  float inv_rows;
  int is_training;
  int mode;
} p;

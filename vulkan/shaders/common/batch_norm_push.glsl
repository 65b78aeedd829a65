// BatchNormPush: batch_norm_stats, batch_norm_apply, fused_batch_norm_grad*.
#include "push_block.glsl"
GRADRT_PUSH_BLOCK(BatchNormPush) {
  int rows, channels;
  int row_chunk, splits;  // partial sums: rows [s*row_chunk, (s+1)*row_chunk) per split s
  float epsilon;
  float inv_rows;         // float(1.0f / rows): TF multiplies sums by this reciprocal
  int is_training;
  int mode;               // batch_norm_stats: 0 sum x, 1 sum (x - mean)^2
} GRADRT_PUSH_END;

// PoolPush: fractional_avg_pool(_grad), max_pool(_grad), avg_pool(_grad).
#include "push_block.glsl"
GRADRT_PUSH_BLOCK(PoolPush) {
  int batch, in_h, in_w, channels, out_h, out_w;
} GRADRT_PUSH_END;

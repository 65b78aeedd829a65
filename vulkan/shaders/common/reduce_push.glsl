// ReducePush: sum_partials.comp. out[i] = scale * sum_{s < splits} partial[s * n + i], or the
// sum divided by `divisor` when that is > 0 (float64 means: exact division, not a float scale).
#include "push_block.glsl"
GRADRT_PUSH_BLOCK(ReducePush) {
  int n, splits;
  float scale;
  int divisor;
} GRADRT_PUSH_END;

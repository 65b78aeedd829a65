// EltwisePush: relu, relu_grad, bias_add, bias_add_grad (one invocation per element, grid stride).
#include "push_block.glsl"
GRADRT_PUSH_BLOCK(EltwisePush) {
  int n;                  // elements
  int six;                // Relu6 / Relu6Grad
  int rows, channels;     // bias_add(_grad): [rows, channels], channels last
  int row_chunk, splits;  // bias_add_grad partial sums: rows [s*row_chunk, (s+1)*row_chunk) per split s
} GRADRT_PUSH_END;

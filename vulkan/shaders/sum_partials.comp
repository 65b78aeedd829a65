#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/reduce_push.glsl"
// Fixed-order reduction of split partial sums: out[i] = scale * sum_{s=0..splits-1} partial[s*n + i],
// or that sum / divisor when divisor > 0 (the float64 means: exact division, not a float scale).
// Used by the filter gradients and the batch-norm sums; deterministic (no atomics). A workgroup
// takes COLS consecutive outputs (coalesced reads of each split's row); lane l of a column sums
// splits l, l + LANES, ... in order and lane_reduce adds the lanes in a fixed tree.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int COLS = 32;
layout(constant_id = 2) const int LANES = 8;
#include "common/lane_reduce.glsl"
layout(std430, binding = 0) readonly buffer Partial { real partial[]; };
layout(std430, binding = 1) writeonly buffer Out { stored result[]; };

void main() {
  const int tid = int(gl_LocalInvocationID.x), col = tid % COLS, lane = tid / COLS;
  for (int base = int(gl_WorkGroupID.x) * COLS; base < p.n; base += int(gl_NumWorkGroups.x) * COLS) {
    const int i = base + col;
    real acc = 0.0;
    if (i < p.n)
      for (int s = lane; s < p.splits; s += LANES) acc += partial[s * p.n + i];
    acc = lane_reduce(acc, col, lane);
    if (lane == 0 && i < p.n) result[i] = STORE(p.divisor > 0 ? acc / real(p.divisor) : acc * p.scale);
  }
}

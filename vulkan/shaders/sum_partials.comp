#version 450
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/reduce_push.glsl"
// Fixed-order reduction of split partial sums: out[i] = scale * sum_{s=0..splits-1} partial[s*n + i],
// or that sum / divisor when divisor > 0 (the float64 means: exact division, not a float scale).
// Used by the filter gradients and the batch-norm sums; deterministic (no atomics).
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) readonly buffer Partial { real partial[]; };
layout(std430, binding = 1) writeonly buffer Out { real result[]; };

void main() {
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < p.n; i += stride) {
    real acc = 0.0;
    for (int s = 0; s < p.splits; ++s) acc += partial[s * p.n + i];
    result[i] = p.divisor > 0 ? acc / real(p.divisor) : acc * p.scale;
  }
}

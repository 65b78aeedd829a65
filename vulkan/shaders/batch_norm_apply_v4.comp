#version 450
// Batch-norm forward normalisation, vectorised (channels a multiple of 4; ops/batch_norm_apply.cpp
// picks it): batch_norm_apply.comp on real4 (element i is channels 4(i % Q).. of row i / Q,
// Q = channels / 4), the same operations per component: the same bits.
//   y = (x - mean[c]) * (rsqrt(variance[c] + epsilon) * scale[c]) + offset[c]
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/batch_norm_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real4 x[]; };
layout(std430, binding = 1) readonly buffer Scale { real4 scale[]; };
layout(std430, binding = 2) readonly buffer Offset { real4 offset[]; };
layout(std430, binding = 3) readonly buffer Mean { real4 mean[]; };
layout(std430, binding = 4) readonly buffer Variance { real4 variance[]; };
layout(std430, binding = 5) writeonly buffer Y { real4 y[]; };

void main() {
  const int Q = p.channels / 4;
  const int total = p.rows * Q;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += stride) {
    const int q = i % Q;
    const real4 k = rsqrt_real(variance[q] + real(p.epsilon)) * scale[q];
    y[i] = (x[i] - mean[q]) * k + offset[q];
  }
}

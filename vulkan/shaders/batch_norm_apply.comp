#version 450
// Batch-norm forward normalisation (ops.md 6.4), elementwise over x[rows, channels]:
//   y = (x - mean[c]) * (rsqrt(variance[c] + epsilon) * scale[c]) + offset[c]
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/batch_norm_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer Scale { real scale[]; };
layout(std430, binding = 2) readonly buffer Offset { real offset[]; };
layout(std430, binding = 3) readonly buffer Mean { real mean[]; };
layout(std430, binding = 4) readonly buffer Variance { real variance[]; };
layout(std430, binding = 5) writeonly buffer Y { real y[]; };

void main() {
  const int total = p.rows * p.channels;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += stride) {
    const int c = i % p.channels;
    const real k = rsqrt_real(variance[c] + p.epsilon) * scale[c];
    y[i] = (x[i] - mean[c]) * k + offset[c];
  }
}

#version 450
// BiasAdd (core/ops/bias_add.cpp) over [rows, channels], one invocation per element:
//   y[e] = x[e] + bias[e % channels]
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/eltwise_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer Bias { real bias[]; };
layout(std430, binding = 2) writeonly buffer Y { real y[]; };

void main() {
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int e = int(gl_GlobalInvocationID.x); e < p.n; e += stride) y[e] = x[e] + bias[e % p.channels];
}

#version 450
// Relu / Relu6 (core/ops/relu.cpp), one invocation per element:
//   y = max(x, 0), then min(y, 6) for Relu6; x <= 0 (also -0) gives +0; a NaN passes through.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/eltwise_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) writeonly buffer Y { real y[]; };

void main() {
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < p.n; i += stride) {
    const real v = x[i];
    y[i] = isnan(v) ? v : v <= real(0) ? real(0) : (p.six != 0 && v > real(6)) ? real(6) : v;
  }
}

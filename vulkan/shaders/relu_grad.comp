#version 450
// ReluGrad / Relu6Grad (core/ops/relu_grad.cpp), one invocation per element:
//   dx = dy * (x > 0 && (!six || x < 6) ? 1 : 0), a product as TF's (a NaN x compares false).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/eltwise_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer DY { real dy[]; };
layout(std430, binding = 1) readonly buffer X { real x[]; };
layout(std430, binding = 2) writeonly buffer DX { real dx[]; };

void main() {
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < p.n; i += stride) {
    const real v = x[i];
    const bool inside = v > real(0) && (p.six == 0 || v < real(6));
    dx[i] = dy[i] * (inside ? real(1) : real(0));
  }
}

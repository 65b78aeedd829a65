#version 450
// FusedBatchNormGrad, final pass (ops.md 6.10), given sums[c] = sum dy and
// sums[channels + c] = sum dy * (x - mean) from the partial + reduce passes:
//   inv = rsqrt(variance + epsilon), xc = x - mean
//   training:  dx = scale * inv * (dy - sum_dy * (1/R) - xc * inv^2 * sum_dy_xc * (1/R))
//   inference: dx = dy * scale * inv
//   dscale = sum_dy_xc * inv,  doffset = sum_dy                 (both modes)
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/batch_norm_push.glsl"
// Grid: x = channel (COLS per workgroup), y = row lane (LANES per workgroup, grid stride over
// rows), so a thread computes its channel's constants once and no element index is decoded.
// Specialisation (ops/common.h Lanes::spec): 0 the invocation count (the host's check only),
// 1 COLS = local size x, 2 LANES = local size y.
layout(local_size_x_id = 1, local_size_y_id = 2) in;

layout(std430, binding = 0) readonly buffer DY { stored dy[]; };
layout(std430, binding = 1) readonly buffer X { stored x[]; };
layout(std430, binding = 2) readonly buffer Scale { real scale[]; };
layout(std430, binding = 3) readonly buffer Mean { real mean[]; };
layout(std430, binding = 4) readonly buffer Variance { real variance[]; };
layout(std430, binding = 5) readonly buffer Sums { real sums[]; };
layout(std430, binding = 6) writeonly buffer DX { stored dx[]; };
layout(std430, binding = 7) writeonly buffer DScale { real dscale[]; };
layout(std430, binding = 8) writeonly buffer DOffset { real doffset[]; };

void main() {
  const int row_step = int(gl_NumWorkGroups.y * gl_WorkGroupSize.y);
  for (int c = int(gl_GlobalInvocationID.x); c < p.channels; c += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    const real inv = rsqrt_real(variance[c] + p.epsilon);
    const real mu = mean[c], k = scale[c] * inv;
#ifdef GRADRT_F64
    const real mean_dy = sums[c] / real(p.rows);
    const real mean_dy_xc = sums[p.channels + c] / real(p.rows);
#else
    const real mean_dy = sums[c] * p.inv_rows;  // TF: times the float reciprocal of R
    const real mean_dy_xc = sums[p.channels + c] * p.inv_rows;
#endif
    const real xc_scale = (inv * inv) * mean_dy_xc;
    for (int r = int(gl_GlobalInvocationID.y); r < p.rows; r += row_step) {
      const int i = r * p.channels + c;
      if (p.is_training != 0)
        dx[i] = STORE(k * (LOAD(dy[i]) - mean_dy - (LOAD(x[i]) - mu) * xc_scale));
      else
        dx[i] = STORE(LOAD(dy[i]) * scale[c] * inv);
    }
    if (gl_GlobalInvocationID.y == 0) {
      dscale[c] = sums[p.channels + c] * inv;
      doffset[c] = sums[c];
    }
  }
}

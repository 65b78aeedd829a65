#version 450
// FusedBatchNormGrad, vectorised final pass (channels a multiple of 4): the formulas of
// fused_batch_norm_grad.comp, four channels per invocation (real4 loads: row r's quad q is
// element r * Q + q, Q = channels / 4), given sums[c] = sum dy and sums[channels + c] =
// sum dy * (x - mean) (sums[] as real4: quad q at q and Q + q).
//   inv = rsqrt(variance + epsilon), xc = x - mean
//   training:  dx = scale * inv * (dy - sum_dy * (1/R) - xc * inv^2 * sum_dy_xc * (1/R))
//   inference: dx = dy * scale * inv
//   dscale = sum_dy_xc * inv,  doffset = sum_dy                 (both modes)
// Each component goes through the same operations as the scalar shader: the same bits.
// Grid: x = channel quad (COLS per workgroup), y = row lane (LANES per workgroup, grid stride).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/batch_norm_push.glsl"
// Specialisation (ops/common.h Lanes::spec): 0 the invocation count, 1 COLS, 2 LANES.
layout(local_size_x_id = 1, local_size_y_id = 2) in;

layout(std430, binding = 0) readonly buffer DY { stored4 dy[]; };
layout(std430, binding = 1) readonly buffer X { stored4 x[]; };
layout(std430, binding = 2) readonly buffer Scale { real4 scale[]; };
layout(std430, binding = 3) readonly buffer Mean { real4 mean[]; };
layout(std430, binding = 4) readonly buffer Variance { real4 variance[]; };
layout(std430, binding = 5) readonly buffer Sums { real4 sums[]; };
layout(std430, binding = 6) writeonly buffer DX { stored4 dx[]; };
layout(std430, binding = 7) writeonly buffer DScale { real4 dscale[]; };
layout(std430, binding = 8) writeonly buffer DOffset { real4 doffset[]; };

void main() {
  const int Q = p.channels / 4;
  const int row_step = int(gl_NumWorkGroups.y * gl_WorkGroupSize.y);
  for (int q = int(gl_GlobalInvocationID.x); q < Q; q += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
    const real4 inv = rsqrt_real(variance[q] + real(p.epsilon));
    const real4 mu = mean[q], k = scale[q] * inv;
#ifdef GRADRT_F64
    const real4 mean_dy = sums[q] / real(p.rows);
    const real4 mean_dy_xc = sums[Q + q] / real(p.rows);
#else
    const real4 mean_dy = sums[q] * p.inv_rows;  // TF: times the float reciprocal of R
    const real4 mean_dy_xc = sums[Q + q] * p.inv_rows;
#endif
    const real4 xc_scale = (inv * inv) * mean_dy_xc;
    for (int r = int(gl_GlobalInvocationID.y); r < p.rows; r += row_step) {
      const int i = r * Q + q;
      if (p.is_training != 0)
        dx[i] = STORE4(k * (LOAD4(dy[i]) - mean_dy - (LOAD4(x[i]) - mu) * xc_scale));
      else
        dx[i] = STORE4(LOAD4(dy[i]) * scale[q] * inv);
    }
    if (gl_GlobalInvocationID.y == 0) {
      dscale[q] = sums[Q + q] * inv;
      doffset[q] = sums[q];
    }
  }
}

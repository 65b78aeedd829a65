#version 450
// FusedBatchNormGrad, partial pass (ops.md 6.10): per split s of rows and channel c
//   partial[s][c]            = sum dy[r, c]
//   partial[s][channels + c] = sum dy[r, c] * (x[r, c] - mean[c])
// (layout [splits][2 * channels] so that sum_partials with n = 2*channels reduces both).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/batch_norm_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer DY { real dy[]; };
layout(std430, binding = 1) readonly buffer X { real x[]; };
layout(std430, binding = 2) readonly buffer Mean { real mean[]; };
layout(std430, binding = 3) writeonly buffer Partial { real partial[]; };

void main() {
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int r_begin = min(s * p.row_chunk, p.rows);
    const int r_end = min(r_begin + p.row_chunk, p.rows);
    for (int c = int(gl_GlobalInvocationID.x); c < p.channels; c += stride) {
      const real mu = mean[c];
      real sum_dy = 0.0, sum_dy_xc = 0.0;
      for (int r = r_begin; r < r_end; ++r) {
        const real g = dy[r * p.channels + c];
        sum_dy += g;
        sum_dy_xc += g * (x[r * p.channels + c] - mu);
      }
      partial[s * 2 * p.channels + c] = sum_dy;
      partial[s * 2 * p.channels + p.channels + c] = sum_dy_xc;
    }
  }
}

#version 450
// Batch mean / biased variance, partial pass over x[rows, channels] (ops.md 6.4):
//   mode 0: partial[s][c] = sum_{r in split s} x[r, c]
//   mode 1: partial[s][c] = sum_{r in split s} (x[r, c] - mean[c])^2      (two-pass variance)
// Split s covers rows [s*row_chunk, min((s+1)*row_chunk, rows)), workgroup y = s; each sum
// runs in row order. sum_partials.comp then adds the splits in order and multiplies by
// float(1/rows), as TF does.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/batch_norm_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer Mean { real mean[]; };
layout(std430, binding = 2) writeonly buffer Partial { real partial[]; };

void main() {
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int r_begin = min(s * p.row_chunk, p.rows);
    const int r_end = min(r_begin + p.row_chunk, p.rows);
    for (int c = int(gl_GlobalInvocationID.x); c < p.channels; c += stride) {
      real acc = 0.0;
      if (p.mode == 0) {
        for (int r = r_begin; r < r_end; ++r) acc += x[r * p.channels + c];
      } else {
        const real mu = mean[c];
        for (int r = r_begin; r < r_end; ++r) {
          const real d = x[r * p.channels + c] - mu;
          acc += d * d;
        }
      }
      partial[s * p.channels + c] = acc;
    }
  }
}

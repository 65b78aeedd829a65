#version 450
// FusedBatchNormGrad, partial pass (ops.md 6.10): per split s of rows and channel c
//   partial[s][c]            = sum dy[r, c]
//   partial[s][channels + c] = sum dy[r, c] * (x[r, c] - mean[c])
// (layout [splits][2 * channels] so that sum_partials with n = 2*channels reduces both).
// A workgroup takes COLS consecutive channels of one split (workgroup y): lane l of a column
// reads rows r_begin + l, + LANES, ... (each row's COLS channels are one coalesced read), and
// lane_reduce adds the lanes in a fixed order.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/batch_norm_push.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int COLS = 32;
layout(constant_id = 2) const int LANES = 8;
#include "common/lane_reduce.glsl"

layout(std430, binding = 0) readonly buffer DY { stored dy[]; };
layout(std430, binding = 1) readonly buffer X { stored x[]; };
layout(std430, binding = 2) readonly buffer Mean { real mean[]; };
layout(std430, binding = 3) writeonly buffer Partial { real partial[]; };

void main() {
  const int tid = int(gl_LocalInvocationID.x), col = tid % COLS, lane = tid / COLS;
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int r_begin = min(s * p.row_chunk, p.rows);
    const int r_end = min(r_begin + p.row_chunk, p.rows);
    for (int c0 = int(gl_WorkGroupID.x) * COLS; c0 < p.channels; c0 += int(gl_NumWorkGroups.x) * COLS) {
      const int c = c0 + col;
      real sum_dy = 0.0, sum_dy_xc = 0.0;
      if (c < p.channels) {
        const real mu = mean[c];
        for (int r = r_begin + lane; r < r_end; r += LANES) {
          const real g = LOAD(dy[r * p.channels + c]);
          sum_dy += g;
          sum_dy_xc += g * (LOAD(x[r * p.channels + c]) - mu);
        }
      }
      sum_dy = lane_reduce(sum_dy, col, lane);
      sum_dy_xc = lane_reduce(sum_dy_xc, col, lane);
      if (lane == 0 && c < p.channels) {
        partial[s * 2 * p.channels + c] = sum_dy;
        partial[s * 2 * p.channels + p.channels + c] = sum_dy_xc;
      }
    }
  }
}

#version 450
// FusedBatchNormGrad, vectorised partial pass (channels a multiple of 4; ops/fused_batch_norm_grad.cpp
// picks it): per split s of rows and channel c
//   partial[s][c]            = sum dy[r, c]
//   partial[s][channels + c] = sum dy[r, c] * (x[r, c] - mean[c])
// the layout of fused_batch_norm_grad_sums.comp ([splits][2 * channels]; sum_partials reduces
// it), read and written as real4: row r's quad q is element r * Q + q, Q = channels / 4.
// A workgroup takes COLS consecutive quads of one split (workgroup y); lane l reads rows
// r_begin + l, + LANES, ...; lane_reduce adds the lanes in a fixed tree (deterministic).
// The host picks COLS from the channel count (few channels: more row lanes).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/batch_norm_push.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int COLS = 32;
layout(constant_id = 2) const int LANES = 8;
#define LANE_T real4
#include "common/lane_reduce.glsl"

layout(std430, binding = 0) readonly buffer DY { stored4 dy[]; };
layout(std430, binding = 1) readonly buffer X { stored4 x[]; };
layout(std430, binding = 2) readonly buffer Mean { real4 mean[]; };
layout(std430, binding = 3) writeonly buffer Partial { real4 partial[]; };

void main() {
  const int tid = int(gl_LocalInvocationID.x), col = tid % COLS, lane = tid / COLS;
  const int Q = p.channels / 4;
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int r_begin = min(s * p.row_chunk, p.rows);
    const int r_end = min(r_begin + p.row_chunk, p.rows);
    for (int q0 = int(gl_WorkGroupID.x) * COLS; q0 < Q; q0 += int(gl_NumWorkGroups.x) * COLS) {
      const int q = q0 + col;
      real4 sum_dy = real4(0.0), sum_dy_xc = real4(0.0);
      if (q < Q) {
        const real4 mu = mean[q];
        for (int r = r_begin + lane; r < r_end; r += LANES) {
          const real4 g = LOAD4(dy[r * Q + q]);
          sum_dy += g;
          sum_dy_xc += g * (LOAD4(x[r * Q + q]) - mu);
        }
      }
      sum_dy = lane_reduce(sum_dy, col, lane);
      sum_dy_xc = lane_reduce(sum_dy_xc, col, lane);
      if (lane == 0 && q < Q) {
        partial[s * 2 * Q + q] = sum_dy;
        partial[s * 2 * Q + Q + q] = sum_dy_xc;
      }
    }
  }
}

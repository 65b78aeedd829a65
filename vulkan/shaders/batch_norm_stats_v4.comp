#version 450
// Batch mean / biased variance, vectorised partial pass (channels a multiple of 4;
// ops/batch_norm_stats.cpp picks it): batch_norm_stats.comp with four channels per invocation
// (real4 loads: row r's quad q is element r * Q + q, Q = channels / 4), each component summed
// in row order as there: the same bits.
//   mode 0: partial[s][c] = sum_{r in split s} x[r, c]
//   mode 1: partial[s][c] = sum_{r in split s} (x[r, c] - mean[c])^2
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/batch_norm_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real4 x[]; };
layout(std430, binding = 1) readonly buffer Mean { real4 mean[]; };
layout(std430, binding = 2) writeonly buffer Partial { real4 partial[]; };

void main() {
  const int Q = p.channels / 4;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int r_begin = min(s * p.row_chunk, p.rows);
    const int r_end = min(r_begin + p.row_chunk, p.rows);
    for (int q = int(gl_GlobalInvocationID.x); q < Q; q += stride) {
      real4 acc = real4(0.0);
      if (p.mode == 0) {
        for (int r = r_begin; r < r_end; ++r) acc += x[r * Q + q];
      } else {
        const real4 mu = mean[q];
        for (int r = r_begin; r < r_end; ++r) {
          const real4 d = x[r * Q + q] - mu;
          acc += d * d;
        }
      }
      partial[s * Q + q] = acc;
    }
  }
}

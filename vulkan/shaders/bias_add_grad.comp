#version 450
// BiasAddGrad (core/ops/bias_add_grad.cpp), partial pass: per split s of rows and channel c
//   partial[s * channels + c] = sum over rows r of split s of dy[r, c]
// sum_partials.comp then adds the splits in order (deterministic, no atomics).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/eltwise_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer DY { real dy[]; };
layout(std430, binding = 1) writeonly buffer Partial { real partial[]; };

void main() {
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int r_begin = min(s * p.row_chunk, p.rows);
    const int r_end = min(r_begin + p.row_chunk, p.rows);
    for (int c = int(gl_GlobalInvocationID.x); c < p.channels; c += stride) {
      real sum = real(0);
      for (int r = r_begin; r < r_end; ++r) sum += dy[r * p.channels + c];
      partial[s * p.channels + c] = sum;
    }
  }
}

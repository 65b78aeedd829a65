#version 450
// FractionalAvgPool forward (ops.md 5.5): y[n, r, c, d] = (sum over the cell of x) / count.
// The host resolves the cells (overlapping rule and clamping, FracPoolParams::row_start/row_end)
// into int32 pairs: cells[2r], cells[2r+1] = first/last input row of output row r, then at
// 2*out_h the same for columns. count = (re - rs + 1) * (ce - cs + 1). Sums run rows then columns.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/pool_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer Cells { int cells[]; };
layout(std430, binding = 2) writeonly buffer Y { real y[]; };

void main() {
  const int total = p.batch * p.out_h * p.out_w * p.channels;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += stride) {
    const int d = i % p.channels;
    int t = i / p.channels;
    const int c = t % p.out_w;
    t /= p.out_w;
    const int r = t % p.out_h, n = t / p.out_h;
    const int rs = cells[2 * r], re = cells[2 * r + 1];
    const int cs = cells[2 * p.out_h + 2 * c], ce = cells[2 * p.out_h + 2 * c + 1];
    real acc = 0.0;
    for (int iy = rs; iy <= re; ++iy)
      for (int ix = cs; ix <= ce; ++ix) acc += x[((n * p.in_h + iy) * p.in_w + ix) * p.channels + d];
    const int count = (re - rs + 1) * (ce - cs + 1);
    y[i] = count > 0 ? acc / real(count) : 0.0;  // as the reference: an empty cell gives 0
  }
}

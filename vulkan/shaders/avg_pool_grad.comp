#version 450
// AvgPoolGrad as a gather, one invocation per dx element: the dy / count of every window that
// contains it, in (oy, ox) order (count: the window's real cells).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/pool_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer DY { real dy[]; };
layout(std430, binding = 1) readonly buffer Geometry { int geo[]; };
layout(std430, binding = 2) writeonly buffer DX { real dx[]; };
#include "common/window_pool.glsl"

void main() {
  const int total = p.batch * p.in_h * p.in_w * p.channels;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int e = int(gl_GlobalInvocationID.x); e < total; e += stride) {
    const int c = e % p.channels;
    int t = e / p.channels;
    const int ix = t % p.in_w;
    t /= p.in_w;
    const int iy = t % p.in_h, n = t / p.in_h;
    real acc = 0.0;
    for (int oy = out_row_begin(iy); oy < out_row_end(iy); ++oy)
      for (int ox = out_col_begin(ix); ox < out_col_end(ix); ++ox) {
        const int count = (row_end(oy) - row_begin(oy)) * (col_end(ox) - col_begin(ox));
        acc += dy[((n * p.out_h + oy) * p.out_w + ox) * p.channels + c] / real(count);
      }
    dx[e] = acc;
  }
}

#version 450
// AvgPool, one invocation per y element: the sum of the window's real cells / their count.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/pool_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer Geometry { int geo[]; };
layout(std430, binding = 2) writeonly buffer Y { real y[]; };
#include "common/window_pool.glsl"

void main() {
  const int total = p.batch * p.out_h * p.out_w * p.channels;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int e = int(gl_GlobalInvocationID.x); e < total; e += stride) {
    const int c = e % p.channels;
    int t = e / p.channels;
    const int ox = t % p.out_w;
    t /= p.out_w;
    const int oy = t % p.out_h, n = t / p.out_h;
    real s = 0.0;
    for (int iy = row_begin(oy); iy < row_end(oy); ++iy)
      for (int ix = col_begin(ox); ix < col_end(ox); ++ix) s += x[((n * p.in_h + iy) * p.in_w + ix) * p.channels + c];
    y[e] = s / real((row_end(oy) - row_begin(oy)) * (col_end(ox) - col_begin(ox)));
  }
}

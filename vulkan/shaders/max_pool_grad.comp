#version 450
// MaxPoolGrad as a gather, one invocation per dx element (iy, ix): for each window containing
// it, in (oy, ox) order, recompute the window's argmax by TF's CPU rule (the first real cell,
// replaced only by a later cell that compares greater) and add dy when it is this cell. The
// adds are TF's, in TF's order: bit-identical to TF's float sums. Simple, not fast: each
// window is rescanned by each of its cells.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/pool_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer DY { real dy[]; };
layout(std430, binding = 2) readonly buffer Geometry { int geo[]; };
layout(std430, binding = 3) writeonly buffer DX { real dx[]; };
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
    const int img = n * p.in_h * p.in_w;
    real acc = 0.0;
    for (int oy = out_row_begin(iy); oy < out_row_end(iy); ++oy)
      for (int ox = out_col_begin(ix); ox < out_col_end(ix); ++ox) {
        int by = row_begin(oy), bx = col_begin(ox);
        real m = x[(img + by * p.in_w + bx) * p.channels + c];
        for (int wy = row_begin(oy); wy < row_end(oy); ++wy)
          for (int wx = col_begin(ox); wx < col_end(ox); ++wx) {
            const real v = x[(img + wy * p.in_w + wx) * p.channels + c];
            if (m < v) {
              m = v;
              by = wy;
              bx = wx;
            }
          }
        if (by == iy && bx == ix) acc += dy[((n * p.out_h + oy) * p.out_w + ox) * p.channels + c];
      }
    dx[e] = acc;
  }
}

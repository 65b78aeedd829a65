#version 450
// DepthwiseConv2dNativeBackpropInput (ops.md 4.3, with dilation): one invocation per dx element
// gathers the output positions whose window covers it:
//   dx[n, iy, ix, c] = sum_{ky,kx,m} dy[n, oy, ox, c*M + m] * w[ky, kx, c, m]
//   where oy = (iy + pad_top - ky*dilation_h) / stride_h must be exact and in [0, out_h).
// Trap: test the numerator for < 0 before % and / (they truncate toward zero).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/conv_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Wt { real w[]; };
layout(std430, binding = 1) readonly buffer DY { real dy[]; };
layout(std430, binding = 2) writeonly buffer DX { real dx[]; };

void main() {
  const int total = p.batch * p.in_h * p.in_w * p.in_c;
  const int M = p.depth_multiplier;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += stride) {
    const int c = i % p.in_c;
    int t = i / p.in_c;
    const int ix = t % p.in_w;
    t /= p.in_w;
    const int iy = t % p.in_h, n = t / p.in_h;
    real acc = 0.0;
    for (int ky = 0; ky < p.filter_h; ++ky) {
      const int ty = iy + p.pad_top - ky * p.dilation_h;
      if (ty < 0 || ty % p.stride_h != 0) continue;
      const int oy = ty / p.stride_h;
      if (oy >= p.out_h) continue;
      for (int kx = 0; kx < p.filter_w; ++kx) {
        const int tx = ix + p.pad_left - kx * p.dilation_w;
        if (tx < 0 || tx % p.stride_w != 0) continue;
        const int ox = tx / p.stride_w;
        if (ox >= p.out_w) continue;
        const int dy_base = ((n * p.out_h + oy) * p.out_w + ox) * p.out_c + c * M;
        const int w_base = (ky * p.filter_w + kx) * p.out_c + c * M;
        for (int m = 0; m < M; ++m) acc += dy[dy_base + m] * w[w_base + m];
      }
    }
    dx[i] = acc;
  }
}

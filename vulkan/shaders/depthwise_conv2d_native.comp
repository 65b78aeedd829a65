#version 450
// DepthwiseConv2dNative forward: one invocation per output element (the reduction is only
// filter_h * filter_w long, so there is nothing to tile).
//   y[n, oy, ox, c*M + m] = sum_{ky,kx} x[n, oy*stride_h - pad_top + ky*dilation_h, ..., c] * w[ky, kx, c, m]
// w is [filter_h, filter_w, in_c, M]: w[ky,kx,c,m] = w[(ky*filter_w + kx) * out_c + oc] with oc = c*M + m.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/conv_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer Wt { real w[]; };
layout(std430, binding = 2) writeonly buffer Y { real y[]; };

void main() {
  const int total = p.batch * p.out_h * p.out_w * p.out_c;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int i = int(gl_GlobalInvocationID.x); i < total; i += stride) {
    const int oc = i % p.out_c;
    int t = i / p.out_c;
    const int ox = t % p.out_w;
    t /= p.out_w;
    const int oy = t % p.out_h, n = t / p.out_h;
    const int c = oc / p.depth_multiplier;
    real acc = 0.0;
    for (int ky = 0; ky < p.filter_h; ++ky) {
      const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
      if (iy < 0 || iy >= p.in_h) continue;
      for (int kx = 0; kx < p.filter_w; ++kx) {
        const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
        if (ix < 0 || ix >= p.in_w) continue;
        acc += x[((n * p.in_h + iy) * p.in_w + ix) * p.in_c + c] * w[(ky * p.filter_w + kx) * p.out_c + oc];
      }
    }
    y[i] = acc;
  }
}

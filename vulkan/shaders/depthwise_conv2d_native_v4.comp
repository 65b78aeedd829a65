#version 450
// DepthwiseConv2dNative forward, vectorised (ops/depthwise_conv2d_native.cpp takes it when the
// depth multiplier is 1 and the channel count a multiple of 4; the scalar shader otherwise):
//   y[n, oy, ox, c] = sum_{ky,kx} x[n, oy*stride_h - pad_top + ky*dilation_h, ox*stride_w - pad_left + kx*dilation_w, c]
//                                  * w[ky, kx, c]
// Buffers are read as real4: element q of a real4 array is channels 4q..4q+3 of one pixel, so
// with Q = channels / 4 pixel i's quad q is at i * Q + q (every binding starts at offset 0).
// An invocation computes OX consecutive output columns of one quad: each w quad is loaded once
// per tap for OX outputs; the overlapping x quads come from cache. Per output the taps are added
// in (ky, kx) order, as the scalar shader does.
// Grid: x = channel quad (COLS per workgroup), y = position (n, oy, column group of OX), one
// division pair per position, none per element. Both dimensions loop (grid stride).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/conv_push.glsl"
// Specialisation (ops/common.h Lanes::spec): 0 the invocation count, 1 COLS, 2 LANES.
layout(local_size_x_id = 1, local_size_y_id = 2) in;
#define OX 4

layout(std430, binding = 0) readonly buffer X { real4 x[]; };
layout(std430, binding = 1) readonly buffer Wt { real4 w[]; };
layout(std430, binding = 2) writeonly buffer Y { real4 y[]; };

void main() {
  const int Q = p.out_c / 4;
  const int groups_w = (p.out_w + OX - 1) / OX;
  const int positions = p.batch * p.out_h * groups_w;
  for (int pos = int(gl_GlobalInvocationID.y); pos < positions; pos += int(gl_NumWorkGroups.y * gl_WorkGroupSize.y)) {
    const int row = pos / groups_w;  // n * out_h + oy
    const int ox0 = (pos - row * groups_w) * OX;
    const int n = row / p.out_h, oy = row - n * p.out_h;
    for (int q = int(gl_GlobalInvocationID.x); q < Q; q += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
      real4 acc[OX];
      for (int j = 0; j < OX; ++j) acc[j] = real4(0.0);
      for (int ky = 0; ky < p.filter_h; ++ky) {
        const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
        if (iy < 0 || iy >= p.in_h) continue;
        const int x_row = (n * p.in_h + iy) * p.in_w;
        for (int kx = 0; kx < p.filter_w; ++kx) {
          const real4 wv = w[(ky * p.filter_w + kx) * Q + q];
          const int ix0 = ox0 * p.stride_w - p.pad_left + kx * p.dilation_w;
          for (int j = 0; j < OX; ++j) {  // constant trip count: unrolled, acc[] in registers
            const int ix = ix0 + j * p.stride_w;
            if (ox0 + j < p.out_w && ix >= 0 && ix < p.in_w) acc[j] += x[(x_row + ix) * Q + q] * wv;
          }
        }
      }
      for (int j = 0; j < OX; ++j)
        if (ox0 + j < p.out_w) y[(row * p.out_w + ox0 + j) * Q + q] = acc[j];
    }
  }
}

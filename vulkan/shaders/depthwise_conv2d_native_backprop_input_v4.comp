#version 450
// DepthwiseConv2dNativeBackpropInput, vectorised (depth multiplier 1, channels a multiple of 4;
// ops/depthwise_conv2d_native_backprop_input.cpp picks it): each invocation gathers, for IX
// consecutive dx columns of one channel quad, the output positions whose window covers them:
//   dx[n, iy, ix, c] = sum_{ky,kx} dy[n, oy, ox, c] * w[ky, kx, c]
//   where oy = (iy + pad_top - ky*dilation_h) / stride_h must be exact and in [0, out_h), same for ox.
// real4 indexing as in depthwise_conv2d_native_v4.comp (pixel i, quad q at i * Q + q). Taps are
// added in (ky, kx) order per element, as the scalar shader does. w quads are loaded once per tap
// for IX columns.
// Grid: x = channel quad (COLS per workgroup), y = position (n, iy, column group of IX).
// Trap: test the numerator for < 0 before % and / (they truncate toward zero).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/conv_push.glsl"
// Specialisation (ops/common.h Lanes::spec): 0 the invocation count, 1 COLS, 2 LANES.
layout(local_size_x_id = 1, local_size_y_id = 2) in;
#define IX 2

layout(std430, binding = 0) readonly buffer Wt { stored4 w[]; };
layout(std430, binding = 1) readonly buffer DY { stored4 dy[]; };
layout(std430, binding = 2) writeonly buffer DX { stored4 dx[]; };

// The output index t / stride if t is a non-negative multiple of stride below limit, else -1.
int exact_out(int t, int stride, int limit) {
  if (t < 0) return -1;
  if (stride > 1) {
    if (t % stride != 0) return -1;
    t /= stride;
  }
  return t < limit ? t : -1;
}

void main() {
  const int Q = p.in_c / 4;
  const int groups_w = (p.in_w + IX - 1) / IX;
  const int positions = p.batch * p.in_h * groups_w;
  for (int pos = int(gl_GlobalInvocationID.y); pos < positions; pos += int(gl_NumWorkGroups.y * gl_WorkGroupSize.y)) {
    const int row = pos / groups_w;  // n * in_h + iy
    const int ix0 = (pos - row * groups_w) * IX;
    const int n = row / p.in_h, iy = row - n * p.in_h;
    for (int q = int(gl_GlobalInvocationID.x); q < Q; q += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
      real4 acc[IX];
      for (int j = 0; j < IX; ++j) acc[j] = real4(0.0);
      for (int ky = 0; ky < p.filter_h; ++ky) {
        const int oy = exact_out(iy + p.pad_top - ky * p.dilation_h, p.stride_h, p.out_h);
        if (oy < 0) continue;
        const int dy_row = (n * p.out_h + oy) * p.out_w;
        for (int kx = 0; kx < p.filter_w; ++kx) {
          const real4 wv = LOAD4(w[(ky * p.filter_w + kx) * Q + q]);
          for (int j = 0; j < IX; ++j) {
            const int ox = exact_out(ix0 + j + p.pad_left - kx * p.dilation_w, p.stride_w, p.out_w);
            if (ix0 + j < p.in_w && ox >= 0) acc[j] += LOAD4(dy[(dy_row + ox) * Q + q]) * wv;
          }
        }
      }
      for (int j = 0; j < IX; ++j)
        if (ix0 + j < p.in_w) dx[(row * p.in_w + ix0 + j) * Q + q] = STORE4(acc[j]);
    }
  }
}

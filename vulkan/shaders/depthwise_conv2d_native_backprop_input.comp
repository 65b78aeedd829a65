#version 450
// DepthwiseConv2dNativeBackpropInput (ops.md 4.3, with dilation): each invocation computes one
// dx element by gathering the output positions whose window covers it:
//   dx[n, iy, ix, c] = sum_{ky,kx,m} dy[n, oy, ox, c*M + m] * w[ky, kx, c, m]
//   where oy = (iy + pad_top - ky*dilation_h) / stride_h must be exact and in [0, out_h).
// Grid: x = channel c (COLS per workgroup), y = column ix (LANES per workgroup), z = image row
// (n, iy), so nothing is decoded per element: n and iy are uniform over a workgroup (as is the
// ky test), and integer division (slow on GPUs) is used only for strides > 1. Each dimension
// loops (grid stride) over whatever the dispatch's group counts leave out.
// Trap: test the numerator for < 0 before % and / (they truncate toward zero).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/conv_push.glsl"
// Specialisation (ops/common.h Lanes::spec): 0 the invocation count (the host's check only),
// 1 COLS = local size x, 2 LANES = local size y.
layout(local_size_x_id = 1, local_size_y_id = 2) in;

layout(std430, binding = 0) readonly buffer Wt { stored w[]; };
layout(std430, binding = 1) readonly buffer DY { stored dy[]; };
layout(std430, binding = 2) writeonly buffer DX { stored dx[]; };

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
  const int M = p.depth_multiplier;
  const int rows = p.batch * p.in_h;
  for (int row = int(gl_WorkGroupID.z); row < rows; row += int(gl_NumWorkGroups.z)) {
    const int n = row / p.in_h, iy = row - n * p.in_h;
    for (int ix = int(gl_GlobalInvocationID.y); ix < p.in_w; ix += int(gl_NumWorkGroups.y * gl_WorkGroupSize.y)) {
      for (int c = int(gl_GlobalInvocationID.x); c < p.in_c; c += int(gl_NumWorkGroups.x * gl_WorkGroupSize.x)) {
        real acc = 0.0;
        for (int ky = 0; ky < p.filter_h; ++ky) {
          const int oy = exact_out(iy + p.pad_top - ky * p.dilation_h, p.stride_h, p.out_h);
          if (oy < 0) continue;
          for (int kx = 0; kx < p.filter_w; ++kx) {
            const int ox = exact_out(ix + p.pad_left - kx * p.dilation_w, p.stride_w, p.out_w);
            if (ox < 0) continue;
            const int dy_base = ((n * p.out_h + oy) * p.out_w + ox) * p.out_c + c * M;
            const int w_base = (ky * p.filter_w + kx) * p.out_c + c * M;
            for (int m = 0; m < M; ++m) acc += LOAD(dy[dy_base + m]) * LOAD(w[w_base + m]);
          }
        }
        dx[(row * p.in_w + ix) * p.in_c + c] = STORE(acc);
      }
    }
  }
}

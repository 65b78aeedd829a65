#version 450
// FractionalAvgPoolGrad (ops.md 5.10) as a gather, one invocation per dx element:
//   dx[n, i, j, d] = sum over cells (r, c) that contain (i, j) of dy[n, r, c, d] / count(r, c)
// The cells containing input row i form a contiguous range of r (cell starts and ends are both
// non-decreasing in r), resolved by the host. Layout of `cells` (int32):
//   [0, 2*out_h)               first/last input row of output row r
//   [2*out_h, +2*out_w)        first/last input column of output column c
//   [R0 = 2*out_h + 2*out_w, +2*in_h)   first/last output row covering input row i (last < first: none)
//   [R0 + 2*in_h, +2*in_w)     first/last output column covering input column j
// Contributions are added in (r, c) order, as TF's scatter loop adds them (TF accumulates in
// double; float here, compare with a tolerance).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/pool_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer DY { real dy[]; };
layout(std430, binding = 1) readonly buffer Cells { int cells[]; };
layout(std430, binding = 2) writeonly buffer DX { real dx[]; };

void main() {
  const int total = p.batch * p.in_h * p.in_w * p.channels;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  const int R0 = 2 * p.out_h + 2 * p.out_w;
  const int C0 = R0 + 2 * p.in_h;
  for (int e = int(gl_GlobalInvocationID.x); e < total; e += stride) {
    const int d = e % p.channels;
    int t = e / p.channels;
    const int j = t % p.in_w;
    t /= p.in_w;
    const int i = t % p.in_h, n = t / p.in_h;
    const int r_first = cells[R0 + 2 * i], r_last = cells[R0 + 2 * i + 1];
    const int c_first = cells[C0 + 2 * j], c_last = cells[C0 + 2 * j + 1];
    real acc = 0.0;
    for (int r = r_first; r <= r_last; ++r) {
      const int rows = cells[2 * r + 1] - cells[2 * r] + 1;
      for (int c = c_first; c <= c_last; ++c) {
        const int cols = cells[2 * p.out_h + 2 * c + 1] - cells[2 * p.out_h + 2 * c] + 1;
        acc += dy[((n * p.out_h + r) * p.out_w + c) * p.channels + d] / real(rows * cols);
      }
    }
    dx[e] = acc;
  }
}

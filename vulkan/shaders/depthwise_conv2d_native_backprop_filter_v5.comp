#version 450
// DepthwiseConv2dNativeBackpropFilter, partial pass with the nine tap accumulators in named
// registers (session 11; GRADRT_VULKAN_SHADERS=v5 selects it, ops/common.h). Same problem,
// geometry and summation order as depthwise_conv2d_native_backprop_filter_v4.comp (same bits):
//   dw[ky, kx, c] = sum_{n,oy,ox} dy[n, oy, ox, c] * x[n, oy*stride_h - pad_top + ky*dilation_h, ..., c]
// split s of `splits` chunks of k_chunk positions writes partial[s * E + e] (real4 element
// s * E4 + tap * Q + q, Q = out_c / 4 channel quads), sum_partials.comp adds the splits in order.
// Why a variant: in the _v4 shader the taps' sums are an array acc[9] that the reduction loop
// (lane_reduce has barriers, so drivers may keep that loop rolled) indexes with a run-time j;
// an array indexed at run time cannot live in registers, so every `acc[j] += ...` of the main
// loop may become a local-memory load and store (144 B per position per invocation: more
// traffic than x and dy themselves). Here the taps are written out by macro with constant
// names a0..a8: nothing is indexed at run time, so they stay in registers on any compiler.
// Bounds: uint(i) < uint(n) is 0 <= i < n for n > 0 (one compare instead of two).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/conv_push.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int COLS = 32;
layout(constant_id = 2) const int LANES = 8;
#define LANE_T real4
#include "common/lane_reduce.glsl"
#define TAPS 9  // taps per workgroup z (the host sizes gz for it); a 3x3 filter is one z

layout(std430, binding = 0) readonly buffer X { stored4 x[]; };
layout(std430, binding = 1) readonly buffer DY { stored4 dy[]; };
layout(std430, binding = 2) writeonly buffer Partial { real4 partial[]; };

// Tap tap0 + J of the current position: accumulates into A, then steps (ky, kx) in row-major
// tap order. Needs g, y_base, x_base, img_row (= n * in_h), q, Q, taps, tap0, ky, kx in scope.
#define TAP(J, A)                                                                         \
  {                                                                                       \
    const int iy = y_base + ky * p.dilation_h, ix = x_base + kx * p.dilation_w;          \
    if (tap0 + J < taps && uint(iy) < uint(p.in_h) && uint(ix) < uint(p.in_w))           \
      A += g * LOAD4(x[((img_row + iy) * p.in_w + ix) * Q + q]);                              \
    if (++kx == p.filter_w) { kx = 0; ++ky; }                                             \
  }
// The lanes' fixed-order sum of tap tap0 + J, written by lane 0. Uniform control flow.
#define REDUCE(J, A)                                                                      \
  {                                                                                       \
    const real4 v = lane_reduce(A, col, lane);                                            \
    if (lane == 0 && q < Q && tap0 + J < taps) partial[s * E4 + (tap0 + J) * Q + q] = v; \
  }

void main() {
  const int tid = int(gl_LocalInvocationID.x), col = tid % COLS, lane = tid / COLS;
  const int Q = p.out_c / 4;
  const int taps = p.filter_h * p.filter_w;
  const int E4 = taps * Q;  // E / 4
  const int K = p.batch * p.out_h * p.out_w;
  for (int tap0 = int(gl_WorkGroupID.z) * TAPS; tap0 < taps; tap0 += int(gl_NumWorkGroups.z) * TAPS)
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int ky0 = tap0 / p.filter_w, kx0 = tap0 % p.filter_w;
    const int k_begin = min(s * p.k_chunk, K);
    const int k_end = min(k_begin + p.k_chunk, K);
    for (int q0 = int(gl_WorkGroupID.x) * COLS; q0 < Q; q0 += int(gl_NumWorkGroups.x) * COLS) {
      const int q = q0 + col;
      real4 a0 = real4(0.0), a1 = real4(0.0), a2 = real4(0.0), a3 = real4(0.0), a4 = real4(0.0);
      real4 a5 = real4(0.0), a6 = real4(0.0), a7 = real4(0.0), a8 = real4(0.0);
      if (q < Q) {
        // (n, oy, ox) of k, decoded once, then stepped by LANES without dividing.
        const int k_first = k_begin + lane, out_w = max(p.out_w, 1), out_h = max(p.out_h, 1);
        int ox = k_first % out_w, oy = (k_first / out_w) % out_h, n = k_first / (out_w * out_h);
        for (int k = k_first; k < k_end; k += LANES) {
          const real4 g = LOAD4(dy[k * Q + q]);
          const int y_base = oy * p.stride_h - p.pad_top, x_base = ox * p.stride_w - p.pad_left;
          const int img_row = n * p.in_h;
          int ky = ky0, kx = kx0;
          TAP(0, a0) TAP(1, a1) TAP(2, a2) TAP(3, a3) TAP(4, a4) TAP(5, a5) TAP(6, a6) TAP(7, a7) TAP(8, a8)
          for (ox += LANES; ox >= out_w; ox -= out_w)
            if (++oy == out_h) { oy = 0; ++n; }
        }
      }
      REDUCE(0, a0) REDUCE(1, a1) REDUCE(2, a2) REDUCE(3, a3) REDUCE(4, a4)
      REDUCE(5, a5) REDUCE(6, a6) REDUCE(7, a7) REDUCE(8, a8)
    }
  }
}

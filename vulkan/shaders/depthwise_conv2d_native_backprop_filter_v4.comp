#version 450
// DepthwiseConv2dNativeBackpropFilter, vectorised partial pass (depth multiplier 1, channels a
// multiple of 4; ops/depthwise_conv2d_native_backprop_filter.cpp picks it):
//   dw[ky, kx, c] = sum_{n,oy,ox} dy[n, oy, ox, c] * x[n, oy*stride_h - pad_top + ky*dilation_h, ..., c]
// The same scheme as depthwise_conv2d_native_backprop_filter.comp with a channel quad per
// column: the sum over k = (n, oy, ox) is split in `splits` chunks of k_chunk (workgroup y =
// split s); split s writes partial[s * E + e], e = (ky*filter_w + kx)*out_c + c, E =
// filter_h*filter_w*out_c (a multiple of 4: real4 element (s * E + tap * out_c) / 4 + q), and
// sum_partials.comp adds the splits in order. A workgroup takes COLS consecutive quads
// (workgroup x) and TAPS taps (workgroup z); lane l walks positions k_begin + l, + LANES, ...,
// reads the dy quad once and multiplies it into the TAPS taps' x quads. lane_reduce adds the
// lanes in a fixed tree: deterministic.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/conv_push.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int COLS = 32;
layout(constant_id = 2) const int LANES = 8;
#define LANE_T real4
#include "common/lane_reduce.glsl"
#define TAPS 9

layout(std430, binding = 0) readonly buffer X { real4 x[]; };
layout(std430, binding = 1) readonly buffer DY { real4 dy[]; };
layout(std430, binding = 2) writeonly buffer Partial { real4 partial[]; };

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
      real4 acc[TAPS];
      for (int t = 0; t < TAPS; ++t) acc[t] = real4(0.0);
      if (q < Q) {
        // (n, oy, ox) of k, decoded once, then stepped by LANES without dividing.
        const int k_first = k_begin + lane, out_w = max(p.out_w, 1), out_h = max(p.out_h, 1);
        int ox = k_first % out_w, oy = (k_first / out_w) % out_h, n = k_first / (out_w * out_h);
        for (int k = k_first; k < k_end; k += LANES) {
          const real4 g = dy[k * Q + q];
          const int y_base = oy * p.stride_h - p.pad_top, x_base = ox * p.stride_w - p.pad_left;
          int ky = ky0, kx = kx0;
          for (int j = 0; j < TAPS; ++j) {  // constant trip count: unrolled, acc[] stays in registers
            const int iy = y_base + ky * p.dilation_h, ix = x_base + kx * p.dilation_w;
            if (tap0 + j < taps && iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w)
              acc[j] += g * x[((n * p.in_h + iy) * p.in_w + ix) * Q + q];
            if (++kx == p.filter_w) { kx = 0; ++ky; }
          }
          for (ox += LANES; ox >= out_w; ox -= out_w)
            if (++oy == out_h) { oy = 0; ++n; }
        }
      }
      for (int j = 0; j < TAPS; ++j) {  // uniform: lane_reduce has barriers
        const real4 v = lane_reduce(acc[j], col, lane);
        if (lane == 0 && q < Q && tap0 + j < taps) partial[s * E4 + (tap0 + j) * Q + q] = v;
      }
    }
  }
}

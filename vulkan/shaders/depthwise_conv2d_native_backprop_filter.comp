#version 450
// DepthwiseConv2dNativeBackpropFilter (ops.md 4.3, with dilation), partial pass:
//   dw[ky, kx, c, m] = sum_{n,oy,ox} dy[n, oy, ox, c*M + m] * x[n, oy*stride_h - pad_top + ky*dilation_h, ..., c]
// The sum over k = (n, oy, ox) is split in `splits` chunks of k_chunk (workgroup y = split s);
// split s writes partial[s * E + e], e = (ky*filter_w + kx)*out_c + oc, E = filter_h*filter_w*out_c,
// and sum_partials.comp adds the splits in order.
// A workgroup takes COLS consecutive output channels oc (workgroup x) and TAPS filter taps
// (workgroup z: taps [z*TAPS, z*TAPS + TAPS), then + the z count); lane l of a column walks positions k_begin + l,
// + LANES, ..., reads dy[k, oc] once and multiplies it into the TAPS taps' x values (coalesced
// over oc; the taps' x reads overlap in cache). lane_reduce adds the lanes per tap, fixed order.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant
#include "common/conv_push.glsl"
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int COLS = 32;
layout(constant_id = 2) const int LANES = 8;
#include "common/lane_reduce.glsl"
#define TAPS 9

layout(std430, binding = 0) readonly buffer X { stored x[]; };
layout(std430, binding = 1) readonly buffer DY { stored dy[]; };
layout(std430, binding = 2) writeonly buffer Partial { real partial[]; };

void main() {
  const int tid = int(gl_LocalInvocationID.x), col = tid % COLS, lane = tid / COLS;
  const int taps = p.filter_h * p.filter_w;
  const int E = taps * p.out_c;
  const int K = p.batch * p.out_h * p.out_w;
  for (int tap0 = int(gl_WorkGroupID.z) * TAPS; tap0 < taps; tap0 += int(gl_NumWorkGroups.z) * TAPS)
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int ky0 = tap0 / p.filter_w, kx0 = tap0 % p.filter_w;
    const int k_begin = min(s * p.k_chunk, K);
    const int k_end = min(k_begin + p.k_chunk, K);
    for (int oc0 = int(gl_WorkGroupID.x) * COLS; oc0 < p.out_c; oc0 += int(gl_NumWorkGroups.x) * COLS) {
      const int oc = oc0 + col;
      const int c = oc / p.depth_multiplier;
      real acc[TAPS];
      for (int t = 0; t < TAPS; ++t) acc[t] = 0.0;
      if (oc < p.out_c) {
        // (n, oy, ox) of k, decoded once, then stepped by LANES without dividing.
        const int k_first = k_begin + lane, out_w = max(p.out_w, 1), out_h = max(p.out_h, 1);
        int ox = k_first % out_w, oy = (k_first / out_w) % out_h, n = k_first / (out_w * out_h);
        for (int k = k_first; k < k_end; k += LANES) {
          const real g = LOAD(dy[k * p.out_c + oc]);
          const int y_base = oy * p.stride_h - p.pad_top, x_base = ox * p.stride_w - p.pad_left;
          int ky = ky0, kx = kx0;
          for (int j = 0; j < TAPS; ++j) {  // constant trip count: unrolled, acc[] stays in registers
            const int iy = y_base + ky * p.dilation_h, ix = x_base + kx * p.dilation_w;
            if (tap0 + j < taps && iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w)
              acc[j] += g * LOAD(x[((n * p.in_h + iy) * p.in_w + ix) * p.in_c + c]);
            if (++kx == p.filter_w) { kx = 0; ++ky; }
          }
          for (ox += LANES; ox >= out_w; ox -= out_w)
            if (++oy == out_h) { oy = 0; ++n; }
        }
      }
      for (int j = 0; j < TAPS; ++j) {  // uniform: lane_reduce has barriers
        const real v = lane_reduce(acc[j], col, lane);
        if (lane == 0 && oc < p.out_c && tap0 + j < taps) partial[s * E + (tap0 + j) * p.out_c + oc] = v;
      }
    }
  }
}

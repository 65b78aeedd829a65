#version 450
// DepthwiseConv2dNativeBackpropFilter (ops.md 4.3, with dilation), partial pass:
//   dw[ky, kx, c, m] = sum_{n,oy,ox} dy[n, oy, ox, c*M + m] * x[n, oy*stride_h - pad_top + ky*dilation_h, ..., c]
// The sum over k = (n, oy, ox) is split in `splits` chunks of k_chunk (workgroup y = split s);
// invocation e = (ky, kx, oc) of split s writes partial[s * E + e], E = filter_h*filter_w*out_c,
// and sum_partials.comp adds the splits in order. Neighbouring invocations take neighbouring oc,
// so the dy reads are contiguous.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/conv_push.glsl"
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer DY { real dy[]; };
layout(std430, binding = 2) writeonly buffer Partial { real partial[]; };

void main() {
  const int E = p.filter_h * p.filter_w * p.out_c;
  const int K = p.batch * p.out_h * p.out_w;
  const int stride = int(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  for (int s = int(gl_WorkGroupID.y); s < p.splits; s += int(gl_NumWorkGroups.y)) {
    const int k_begin = min(s * p.k_chunk, K);
    const int k_end = min(k_begin + p.k_chunk, K);
    for (int e = int(gl_GlobalInvocationID.x); e < E; e += stride) {
      const int oc = e % p.out_c;
      const int t = e / p.out_c;
      const int kx = t % p.filter_w, ky = t / p.filter_w;
      const int c = oc / p.depth_multiplier;
      // Walk k in order with running (n, oy, ox) counters instead of dividing each step.
      int ox = k_begin % p.out_w;
      int oy = (k_begin / p.out_w) % max(p.out_h, 1);
      int n = k_begin / max(p.out_w * p.out_h, 1);
      real acc = 0.0;
      for (int k = k_begin; k < k_end; ++k) {
        const int iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
        const int ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
        if (iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w)
          acc += dy[k * p.out_c + oc] * x[((n * p.in_h + iy) * p.in_w + ix) * p.in_c + c];
        if (++ox == p.out_w) {
          ox = 0;
          if (++oy == p.out_h) { oy = 0; ++n; }
        }
      }
      partial[s * E + e] = acc;
    }
  }
}

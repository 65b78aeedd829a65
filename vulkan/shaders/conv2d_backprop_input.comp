#version 450
// Conv2DBackpropInput (ops.md 2.4): dx as an implicit GEMM per group g and K chunk s
// (workgroup z = s * groups + g):
//   rows m = (n, iy, ix)           M = batch * in_h * in_w
//   cols c < filter_in_c           input channel g * filter_in_c + c
//   k = (ky, kx, o)                K = filter_h * filter_w * (out_c / groups), oc = g*OCg + o
//   A[m][k] = dy[n, oy, ox, oc] where iy = oy*stride_h - pad_top + ky*dilation_h, i.e.
//             oy = (iy + pad_top - ky*dilation_h) / stride_h when that is an exact, in-range
//             quotient; 0 otherwise (the positions the forward window never maps to).
//   B[k][c] = w[ky, kx, c, oc]
// Trap: the numerator can be negative; test < 0 before % and /, which truncate toward zero.
// K split (p.splits > 1; the host's GRADRT_VULKAN_INPUT=split, float32/float64 only): chunk s
// sums k in [s * k_chunk, (s + 1) * k_chunk) and writes its own partial dx at s * (dx elements)
// of binding 2 (then a scratch buffer of splits partials: `stored` is `real` in those variants);
// sum_partials.comp adds them in chunk order. One split: binding 2 is dx, s = 0.
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"  // GRADRT_F16: float16 storage variant (loads widened into the float tiles)
#include "common/conv_push.glsl"

layout(std430, binding = 0) readonly buffer Wt { stored w[]; };
layout(std430, binding = 1) readonly buffer DY { stored dy[]; };
layout(std430, binding = 2) writeonly buffer DX { stored dx[]; };

const bool A_K_FASTEST = true;    // dy is contiguous in oc
const bool B_N_FASTEST = false;   // w[ky,kx,c,oc] is contiguous in oc, i.e. in k

int ocg() { return p.out_c / p.groups; }
int gemm_rows() { return p.batch * p.in_h * p.in_w; }
int gemm_cols() { return p.filter_in_c; }
void gemm_k_range(int z, out int k_begin, out int k_end) {
  const int K = p.filter_h * p.filter_w * ocg();
  if (p.splits <= 1) {
    k_begin = 0;
    k_end = K;
    return;
  }
  k_begin = min((z / p.groups) * p.k_chunk, K);
  k_end = min(k_begin + p.k_chunk, K);
}

// row m = (n, iy, ix): (offset of image n and group g in dy, iy + pad_top, ix + pad_left)
ivec4 row_info(int z, int m) {
  const int g = z % p.groups;
  const int ix = m % p.in_w;
  const int t = m / p.in_w;
  const int iy = t % p.in_h, n = t / p.in_h;
  return ivec4(n * p.out_h * p.out_w * p.out_c + g * ocg(), iy + p.pad_top, ix + p.pad_left, 0);
}

// k = (ky, kx, o): (ky*dilation_h, kx*dilation_w, o, ky*filter_w + kx)
ivec4 k_info(int z, int k) {
  const int o = k % ocg();
  const int kk = k / ocg();
  return ivec4((kk / p.filter_w) * p.dilation_h, (kk % p.filter_w) * p.dilation_w, o, kk);
}

real load_a(int z, ivec4 row, ivec4 kin, int m, int k) {
  const int ty = row.y - kin.x, tx = row.z - kin.y;  // = oy*stride_h when a window maps here
  if (ty < 0 || tx < 0) return 0.0;
  int oy = ty, ox = tx;
  if (p.stride_h != 1) {
    if (ty % p.stride_h != 0) return 0.0;
    oy = ty / p.stride_h;
  }
  if (p.stride_w != 1) {
    if (tx % p.stride_w != 0) return 0.0;
    ox = tx / p.stride_w;
  }
  if (oy >= p.out_h || ox >= p.out_w) return 0.0;
  return LOAD(dy[row.x + (oy * p.out_w + ox) * p.out_c + kin.z]);
}

real load_b(int z, ivec4 kin, int k, int c) {
  return LOAD(w[(kin.w * p.filter_in_c + c) * p.out_c + (z % p.groups) * ocg() + kin.z]);
}

void store_c(int z, int m, int c, real v) {
  const int s = z / p.groups, g = z % p.groups;
  dx[s * gemm_rows() * p.in_c + m * p.in_c + g * p.filter_in_c + c] = STORE(v);
}

#include "common/implicit_gemm.glsl"

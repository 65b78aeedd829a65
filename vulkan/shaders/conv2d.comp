#version 450
// Conv2D forward (ops.md 1.5) as an implicit GEMM per group g (= workgroup z):
//   rows m = (n, oy, ox)          M = batch * out_h * out_w
//   cols j < out_c / groups       output channel oc = g * (out_c / groups) + j
//   k = (ky, kx, f)               K = filter_h * filter_w * filter_in_c
//   A[m][k] = x[n, oy*stride_h - pad_top + ky*dilation_h, ox*..., g*filter_in_c + f] (0 outside)
//   B[k][j] = w[ky, kx, f, oc]   (HWIO: flat index k * out_c + oc, since k already is (ky,kx,f))
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/conv_push.glsl"

layout(std430, binding = 0) readonly buffer X { real x[]; };
layout(std430, binding = 1) readonly buffer Wt { real w[]; };
layout(std430, binding = 2) writeonly buffer Y { real y[]; };

const bool A_K_FASTEST = true;   // x is contiguous in f
const bool B_N_FASTEST = true;   // w is contiguous in oc

int gemm_rows() { return p.batch * p.out_h * p.out_w; }
int gemm_cols() { return p.out_c / p.groups; }
void gemm_k_range(int z, out int k_begin, out int k_end) {
  k_begin = 0;
  k_end = p.filter_h * p.filter_w * p.filter_in_c;
}

// row m = (n, oy, ox): (offset of image n and group g in x, oy*stride_h - pad_top, ox*stride_w - pad_left)
ivec4 row_info(int g, int m) {
  const int ox = m % p.out_w;
  const int t = m / p.out_w;
  const int oy = t % p.out_h, n = t / p.out_h;
  return ivec4(n * p.in_h * p.in_w * p.in_c + g * p.filter_in_c, oy * p.stride_h - p.pad_top,
               ox * p.stride_w - p.pad_left, 0);
}

// k = (ky, kx, f): (ky*dilation_h, kx*dilation_w, f)
ivec4 k_info(int g, int k) {
  const int f = k % p.filter_in_c;
  const int t = k / p.filter_in_c;
  return ivec4((t / p.filter_w) * p.dilation_h, (t % p.filter_w) * p.dilation_w, f, 0);
}

real load_a(int g, ivec4 row, ivec4 kin, int m, int k) {
  const int iy = row.y + kin.x, ix = row.z + kin.y;
  if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) return 0.0;
  return x[row.x + (iy * p.in_w + ix) * p.in_c + kin.z];
}

real load_b(int g, ivec4 kin, int k, int j) { return w[k * p.out_c + g * (p.out_c / p.groups) + j]; }

void store_c(int g, int m, int j, real v) { y[m * p.out_c + g * (p.out_c / p.groups) + j] = v; }

#include "common/implicit_gemm.glsl"

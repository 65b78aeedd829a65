#version 450
// Conv2DBackpropFilter (ops.md 3.3): dw as an implicit GEMM, split along k:
//   rows m = (ky, kx, f)           M = filter_h * filter_w * filter_in_c
//   cols j < out_c / groups        oc = g * OCg + j
//   k = (n, oy, ox)                K = batch * out_h * out_w, split into `splits` chunks of
//                                  k_chunk; workgroup z = s * groups + g
//   A[m][k] = x[n, oy*stride_h - pad_top + ky*dilation_h, ..., g*filter_in_c + f] (0 outside)
//   B[k][j] = dy[n, oy, ox, oc]
// Each split writes its own partial dw (partial[s][ky][kx][f][oc]); sum_partials.comp adds
// them in split order. No atomics, so the result is the same on every run.
// GRADRT_F16 (float16 storage): x and dy are binary16, widened as they are loaded into the float
// tiles; the partials stay float and sum_partials' _f16 variant rounds dw once (even for one split).
#extension GL_GOOGLE_include_directive : require
#include "common/real.glsl"
#include "common/storage.glsl"
#include "common/conv_push.glsl"

layout(std430, binding = 0) readonly buffer X { stored x[]; };
layout(std430, binding = 1) readonly buffer DY { stored dy[]; };
layout(std430, binding = 2) writeonly buffer Partial { real partial[]; };

const bool A_K_FASTEST = false;   // x is contiguous in f, i.e. in m
const bool B_N_FASTEST = true;    // dy is contiguous in oc

int ocg() { return p.out_c / p.groups; }
int gemm_rows() { return p.filter_h * p.filter_w * p.filter_in_c; }
int gemm_cols() { return ocg(); }
void gemm_k_range(int z, out int k_begin, out int k_end) {
  const int s = z / p.groups;
  const int K = p.batch * p.out_h * p.out_w;
  k_begin = min(s * p.k_chunk, K);
  k_end = min(k_begin + p.k_chunk, K);
}

// row m = (ky, kx, f): (ky*dilation_h, kx*dilation_w, channel g*filter_in_c + f)
ivec4 row_info(int z, int m) {
  const int f = m % p.filter_in_c;
  const int t = m / p.filter_in_c;
  return ivec4((t / p.filter_w) * p.dilation_h, (t % p.filter_w) * p.dilation_w,
               (z % p.groups) * p.filter_in_c + f, 0);
}

// k = (n, oy, ox): (offset of image n in x, oy*stride_h - pad_top, ox*stride_w - pad_left)
ivec4 k_info(int z, int k) {
  const int ox = k % p.out_w;
  const int t = k / p.out_w;
  const int oy = t % p.out_h, n = t / p.out_h;
  return ivec4(n * p.in_h * p.in_w * p.in_c, oy * p.stride_h - p.pad_top, ox * p.stride_w - p.pad_left, 0);
}

real load_a(int z, ivec4 row, ivec4 kin, int m, int k) {
  const int iy = kin.y + row.x, ix = kin.z + row.y;
  if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) return 0.0;
  return LOAD(x[kin.x + (iy * p.in_w + ix) * p.in_c + row.z]);
}

real load_b(int z, ivec4 kin, int k, int j) { return LOAD(dy[k * p.out_c + (z % p.groups) * ocg() + j]); }

void store_c(int z, int m, int j, real v) {
  const int s = z / p.groups, g = z % p.groups;
  const int w_elements = gemm_rows() * p.out_c;
  partial[s * w_elements + m * p.out_c + g * ocg() + j] = v;
}

#include "common/implicit_gemm.glsl"

#version 450
// Conv2DBackpropInput for stride > 1, dilation 1 (GRADRT_VULKAN_INPUT=phase): one implicit GEMM per
// parity class (ry, rx) and group g, workgroup z = (ry * stride_w + rx) * groups + g.
// A dx row iy receives dy[oy] through tap ky only when iy + pad_top - ky = oy * stride_h, i.e. only
// taps ky = ry (mod stride_h) with ry = (iy + pad_top) % stride_h. conv2d_backprop_input.comp runs every
// tap and loads zeros for the others (3/4 of the work at stride 2); here the class's rows run only
// its taps ky = ry + jy * stride_h, jy < kys = ceil((filter_h - ry) / stride_h), and
// oy = qy - jy with qy = (iy + pad_top - ry) / stride_h (exact: no division per load). Same for x.
//   rows m = (n, ty, tx): iy = iy0 + ty * stride_h, iy0 = the first iy >= 0 of class ry
//   k = (jy, jx, o), in the order of conv2d_backprop_input.comp's (ky, kx, o) restricted to the
//   class's taps: each dx sums the same nonzero products in the same order (the same bits for
//   finite data; the zero products it skips cannot change a sum).
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
int cls(int z) { return z / p.groups; }
int ry(int z) { return cls(z) / p.stride_w; }
int rx(int z) { return cls(z) % p.stride_w; }
// the first row (column) >= 0 of class r, and how many of the image's rows (columns) it has.
// Trap: no % of a negative number. GLSL leaves it undefined; the H200's driver gave (0 - 2) % 3
// the unsigned result (2^32 - 2) % 3 = 2, not 1: classes overlapped at stride 3 (right by luck at
// stride 2, a divisor of 2^32), lavapipe computed it as C does.
int first(int r, int pad, int s) { return (r + s - pad % s) % s; }
int count(int r, int pad, int s, int size) {
  const int f = first(r, pad, s);
  return f < size ? (size - 1 - f) / s + 1 : 0;
}
// taps of class r: ky = r + j * s, j < taps(r)
int taps(int r, int s, int size) { return r < size ? (size - 1 - r) / s + 1 : 0; }

#define GEMM_ROWS_PER_Z
int gemm_rows_z(int z) {
  return p.batch * count(ry(z), p.pad_top, p.stride_h, p.in_h) * count(rx(z), p.pad_left, p.stride_w, p.in_w);
}
int gemm_cols() { return p.filter_in_c; }
void gemm_k_range(int z, out int k_begin, out int k_end) {
  k_begin = 0;
  k_end = taps(ry(z), p.stride_h, p.filter_h) * taps(rx(z), p.stride_w, p.filter_w) * ocg();
}

// The dx position of row m of class z: (n, iy, ix).
ivec3 position(int z, int m) {
  const int cx = count(rx(z), p.pad_left, p.stride_w, p.in_w);
  const int cy = count(ry(z), p.pad_top, p.stride_h, p.in_h);
  const int tx = m % cx, t = m / cx;
  const int ty = t % cy, n = t / cy;
  return ivec3(n, first(ry(z), p.pad_top, p.stride_h) + ty * p.stride_h,
               first(rx(z), p.pad_left, p.stride_w) + tx * p.stride_w);
}

// row m: (offset of image n and group g in dy, qy, qx)
ivec4 row_info(int z, int m) {
  const ivec3 q = position(z, m);
  const int g = z % p.groups;
  return ivec4(q.x * p.out_h * p.out_w * p.out_c + g * ocg(), (q.y + p.pad_top - ry(z)) / p.stride_h,
               (q.z + p.pad_left - rx(z)) / p.stride_w, 0);
}

// k = (jy, jx, o): (jy, jx, o, ky * filter_w + kx)
ivec4 k_info(int z, int k) {
  const int o = k % ocg();
  const int j = k / ocg();
  const int kxs = taps(rx(z), p.stride_w, p.filter_w);
  const int jy = j / kxs, jx = j % kxs;
  return ivec4(jy, jx, o, (ry(z) + jy * p.stride_h) * p.filter_w + rx(z) + jx * p.stride_w);
}

real load_a(int z, ivec4 row, ivec4 kin, int m, int k) {
  const int oy = row.y - kin.x, ox = row.z - kin.y;
  if (oy < 0 || ox < 0 || oy >= p.out_h || ox >= p.out_w) return 0.0;
  return LOAD(dy[row.x + (oy * p.out_w + ox) * p.out_c + kin.z]);
}

real load_b(int z, ivec4 kin, int k, int c) {
  return LOAD(w[(kin.w * p.filter_in_c + c) * p.out_c + (z % p.groups) * ocg() + kin.z]);
}

void store_c(int z, int m, int c, real v) {
  const ivec3 q = position(z, m);
  dx[((q.x * p.in_h + q.y) * p.in_w + q.z) * p.in_c + (z % p.groups) * p.filter_in_c + c] = STORE(v);
}

#include "common/implicit_gemm.glsl"

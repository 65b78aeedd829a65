// DepthwiseConv2dNative forward (TF: input = x, filter = w [FH,FW,C,M], output = y):
//   y[n,oy,ox,c*M+m] = sum_{ky,kx} x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, c] * w[ky,kx,c,m]
// Channels in the vector lanes (M == 1: x, w and y rows are all contiguous over c); one
// output row (n, oy) per work item, taps outside x skipped. M > 1 takes a plain loop.
#pragma once

#include "common.h"
#include "depthwise_rows.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
size_t depthwise_conv2d_native_workspace(int threads, const ConvTuning&, const ConvParams& p) {
  return dw_tap_tables<T>(p.filter_h * p.filter_w).total(threads);
}

template <class T, class Arch>
void depthwise_conv2d_native(const Exec& exec, const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t C = p.in_c, M = p.depth_multiplier, OC = C * M, taps = p.filter_h * p.filter_w;
  const int64_t rows = p.batch * p.out_h;
  if (rows == 0 || p.out_w == 0 || OC == 0) return;
  Arena scratch(exec);
  ThreadParts parts(scratch, dw_tap_tables<T>(taps).per_thread, exec.threads);
  par_guided(exec, rows, 1, [&](int64_t r0, int64_t r1) {
    Arena mine = parts.mine();
    const auto [src, wt, off] = take_tap_tables<T>(mine, taps);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      int64_t nt = 0;  // taps whose row iy is inside x; column validity is dw_row's business
      for (int64_t ky = 0; ky < p.filter_h; ++ky) {
        const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
        if (iy < 0 || iy >= p.in_h) continue;
        for (int64_t kx = 0; kx < p.filter_w; ++kx) {
          src[nt] = x + (n * p.in_h + iy) * p.in_w * C;
          off[nt] = kx * p.dilation_w - p.pad_left;  // ix = ox*sw + off
          wt[nt] = w + (ky * p.filter_w + kx) * OC;
          ++nt;
        }
      }
      T* out = y + r * p.out_w * OC;
      if (M == 1) {
        dw_row<T, Arch>(p.out_w, nt, src, off, wt, p.stride_w, p.in_w, C, out, 1);
      } else {
        for (int64_t ox = 0; ox < p.out_w; ++ox)
          for (int64_t oc = 0; oc < OC; ++oc) {
            T acc = T(0);
            for (int64_t t = 0; t < nt; ++t) {
              const int64_t ix = ox * p.stride_w + off[t];
              if (ix >= 0 && ix < p.in_w) acc += src[t][ix * C + oc / M] * wt[t][oc];
            }
            out[ox * OC + oc] = acc;
          }
      }
    }
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

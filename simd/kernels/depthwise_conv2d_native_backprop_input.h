// DepthwiseConv2dNativeBackpropInput (TF: filter = w [FH,FW,C,M], out_backprop = dy, output = dx):
//   dx[n,iy,ix,c] = sum_m sum_{ky,kx: oy*sh - pt + ky*dh = iy, ox*sw - pl + kx*dw = ix} dy[n,oy,ox,c*M+m] * w[ky,kx,c,m]
// Gathered per input pixel: tap ky contributes when sh divides iy + pt - ky*dh and the
// quotient oy is inside dy (same for kx). One dx row (n, iy) per work item, channels in
// the lanes (M == 1); M > 1 takes a plain loop over m.
#pragma once

#include "common.h"
#include "depthwise_rows.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// The dy row that filter row ky reaches from dx row iy (sh divides iy + pt - ky*dh and the
// quotient is inside dy), or -1.
inline int64_t dx_row_oy(const ConvParams& p, int64_t iy, int64_t ky) {
  const int64_t ny = iy + p.pad_top - ky * p.dilation_h;
  if (floormod(ny, p.stride_h) != 0) return -1;
  const int64_t oy = floordiv(ny, p.stride_h);
  return oy >= 0 && oy < p.out_h ? oy : -1;
}

// The filter rows ky that reach dx row iy of image n (stride_h divides iy + pt - ky*dh and
// oy is inside dy), ascending: their dy rows and w + ky*FW*C for the first three; returns
// how many there are (> 3: not a dwx2 row).
template <class T>
int dwx2_filter_rows(const ConvParams& p, int64_t n, int64_t iy, const T* dy, const T* w, const T* rows[3],
                     const T* wr[3]) {
  const int64_t C = p.in_c;
  int R = 0;
  for (int64_t ky = 0; ky < p.filter_h; ++ky) {
    const int64_t oy = dx_row_oy(p, iy, ky);
    if (oy < 0) continue;
    if (R < 3) {
      rows[R] = dy + (n * p.out_h + oy) * p.out_w * C;
      wr[R] = w + ky * p.filter_w * C;
    }
    ++R;
  }
  return R;
}

template <class T, class Arch>
size_t depthwise_conv2d_native_backprop_input_workspace(int threads, const ConvTuning&, const ConvParams& p) {
  return dw_tap_tables<T>(p.filter_h * p.filter_w).total(threads);
}

template <class T, class Arch>
void depthwise_conv2d_native_backprop_input(const Exec& exec, const ConvTuning& tuning, const ConvParams& p,
                                            const T* w, const T* dy, T* dx) {
  const int64_t C = p.in_c, M = p.depth_multiplier, OC = C * M, taps = p.filter_h * p.filter_w;
  const int64_t rows = p.batch * p.in_h;
  if (rows == 0 || p.in_w == 0 || C == 0) return;
  // The dwx2 rows' dx with non-temporal stores from ConvTuning::dw_input_stream_bytes of dx, where
  // the unit has them and every dx row starts on a vector (dx aligned, C whole vectors).
  constexpr int64_t vb = int64_t(sizeof(T)) * Vec<T, Arch>::width;
  const bool stream = bn_can_stream<T, Arch>() && tuning.dw_input_stream_bytes > 0 &&
                      p.x_elements() * int64_t(sizeof(T)) >= tuning.dw_input_stream_bytes &&
                      reinterpret_cast<uintptr_t>(dx) % vb == 0 && C * int64_t(sizeof(T)) % vb == 0;
  // One contiguous run of rows per thread (no reduction: the cut may depend on threads):
  // each thread writes the same part of dx and reads the same dy rows on every call, so at
  // batch 1 they stay in its own L2 instead of moving between cores' caches.
  Arena scratch(exec);
  ThreadParts parts(scratch, dw_tap_tables<T>(taps).per_thread, exec.threads);
  par(exec, rows, (rows + exec.threads - 1) / exec.threads, [&](int64_t r0, int64_t r1) {
    Arena mine = parts.mine();
    const auto [src, wt, off] = take_tap_tables<T>(mine, taps);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / p.in_h, iy = r % p.in_h;
      // Columns in phase classes ix = px + j*sw: tap kx contributes when sw divides
      // px + pl - kx*dw, from ox = j + (px + pl - kx*dw)/sw, a stride-1 walk along dy.
      // Stride 2 x 3 taps along x (pad_left 0, in_w == 2*out_w: TF's SAME on an even width):
      // both column phases in one pass (the unit's DwKernels::dwx2: dwx2_row; WebAssembly:
      // dwx2_wasm).
      if (M == 1 && p.stride_w == 2 && p.filter_w == 3 && p.dilation_w == 1 && p.pad_left == 0 &&
          p.in_w == 2 * p.out_w) {
        const T* rows[3];
        const T* wr[3];
        const int R = dwx2_filter_rows(p, n, iy, dy, w, rows, wr);
        if (DwKernels<T, Arch>::dwx2(R, rows, wr, p.out_w, C, dx + r * p.in_w * C, stream)) continue;
      }
      for (int64_t px = 0; px < imin(p.stride_w, p.in_w); ++px) {
        int64_t nt = 0;
        for (int64_t ky = 0; ky < p.filter_h; ++ky) {
          const int64_t oy = dx_row_oy(p, iy, ky);
          if (oy < 0) continue;
          for (int64_t kx = 0; kx < p.filter_w; ++kx) {
            const int64_t nx = px + p.pad_left - kx * p.dilation_w;
            if (floormod(nx, p.stride_w) != 0) continue;
            src[nt] = dy + (n * p.out_h + oy) * p.out_w * OC;
            off[nt] = floordiv(nx, p.stride_w);
            wt[nt] = w + (ky * p.filter_w + kx) * OC;
            ++nt;
          }
        }
        const int64_t nj = (p.in_w - px + p.stride_w - 1) / p.stride_w;
        T* out = dx + (r * p.in_w + px) * C;
        if (M == 1) {
          dw_row<T, Arch>(nj, nt, src, off, wt, 1, p.out_w, C, out, p.stride_w);
        } else {
          for (int64_t j = 0; j < nj; ++j)
            for (int64_t c = 0; c < C; ++c) {
              T acc = T(0);
              for (int64_t t = 0; t < nt; ++t) {
                const int64_t ox = j + off[t];
                if (ox < 0 || ox >= p.out_w) continue;
                for (int64_t m = 0; m < M; ++m) acc += src[t][ox * OC + c * M + m] * wt[t][c * M + m];
              }
              out[j * p.stride_w * C + c] = acc;
            }
        }
      }
    }
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

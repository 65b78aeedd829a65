// Conv2DBackpropInput (TF: filter = w, out_backprop = dy, output = dx):
//   dx[n,iy,ix,c] = sum over (ky,kx,oc) with iy = oy*sh - pt + ky*dh, ix = ox*sw - pl + kx*dw
//                   of dy[n,oy,ox,oc] * w[ky,kx,c - g*fic,oc],   g = c / fic, oc in group g.
// Gathered per input pixel (no col2im scatter): for tap ky the source row is
// oy = (iy + pt - ky*dh) / sh, which exists only when sh divides iy + pt - ky*dh. That
// divisibility depends only on iy mod sh, so the input pixels are split into sh*sw phase
// classes (py, px); inside a class the valid taps are fixed, and the work is a GEMM with
// M = pixels of the class, N = fic, K = (valid taps) * ocg, A = dy rows read in place
// through pointers (zeros outside dy), B = w transposed per tap into NR-wide panels.
// A class with no valid tap (stride larger than the dilated filter) writes zeros.
#pragma once

#include "gemm.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
void conv2d_backprop_input(const Exec& exec, const ConvParams& p, const T* w, const T* dy, T* dx) {
  using G = Gemm<T, Arch, kMR, kNRV>;
  constexpr int64_t MR = kMR, NR = G::NR;
  const int64_t taps = p.filter_h * p.filter_w, fic = p.filter_in_c, groups = p.groups;
  const int64_t ocg = p.out_c / groups, np = (fic + NR - 1) / NR;
  if (p.x_elements() == 0) return;

  // bpack[g][j][t][oc][NR] = w[t][j*NR + (0..NR)][g*ocg + oc]: the transposed filter tap.
  const int64_t panel = taps * ocg * NR;
  T* bpack = static_cast<T*>(workspace(0, sizeof(T) * (groups * np * panel + 1)));
  // Packed in parallel, one (g, j, t) block per item; w rows are read contiguously.
  par(exec, groups * np * taps, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t g = b / (np * taps), j = (b / taps) % np, t = b % taps;
      const int64_t nr = imin(NR, fic - j * NR);
      T* dst = bpack + (g * np + j) * panel + t * ocg * NR;
      for (int64_t cc = 0; cc < NR; ++cc) {
        if (cc < nr) {
          const T* src = w + (t * fic + j * NR + cc) * p.out_c + g * ocg;
          for (int64_t oc = 0; oc < ocg; ++oc) dst[oc * NR + cc] = src[oc];
        } else {
          for (int64_t oc = 0; oc < ocg; ++oc) dst[oc * NR + cc] = T(0);
        }
      }
    }
  });

  for (int64_t py = 0; py < imin(p.stride_h, p.in_h); ++py)
    for (int64_t px = 0; px < imin(p.stride_w, p.in_w); ++px) {
      // Valid taps of this class: ky with sh | (py + pt - ky*dh).
      int64_t kys[64], kxs[64];  // larger filters use workspace slots 4 and 5 instead
      int64_t nky = 0, nkx = 0;
      int64_t* ky_list = p.filter_h <= 64 ? kys : static_cast<int64_t*>(workspace(4, sizeof(int64_t) * p.filter_h));
      int64_t* kx_list = p.filter_w <= 64 ? kxs : static_cast<int64_t*>(workspace(5, sizeof(int64_t) * p.filter_w));
      for (int64_t ky = 0; ky < p.filter_h; ++ky)
        if (floormod(py + p.pad_top - ky * p.dilation_h, p.stride_h) == 0) ky_list[nky++] = ky;
      for (int64_t kx = 0; kx < p.filter_w; ++kx)
        if (floormod(px + p.pad_left - kx * p.dilation_w, p.stride_w) == 0) kx_list[nkx++] = kx;
      const int64_t ctaps = nky * nkx;
      const int64_t ch = (p.in_h - py + p.stride_h - 1) / p.stride_h;  // rows iy = py + a*sh
      const int64_t cw = (p.in_w - px + p.stride_w - 1) / p.stride_w;
      const int64_t npix = p.batch * ch * cw;
      const int64_t tiles = (npix + MR - 1) / MR;
      par(exec, tiles, balance_grain(exec, tiles), [&](int64_t t0, int64_t t1) {
        int64_t* off = static_cast<int64_t*>(workspace(1, sizeof(int64_t) * (ctaps + 1) * MR));
        const T** a = static_cast<const T**>(workspace(2, sizeof(T*) * (ctaps + 1) * MR));
        const T** b = static_cast<const T**>(workspace(3, sizeof(T*) * (ctaps + 1)));
        const T* zero = static_cast<const T*>(zeros(sizeof(T) * (ocg + 1)));
        for (int64_t tile = t0; tile < t1; ++tile) {
          const int64_t m0 = tile * MR, mr = imin(MR, npix - m0);
          T* c[MR];
          for (int64_t i = 0; i < MR; ++i) {
            const int64_t m = m0 + imin(i, mr - 1);
            const int64_t ix = px + (m % cw) * p.stride_w, iy = py + ((m / cw) % ch) * p.stride_h;
            const int64_t n = m / (cw * ch);
            c[i] = dx + ((n * p.in_h + iy) * p.in_w + ix) * p.in_c;
            for (int64_t u = 0; u < nky; ++u) {
              // Exact division: the class guarantees divisibility (numerator may be negative).
              const int64_t oy = floordiv(iy + p.pad_top - ky_list[u] * p.dilation_h, p.stride_h);
              for (int64_t v = 0; v < nkx; ++v) {
                const int64_t ox = floordiv(ix + p.pad_left - kx_list[v] * p.dilation_w, p.stride_w);
                const bool in = i < mr && oy >= 0 && oy < p.out_h && ox >= 0 && ox < p.out_w;
                off[(u * nkx + v) * MR + i] = in ? ((n * p.out_h + oy) * p.out_w + ox) * p.out_c : -1;
              }
            }
          }
          for (int64_t g = 0; g < groups; ++g) {
            int64_t nt = 0;
            for (int64_t t = 0; t < ctaps; ++t) {
              bool any = false;
              for (int64_t i = 0; i < MR; ++i) any |= off[t * MR + i] >= 0;
              if (!any) continue;
              for (int64_t i = 0; i < MR; ++i)
                a[nt * MR + i] = off[t * MR + i] >= 0 ? dy + off[t * MR + i] + g * ocg : zero;
              const int64_t tap = ky_list[t / nkx] * p.filter_w + kx_list[t % nkx];
              b[nt] = bpack + g * np * panel + tap * ocg * NR;
              ++nt;
            }
            for (int64_t j = 0; j < np; ++j) {
              T* cj[MR];
              for (int64_t i = 0; i < MR; ++i) cj[i] = c[i] + g * fic + j * NR;
              if (j > 0)
                for (int64_t t = 0; t < nt; ++t) b[t] += panel;
              G::rows(nt, ocg, a, b, cj, mr, imin(NR, fic - j * NR));
            }
          }
        }
      });
    }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// Conv2D forward, NHWC x, HWIO w (TF: input, filter, output):
//   y[n,oy,ox,oc] = sum_{ky,kx,f} x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, g*fic + f] * w[ky,kx,f,oc]
// with g = oc / ocg. As a GEMM per group: M = output pixels, N = ocg, K = taps * fic, with
// A read in place through row pointers (one per pixel and tap; padding points at zeros) and
// B = w packed into NR-wide panels once per call (a workspace the size of the filter).
#pragma once

#include "common.h"
#include "../ukernels/gemm.h"
#include "../ukernels/pack.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Scratch with tile MR x NR: the packed filter and a zero row (shared); per thread, a tile's
// offsets and row pointers per tap.
template <class T>
ScratchSize conv2d_scratch(const ConvParams& p, int64_t MR, int64_t NR) {
  const int64_t taps = p.filter_h * p.filter_w, ocg = p.out_c / imax(1, p.groups), np = (ocg + NR - 1) / NR;
  return ScratchSize{}
      .add(line_bytes<T>(p.groups * np * taps * p.filter_in_c * NR + 1))
      .add(line_bytes<T>(p.filter_in_c + 1))
      .add_per_thread(line_bytes<int64_t>(taps * MR))
      .add_per_thread(line_bytes<const T*>(taps * MR))
      .add_per_thread(line_bytes<const T*>(taps + 1));
}

// With the GEMM tile MR x NRV vectors.
template <class T, class Arch, int MR_, int NRV>
void conv2d_tiled(const Exec& exec, const ConvParams& p, const T* x, const T* w, T* y) {
  using G = Gemm<T, Arch, MR_, NRV>;
  constexpr int64_t MR = MR_, NR = G::NR;
  const int64_t taps = p.filter_h * p.filter_w, fic = p.filter_in_c, groups = p.groups;
  const int64_t ocg = p.out_c / groups, np = (ocg + NR - 1) / NR;
  const int64_t npix = p.batch * p.out_h * p.out_w;
  if (npix == 0 || p.out_c == 0) return;

  // bpack[g][j][t][f][NR] = w[t][f][g*ocg + j*NR + (0..NR)], zero past ocg.
  const int64_t panel = taps * fic * NR;
  Arena scratch(exec);  // sizes: conv2d_scratch
  T* bpack = scratch.take<T>(groups * np * panel + 1);
  const T* zero = scratch.take_zeros<T>(fic + 1);
  ThreadParts parts(scratch, conv2d_scratch<T>(p, MR, NR).per_thread, exec.threads);
  par(exec, groups * np * taps, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t g = b / (np * taps), j = (b / taps) % np, t = b % taps;
      pack_panel(w + t * fic * p.out_c + g * ocg + j * NR, p.out_c, fic, imin(NR, ocg - j * NR), NR,
                 bpack + (g * np + j) * panel + t * fic * NR);
    }
  });

  const int64_t tiles = (npix + MR - 1) / MR;
  par_guided(exec, tiles, 1, [&](int64_t t0, int64_t t1) {
    // Per tile: off[t*MR + i] = x offset of pixel i under tap t, or -1 for padding.
    Arena mine = parts.mine();
    int64_t* off = mine.take<int64_t>(taps * MR);
    const T** a = mine.take<const T*>(taps * MR);
    const T** b = mine.take<const T*>(taps + 1);
    for (int64_t tile = t0; tile < t1; ++tile) {
      const int64_t m0 = tile * MR, mr = imin(MR, npix - m0);
      T* c[MR];
      for (int64_t i = 0; i < MR; ++i) {
        const int64_t m = m0 + imin(i, mr - 1);
        const int64_t ox = m % p.out_w, oy = (m / p.out_w) % p.out_h, n = m / (p.out_w * p.out_h);
        c[i] = y + m * p.out_c;
        for (int64_t ky = 0; ky < p.filter_h; ++ky) {
          const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
          for (int64_t kx = 0; kx < p.filter_w; ++kx) {
            const int64_t ix = ox * p.stride_w - p.pad_left + kx * p.dilation_w;
            const bool in = i < mr && iy >= 0 && iy < p.in_h && ix >= 0 && ix < p.in_w;
            off[(ky * p.filter_w + kx) * MR + i] = in ? ((n * p.in_h + iy) * p.in_w + ix) * p.in_c : -1;
          }
        }
      }
      for (int64_t g = 0; g < groups; ++g) {
        // Taps where every row is padding are dropped (with their B rows).
        int64_t nt = 0;
        for (int64_t t = 0; t < taps; ++t) {
          bool any = false;
          for (int64_t i = 0; i < MR; ++i) any |= off[t * MR + i] >= 0;
          if (!any) continue;
          for (int64_t i = 0; i < MR; ++i)
            a[nt * MR + i] = off[t * MR + i] >= 0 ? x + off[t * MR + i] + g * fic : zero;
          b[nt] = bpack + g * np * panel + t * fic * NR;  // panel j added below
          ++nt;
        }
        for (int64_t j = 0; j < np; ++j) {
          T* cj[MR];
          for (int64_t i = 0; i < MR; ++i) cj[i] = c[i] + g * ocg + j * NR;
          if (j > 0)
            for (int64_t t = 0; t < nt; ++t) b[t] += panel;
          G::rows(nt, fic, a, MR, b, cj, mr, imin(NR, ocg - j * NR));
        }
      }
    }
  });
}

template <class T, class Arch>
size_t conv2d_workspace(int threads, const ConvTuning& tuning, const ConvParams& p) {
  size_t bytes = 0;
  with_gemm_tile<kTiles>(tuning.conv2d, [&]<int MR, int NRV>() {
    bytes = conv2d_scratch<T>(p, MR, Gemm<T, Arch, MR, NRV>::NR).total(threads);
  });
  return bytes;
}

template <class T, class Arch>
void conv2d(const Exec& exec, const ConvTuning& tuning, const ConvParams& p, const T* x, const T* w, T* y) {
  with_gemm_tile<kTiles>(tuning.conv2d, [&]<int MR, int NRV>() { conv2d_tiled<T, Arch, MR, NRV>(exec, p, x, w, y); });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

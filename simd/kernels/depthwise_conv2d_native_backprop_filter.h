// DepthwiseConv2dNativeBackpropFilter (TF: input = x, out_backprop = dy, output = dw [FH,FW,C,M]):
//   dw[ky,kx,c,m] = sum_{n,oy,ox} dy[n,oy,ox,c*M+m] * x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, c]
// A reduction over output rows (n, oy): rows are cut into fixed chunks (the cut depends only
// on the row count), each chunk sums into its own partial dw, and the partials are added in
// chunk order at the end: the same bits for any thread count. Inside a chunk, per output row
// and vector of channels, one accumulator per tap stays in a register while ox runs, so one
// dy load feeds every tap (dwf_interior).
#pragma once

#include "common.h"
#include "depthwise_taps.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Interior of one output row for a compile-time tap count NT (M == 1): for each vector of
// channels, acc[t] = sum_j dy[j][c] * src[t][(j*step + off[t])][c] over j in [j0, j1), where
// every tap is inside x; one dy load feeds NT FMAs. acc[t] is then added to accp[t].
// Returns the first channel left for the scalar tail.
template <class T, class Arch, int NT>
inline int64_t dwf_interior(int64_t j0, int64_t j1, const T* dyrow, const T* const* src, const int64_t* off,
                            T* const* accp, int64_t step, int64_t C) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  const int64_t ss = step * C;
  int64_t c = 0;
  for (; c + L <= C; c += L) {
    B a[NT];
    const T* s[NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      a[t] = V::zero();
      s[t] = src[t] + (j0 * step + off[t]) * C + c;
    }
    const T* d = dyrow + j0 * C + c;
    for (int64_t j = j0; j < j1; ++j, d += C) {
      const B dv = V::load(d);
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        a[t] = V::fma(dv, V::load(s[t]), a[t]);
        s[t] += ss;
      }
    }
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) V::store(accp[t] + c, V::load(accp[t] + c) + a[t]);
  }
  return c;
}

template <class T, class Arch>
void depthwise_conv2d_native_backprop_filter(const Exec& exec, const ConvParams& p, const T* x,
                                             const T* dy, T* dw) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t C = p.in_c, M = p.depth_multiplier, OC = C * M, taps = p.filter_h * p.filter_w;
  const int64_t nw = taps * OC;
  if (nw == 0) return;
  const int64_t rows = p.batch * p.out_h;
  // At most 16 chunks of >= 2 rows: an even split for 2 threads at batch 1 (e.g. 28 rows:
  // 14 chunks of 2) and few partials to combine; fixed by the row count alone.
  const int64_t grain = reduction_grain(rows, 2, 16);
  const int64_t chunks = nchunks(rows, grain);
  T* part = static_cast<T*>(workspace(0, sizeof(T) * (chunks * nw + 1)));
  par(exec, rows, grain, [&](int64_t r0, int64_t r1) {
    T* acc_w = part + (r0 / grain) * nw;
    for (int64_t i = 0; i < nw; ++i) acc_w[i] = T(0);
    const T** src = static_cast<const T**>(workspace(1, sizeof(T*) * (taps + 1)));
    T** accp = static_cast<T**>(workspace(2, sizeof(T*) * (taps + 1)));
    int64_t* off = static_cast<int64_t*>(workspace(3, sizeof(int64_t) * (taps + 1)));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      const T* dyrow = dy + r * p.out_w * OC;
      // Taps whose x row is inside; ix = ox*sw + off[t].
      int64_t nt = 0;
      for (int64_t ky = 0; ky < p.filter_h; ++ky) {
        const int64_t iy = oy * p.stride_h - p.pad_top + ky * p.dilation_h;
        if (iy < 0 || iy >= p.in_h) continue;
        for (int64_t kx = 0; kx < p.filter_w; ++kx) {
          src[nt] = x + (n * p.in_h + iy) * p.in_w * C;
          off[nt] = kx * p.dilation_w - p.pad_left;
          accp[nt] = acc_w + (ky * p.filter_w + kx) * OC;
          ++nt;
        }
      }
      if (M == 1) {
        // Interior ox range (every tap inside x), as in dw_row.
        int64_t j_lo = 0, j_hi = p.out_w;
        for (int64_t t = 0; t < nt; ++t) {
          j_lo = imax(j_lo, off[t] >= 0 ? 0 : (-off[t] + p.stride_w - 1) / p.stride_w);
          j_hi = imin(j_hi, floordiv(p.in_w - 1 - off[t], p.stride_w) + 1);
        }
        j_lo = imin(j_lo, p.out_w);
        if (j_hi < j_lo) j_hi = j_lo;
        // Tap t's columns [j0, j1), channels from c0, one multiply-add at a time into accp[t].
        auto add_cols = [&](int64_t t, int64_t j0, int64_t j1, int64_t c0) {
          T* acc = accp[t];
          for (int64_t j = j0; j < j1; ++j) {
            const int64_t ix = j * p.stride_w + off[t];
            if (ix < 0 || ix >= p.in_w) continue;
            const T* d = dyrow + j * OC;
            const T* sx = src[t] + ix * C;
            int64_t cc = c0;
            for (; cc + L <= C; cc += L) V::store(acc + cc, V::fma(V::load(d + cc), V::load(sx + cc), V::load(acc + cc)));
            for (; cc < C; ++cc) acc[cc] += d[cc] * sx[cc];
          }
        };
        // Rows of consecutive taps (dilation 1, stride 1 or 2): dwf_block does the whole
        // row's vector channels, edges included, reusing each x vector for every tap that
        // reads it; otherwise one accumulator per tap over the interior.
        TapGroups g;
        if (tap_groups(nt, src, off, &g)) {
          const int64_t cv = dwf_row<T, Arch>(g, p.out_w, j_lo, j_hi, dyrow, src, accp, p.stride_w, p.in_w, C);
          if (cv > 0) {
            if (cv < C)
              for (int64_t t = 0; t < nt; ++t) add_cols(t, 0, p.out_w, cv);
            continue;
          }
        }
        int64_t c = 0;
        switch (nt) {
          case 1: c = dwf_interior<T, Arch, 1>(j_lo, j_hi, dyrow, src, off, accp, p.stride_w, C); break;
          case 2: c = dwf_interior<T, Arch, 2>(j_lo, j_hi, dyrow, src, off, accp, p.stride_w, C); break;
          case 3: c = dwf_interior<T, Arch, 3>(j_lo, j_hi, dyrow, src, off, accp, p.stride_w, C); break;
          case 4: c = dwf_interior<T, Arch, 4>(j_lo, j_hi, dyrow, src, off, accp, p.stride_w, C); break;
          case 6: c = dwf_interior<T, Arch, 6>(j_lo, j_hi, dyrow, src, off, accp, p.stride_w, C); break;
          case 9: c = dwf_interior<T, Arch, 9>(j_lo, j_hi, dyrow, src, off, accp, p.stride_w, C); break;
          default: break;
        }
        // Whatever the interior kernel did not cover: the remaining channels of the
        // interior, and every channel of the edge columns, tap by tap.
        for (int64_t t = 0; t < nt; ++t) {
          add_cols(t, 0, j_lo, 0);
          if (c < C) add_cols(t, j_lo, j_hi, c);
          add_cols(t, j_hi, p.out_w, 0);
        }
      } else {
        for (int64_t t = 0; t < nt; ++t)
          for (int64_t ox = 0; ox < p.out_w; ++ox) {
            const int64_t ix = ox * p.stride_w + off[t];
            if (ix < 0 || ix >= p.in_w) continue;
            const T* d = dyrow + ox * OC;
            const T* sx = src[t] + ix * C;
            for (int64_t oc = 0; oc < OC; ++oc) accp[t][oc] += d[oc] * sx[oc / M];
          }
      }
    }
  });
  // Fixed-order combination of the chunk partials: dw[e] = ((part_0 + part_1) + part_2) ...,
  // vectorised across e. Small (<= 16 chunks of taps x OC): one thread, no second dispatch.
  auto combine = [&](int64_t e0, int64_t e1) {
    int64_t e = e0;
    for (; e + L <= e1; e += L) {
      auto v = V::load(part + e);
      for (int64_t k = 1; k < chunks; ++k) v = v + V::load(part + k * nw + e);
      V::store(dw + e, v);
    }
    for (; e < e1; ++e) {
      T v = part[e];
      for (int64_t k = 1; k < chunks; ++k) v += part[k * nw + e];
      dw[e] = v;
    }
  };
  if (chunks == 0) {
    for (int64_t e = 0; e < nw; ++e) dw[e] = T(0);
  } else if (nw * chunks <= (int64_t(1) << 16)) {
    combine(0, nw);
  } else {
    par(exec, nw, imax(L, balance_grain(exec, nw)), combine);
  }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

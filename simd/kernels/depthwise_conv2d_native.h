// DepthwiseConv2dNative forward (TF: input = x, filter = w [FH,FW,C,M], output = y):
//   y[n,oy,ox,c*M+m] = sum_{ky,kx} x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, c] * w[ky,kx,c,m]
// Channels in the vector lanes (M == 1: x, w and y rows are all contiguous over c); one
// output row (n, oy) per work item, taps outside x skipped. M > 1 takes a plain loop.
#pragma once

#include "common.h"
#include "depthwise_taps.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Interior of dw_row for a compile-time tap count: all vector channel blocks; returns the
// first channel left for the scalar tail.
template <class T, class Arch, int NT>
inline int64_t dw_interior(int64_t j0, int64_t j1, const T* const* src, const int64_t* off, const T* const* wt,
                           int64_t step, int64_t C, T* dst, int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  const int64_t ss = step * C;
  int64_t c = 0;
  // Two vectors of channels x 4 pixels: 8 independent accumulator chains of NT FMAs each.
  for (; c + 2 * L <= C; c += 2 * L) {
    B w[NT], v[NT];
    const T* s[NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      w[t] = V::load(wt[t] + c);
      v[t] = V::load(wt[t] + c + L);
      s[t] = src[t] + (j0 * step + off[t]) * C + c;
    }
    T* out = dst + j0 * ds + c;
    int64_t j = j0;
    for (; j + 4 <= j1; j += 4, out += 4 * ds) {
      B a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
      B b0 = V::zero(), b1 = V::zero(), b2 = V::zero(), b3 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        const T* q = s[t];
        a0 = V::fma(V::load(q), w[t], a0);
        b0 = V::fma(V::load(q + L), v[t], b0);
        a1 = V::fma(V::load(q + ss), w[t], a1);
        b1 = V::fma(V::load(q + ss + L), v[t], b1);
        a2 = V::fma(V::load(q + 2 * ss), w[t], a2);
        b2 = V::fma(V::load(q + 2 * ss + L), v[t], b2);
        a3 = V::fma(V::load(q + 3 * ss), w[t], a3);
        b3 = V::fma(V::load(q + 3 * ss + L), v[t], b3);
        s[t] += 4 * ss;
      }
      V::store(out, a0);
      V::store(out + L, b0);
      V::store(out + ds, a1);
      V::store(out + ds + L, b1);
      V::store(out + 2 * ds, a2);
      V::store(out + 2 * ds + L, b2);
      V::store(out + 3 * ds, a3);
      V::store(out + 3 * ds + L, b3);
    }
    for (; j < j1; ++j, out += ds) {
      B a0 = V::zero(), b0 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        a0 = V::fma(V::load(s[t]), w[t], a0);
        b0 = V::fma(V::load(s[t] + L), v[t], b0);
        s[t] += ss;
      }
      V::store(out, a0);
      V::store(out + L, b0);
    }
  }
  for (; c + L <= C; c += L) {
    B w[NT];
    const T* s[NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      w[t] = V::load(wt[t] + c);
      s[t] = src[t] + (j0 * step + off[t]) * C + c;
    }
    T* out = dst + j0 * ds + c;
    int64_t j = j0;
    for (; j + 4 <= j1; j += 4, out += 4 * ds) {
      B a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        a0 = V::fma(V::load(s[t]), w[t], a0);
        a1 = V::fma(V::load(s[t] + ss), w[t], a1);
        a2 = V::fma(V::load(s[t] + 2 * ss), w[t], a2);
        a3 = V::fma(V::load(s[t] + 3 * ss), w[t], a3);
        s[t] += 4 * ss;
      }
      V::store(out, a0);
      V::store(out + ds, a1);
      V::store(out + 2 * ds, a2);
      V::store(out + 3 * ds, a3);
    }
    for (; j < j1; ++j, out += ds) {
      B a0 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        a0 = V::fma(V::load(s[t]), w[t], a0);
        s[t] += ss;
      }
      V::store(out, a0);
    }
  }
  return c;
}

#if defined(__wasm_simd128__)
// WASM SIMD128 interior of dw_row for more than 4 taps (dw_interior keeps the rest): V8 on
// x64 has 15 vector registers and no FMA (a*b + c needs a temporary for the product), so
// dw_interior's 2 x NT weight vectors + 8 accumulators spill (NT = 9: 26 live vectors).
// Here 8 (then 4, then 1) pixels x 1 vector of channels, the weight vector reloaded per
// tap from L1. Pixels outer, channels inner, so the source rows and dst are walked
// contiguously. Out of line and called once per row (V8 tiers up a function on a later call).
//   base[t] = tap t's source at interior pixel 0, channel 0 (src[t] + (j_lo*step + off[t])*C);
//   dst[j*ds + c] = sum_t base[t][j*ss + c] * wt[t][c]   for j < nj, c < cv (cv: multiple of L).
// Summation order per element: t ascending from zero, as in dw_interior.
template <class T, class Arch>
GRADRT_SIMD_NOINLINE void dw_interior_wasm(int64_t nj, int64_t nt, const T* const* base, const T* const* wt,
                                           int64_t ss, int64_t cv, T* dst, int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  int64_t j = 0, jo = 0;  // jo = j*ss: source offset of pixel j
  // 8 pixels: 8 accumulators + weight + source + product = 11 registers; the per-tap
  // pointer loads (base[t], wt[t]) and the weight load are shared by 8 multiply-adds.
  for (; j + 8 <= nj; j += 8, jo += 8 * ss, dst += 8 * ds) {
    for (int64_t c = 0; c < cv; c += L) {
      B a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
      B a4 = V::zero(), a5 = V::zero(), a6 = V::zero(), a7 = V::zero();
      for (int64_t t = 0; t < nt; ++t) {
        const B w = V::load(wt[t] + c);
        const T* q = base[t] + jo + c;
        a0 = V::fma(V::load(q), w, a0);
        a1 = V::fma(V::load(q + ss), w, a1);
        a2 = V::fma(V::load(q + 2 * ss), w, a2);
        a3 = V::fma(V::load(q + 3 * ss), w, a3);
        a4 = V::fma(V::load(q + 4 * ss), w, a4);
        a5 = V::fma(V::load(q + 5 * ss), w, a5);
        a6 = V::fma(V::load(q + 6 * ss), w, a6);
        a7 = V::fma(V::load(q + 7 * ss), w, a7);
      }
      T* o = dst + c;
      V::store(o, a0);
      V::store(o + ds, a1);
      V::store(o + 2 * ds, a2);
      V::store(o + 3 * ds, a3);
      V::store(o + 4 * ds, a4);
      V::store(o + 5 * ds, a5);
      V::store(o + 6 * ds, a6);
      V::store(o + 7 * ds, a7);
    }
  }
  for (; j + 4 <= nj; j += 4, jo += 4 * ss, dst += 4 * ds) {
    for (int64_t c = 0; c < cv; c += L) {
      B a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
      for (int64_t t = 0; t < nt; ++t) {
        const B w = V::load(wt[t] + c);
        const T* q = base[t] + jo + c;
        a0 = V::fma(V::load(q), w, a0);
        a1 = V::fma(V::load(q + ss), w, a1);
        a2 = V::fma(V::load(q + 2 * ss), w, a2);
        a3 = V::fma(V::load(q + 3 * ss), w, a3);
      }
      V::store(dst + c, a0);
      V::store(dst + ds + c, a1);
      V::store(dst + 2 * ds + c, a2);
      V::store(dst + 3 * ds + c, a3);
    }
  }
  for (; j < nj; ++j, jo += ss, dst += ds)
    for (int64_t c = 0; c < cv; c += L) {
      B a0 = V::zero();
      for (int64_t t = 0; t < nt; ++t) a0 = V::fma(V::load(base[t] + jo + c), V::load(wt[t] + c), a0);
      V::store(dst + c, a0);
    }
}
#endif

// One row of a depthwise "gather" with channels in the lanes (M == 1):
//   dst[j*dst_step*C + c] = sum_{t < nt} src[t][(j*step + off[t])*C + c] * wt[t][c],  j < nj,
// where a term whose source pixel j*step + off[t] falls outside [0, src_w) is skipped.
// Both the forward (step = stride, src = x rows) and the input gradient (one phase class of
// columns, step = 1, src = dy rows) are this shape. The interior j range, where every tap
// is inside, runs 4 pixels x 1 vector at a time (each w vector loaded once per 4 FMAs);
// the edges filter the taps per pixel.
template <class T, class Arch>
inline void dw_row(int64_t nj, int64_t nt, const T* const* src, const int64_t* off, const T* const* wt, int64_t step,
                   int64_t src_w, int64_t C, T* dst, int64_t dst_step) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  // Interior: for all t, 0 <= j*step + off[t] <= src_w - 1.
  int64_t j_lo = 0, j_hi = nj;
  for (int64_t t = 0; t < nt; ++t) {
    j_lo = imax(j_lo, off[t] >= 0 ? 0 : (-off[t] + step - 1) / step);
    j_hi = imin(j_hi, floordiv(src_w - 1 - off[t], step) + 1);
  }
  j_lo = imin(j_lo, nj);
  if (j_hi < j_lo) j_hi = j_lo;
  const int64_t ds = dst_step * C;
  // Step 1 only: channels [c0, C) of every pixel one multiply-add at a time, for the row
  // kernels below that do the vector channels (taps outside the row skipped).
  auto channel_tail = [&](int64_t c0) {
    for (int64_t j = 0; j < nj; ++j)
      for (int64_t c = c0; c < C; ++c) {
        T a = T(0);
        for (int64_t t = 0; t < nt; ++t) {
          const int64_t q = j + off[t];
          if (q >= 0 && q < src_w) a += src[t][q * C + c] * wt[t][c];
        }
        dst[j * ds + c] = a;
      }
  };
  // Step 1 with taps in rows of consecutive offsets (stride-1 forward, the input gradient's
  // phase classes): dwg_block does the whole row, edges included, reusing each source
  // vector along kx; the channels past the last full vector follow here, per pixel.
  TapGroups g;
  if (step == 1 && nt >= 2 && tap_groups(nt, src, off, &g)) {
    const int64_t cv = dwg_row<T, Arch>(g, nj, j_lo, j_hi, src, wt, src_w, C, dst, ds);
    if (cv > 0) {
      channel_tail(cv);
      return;
    }
  }
#if defined(__wasm_simd128__)
  // WASM, float, step 1, 1 to 3 taps at one offset (e.g. the stride-2 input gradient's odd
  // phase classes: one tap per filter row): dwg_wasm<nt, 1> does the whole row's vector
  // channels, edges included (see dwg_row for why through a volatile pointer).
  if constexpr (std::is_same_v<T, float>) {
    bool one_off = step == 1 && nt >= 1 && nt <= 3 && C >= L;
    for (int64_t t = 1; t < nt && one_off; ++t) one_off = off[t] == off[0];
    if (one_off) {
      using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                          const float* const*, int64_t, float*, int64_t);
      static Fn volatile const kFns[3] = {&dwg_wasm<1, 1>, &dwg_wasm<2, 1>, &dwg_wasm<3, 1>};
      const int64_t cv = C / L * L;
      kFns[nt - 1](src, off[0], nj, j_lo, j_hi, src_w, C, wt, cv, dst, ds);
      if (cv < C)
        channel_tail(cv);
      return;
    }
  }
#endif
  auto edge = [&](int64_t j) {  // any j: taps filtered
    T* out = dst + j * ds;
    for (int64_t c = 0; c < C; ++c) out[c] = T(0);
    for (int64_t t = 0; t < nt; ++t) {
      const int64_t q = j * step + off[t];
      if (q < 0 || q >= src_w) continue;
      const T* s = src[t] + q * C;
      const T* w = wt[t];
      int64_t c = 0;
      for (; c + L <= C; c += L) V::store(out + c, V::fma(V::load(s + c), V::load(w + c), V::load(out + c)));
      for (; c < C; ++c) out[c] += s[c] * w[c];
    }
  };
  for (int64_t j = 0; j < j_lo; ++j) edge(j);
  int64_t c = 0;
#if defined(__wasm_simd128__)
  // Few taps (e.g. the stride-2 input gradient's phase classes: 1, 2 or 4): dw_interior's
  // 2 x NT weight vectors + 8 accumulators still (nearly) fit, and it keeps the weights in
  // registers along the row (measured faster there); more taps spill, so they go through
  // dw_interior_wasm.
  switch (nt) {
    case 1: c = dw_interior<T, Arch, 1>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 2: c = dw_interior<T, Arch, 2>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 3: c = dw_interior<T, Arch, 3>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 4: c = dw_interior<T, Arch, 4>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    default: break;
  }
  if (nt > 4 && j_hi > j_lo) {
    // base: tap t's source at pixel j_lo; slot 3 of the workspace (the callers use 1 and 2).
    const T** base = static_cast<const T**>(workspace(3, sizeof(T*) * (nt + 1)));
    for (int64_t t = 0; t < nt; ++t) base[t] = src[t] + (j_lo * step + off[t]) * C;
    c = C / L * L;
    dw_interior_wasm<T, Arch>(j_hi - j_lo, nt, base, wt, step * C, c, dst + j_lo * ds, ds);
  }
#else
  switch (nt) {  // the tap count as a constant keeps the w vectors and pointers in registers
    case 1: c = dw_interior<T, Arch, 1>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 2: c = dw_interior<T, Arch, 2>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 3: c = dw_interior<T, Arch, 3>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 4: c = dw_interior<T, Arch, 4>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 6: c = dw_interior<T, Arch, 6>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    case 9: c = dw_interior<T, Arch, 9>(j_lo, j_hi, src, off, wt, step, C, dst, ds); break;
    default: break;
  }
#endif
  const int64_t ss = step * C;
  for (; c + L <= C; c += L) {
    int64_t j = j_lo;
    for (; j + 4 <= j_hi; j += 4) {
      B a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
      for (int64_t t = 0; t < nt; ++t) {
        const B w = V::load(wt[t] + c);
        const T* s = src[t] + (j * step + off[t]) * C + c;
        a0 = V::fma(V::load(s), w, a0);
        a1 = V::fma(V::load(s + ss), w, a1);
        a2 = V::fma(V::load(s + 2 * ss), w, a2);
        a3 = V::fma(V::load(s + 3 * ss), w, a3);
      }
      T* out = dst + j * ds + c;
      V::store(out, a0);
      V::store(out + ds, a1);
      V::store(out + 2 * ds, a2);
      V::store(out + 3 * ds, a3);
    }
    for (; j < j_hi; ++j) {
      B a0 = V::zero();
      for (int64_t t = 0; t < nt; ++t) a0 = V::fma(V::load(src[t] + (j * step + off[t]) * C + c), V::load(wt[t] + c), a0);
      V::store(dst + j * ds + c, a0);
    }
  }
  for (; c < C; ++c)
    for (int64_t j = j_lo; j < j_hi; ++j) {
      T a0 = T(0);
      for (int64_t t = 0; t < nt; ++t) a0 += src[t][(j * step + off[t]) * C + c] * wt[t][c];
      dst[j * ds + c] = a0;
    }
  for (int64_t j = imax(j_hi, j_lo); j < nj; ++j) edge(j);
}

template <class T, class Arch>
void depthwise_conv2d_native(const Exec& exec, const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t C = p.in_c, M = p.depth_multiplier, OC = C * M, taps = p.filter_h * p.filter_w;
  const int64_t rows = p.batch * p.out_h;
  if (rows == 0 || p.out_w == 0 || OC == 0) return;
  par_guided(exec, rows, 1, [&](int64_t r0, int64_t r1) {
    const T** src = static_cast<const T**>(workspace(1, sizeof(T*) * 2 * (taps + 1)));
    const T** wt = src + taps + 1;
    int64_t* off = static_cast<int64_t*>(workspace(2, sizeof(int64_t) * (taps + 1)));
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

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

// Fixed-order combination of the chunk partials: dw[e] = ((part_0 + part_1) + part_2) ...,
// vectorised across e. Small (<= 16 chunks of taps x OC): one thread, no second dispatch.
template <class T, class Arch>
void dwf_combine(const Exec& exec, const T* part, int64_t chunks, int64_t nw, T* dw) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
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

// 3x3 taps, dilation 1, M == 1, column step S (1 or 2), NV (1 or 2) adjacent vectors of
// channels from c over the output rows [r0, r1) of one reduction chunk: out[t*C + v*L] =
// sum over the rows, r ascending, of each row's sum (t = ky*3 + kx). Channel-vector-major,
// rows inside: the 9*NV sums stay in registers for the whole chunk, and the three x rows
// of these channels (3 * in_w * NV * 64 bytes with AVX-512) stay in L1 while consecutive
// output rows reuse them. NV = 2 reads two adjacent lines per pixel in one pass (the whole
// pixel when C = 2L) and halves the passes over the chunk's rows. Inside a row, as in
// dwf_block: P = kDwP / NV dy vectors per channel vector in registers, each x vector
// loaded once per block and fed to every (pixel, kx) pair that reads it; with P = 8 the
// odd pixels of a block sum into a1 (two dependency chains per tap), and the row's pixels
// outside [j_lo, j_hi) (some kx outside x) and rows with some ky outside x go one pixel at
// a time, testing each tap. out points at the chunk's partial + c; every (t, c) of a
// chunk is written by one call.
// pf (the chunk's first item, when x is far bigger than the caches): while on row r,
// prefetch every channel of the data row r + 1 adds (its new x rows and its dy row), so
// that the chunk's other items find them in L2: an item alone reads NV lines per pixel
// (the pixel stride, C*4 bytes, spans several lines), a pattern the hardware prefetchers
// follow poorly from DRAM (measured: 0.6 -> 0.4-0.5 ms for 8x56x56x144 s2, 1 thread).
template <class T, class Arch, int S, int NV>
GRADRT_SIMD_NOINLINE void dwf_chunk3(const ConvParams& p, const T* x, const T* dy, int64_t r0, int64_t r1,
                                     int64_t c, int64_t j_lo, int64_t j_hi, T* out, bool pf) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = kDwP / NV;
  constexpr bool kSplit = P >= 8;
  constexpr int Q = (P - 1) * S + 3;  // x pixels a block of P reads per row
  const int64_t C = p.in_c, W = p.in_w, OW = p.out_w, pl = p.pad_left;
  B a0[NV][9], a1[NV][9];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 9
    for (int t = 0; t < 9; ++t) a0[v][t] = a1[v][t] = V::zero();
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / p.out_h, oy = r % p.out_h;
    const int64_t iy0 = oy * p.stride_h - p.pad_top;
    const T* dyr = dy + r * OW * C + c;
    const T* xr = x + ((n * p.in_h + iy0) * W) * C + c;  // row iy0 (maybe outside x: not read then)
    if (pf && r + 1 < r1) {
      // x rows iy0 + 3 .. iy0 + 2 + stride_h of this image (contiguous), and dy row r + 1.
      const int64_t ya = imax(0, iy0 + 3), yb = imin(p.in_h, iy0 + 3 + p.stride_h);
      if (yb > ya) prefetch_lines<Arch>(x + ((n * p.in_h + ya) * W) * C, (yb - ya) * W * C * int64_t(sizeof(T)));
      prefetch_lines<Arch>(dy + (r + 1) * OW * C, OW * C * int64_t(sizeof(T)));
    }
    // Pixel j, ky in [k0, k1), every kx inside x.
    auto pixel = [&](int64_t j, int k0, int k1) {
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        const B d0 = V::load(dyr + j * C + v * L);
        // Fully unrolled (constant indices keep a0 in registers).
#pragma GCC unroll 3
        for (int ky = 0; ky < 3; ++ky)
#pragma GCC unroll 3
          for (int kx = 0; kx < 3; ++kx) {
            const int64_t ix = j * S - pl + kx;
            if (ky >= k0 && ky < k1 && ix >= 0 && ix < W)
              a0[v][ky * 3 + kx] = V::fma(d0, V::load(xr + (ky * W + ix) * C + v * L), a0[v][ky * 3 + kx]);
          }
      }
    };
    if (iy0 < 0 || iy0 + 3 > p.in_h) {
      const int k0 = static_cast<int>(imax(0, -iy0)), k1 = static_cast<int>(imin(3, p.in_h - iy0));
      for (int64_t j = 0; j < OW; ++j) pixel(j, k0, k1);
      continue;
    }
    for (int64_t j = 0; j < j_lo; ++j) pixel(j, 0, 3);
    int64_t j = j_lo;
    for (; j + P <= j_hi; j += P) {
      B d[NV][P];
      const T* dq = dyr + j * C;
#pragma GCC unroll 8
      for (int q = 0; q < P; ++q) {
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          d[v][q] = V::load(dq + v * L);
          dw_pin(d[v][q]);
        }
        dq += C;
        dw_pin_ptr(dq);
      }
#pragma GCC unroll 3
      for (int ky = 0; ky < 3; ++ky) {
        const T* s = xr + (ky * W + j * S - pl) * C;
        // x pixel q = pp*S + kx: tap kx of pixel pp. For a fixed tap, pp ascends with q.
#pragma GCC unroll 32
        for (int q = 0; q < Q; ++q) {
#pragma GCC unroll 2
          for (int v = 0; v < NV; ++v) {
            B xv = V::load(s + v * L);
            dw_pin(xv);
#pragma GCC unroll 3
            for (int kx = 0; kx < 3; ++kx)
              if (q >= kx && (q - kx) % S == 0 && (q - kx) / S < P) {
                const int pp = (q - kx) / S;
                if (kSplit && (pp & 1)) a1[v][ky * 3 + kx] = V::fma(d[v][pp], xv, a1[v][ky * 3 + kx]);
                else a0[v][ky * 3 + kx] = V::fma(d[v][pp], xv, a0[v][ky * 3 + kx]);
              }
          }
          s += C;
          dw_pin_ptr(s);
        }
      }
    }
    for (; j < OW; ++j) pixel(j, 0, 3);
  }
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 9
    for (int t = 0; t < 9; ++t) V::store(out + t * C + v * L, kSplit ? a0[v][t] + a1[v][t] : a0[v][t]);
}

// The dwf_chunk3 path (3x3, dilation 1, M == 1, stride_w 1 or 2, whole vectors of channels;
// native only: WASM keeps dwf_interior, see dwf_row). Work items are (row chunk, group of
// NV channel vectors), chunk-major; rows are chunked so that a chunk's x rows (about 256 KB)
// stay in L2 while its groups run, into at least enough chunks to give 16 (channel
// vector) items, at most 64. The chunking depends on the shape only, each item writes its
// own part of its chunk's partial, and the partials are combined in chunk order: the same
// bits for any thread count. The threads take contiguous runs of items (one run each, in
// one parallel pass): each keeps to its own rows, so at batch 1 its part of x stays in its
// own L2 from one call to the next, and no x line is fetched by both cores.
// Returns false (nothing done) if the shape is not one of these.
template <class T, class Arch>
bool dwf_chunked(const Exec& exec, const ConvParams& p, const T* x, const T* dy, T* dw) {
#if defined(__wasm_simd128__)
  // WASM (float): the row chunks of depthwise_wasm.h (dwf_wasm_chunks), combined here.
  if constexpr (std::is_same_v<T, float>) {
    int64_t chunks = 0;
    const float* part = dwf_wasm_chunks(exec, p, x, dy, &chunks);
    if (part == nullptr) return false;
    dwf_combine<T, Arch>(exec, part, chunks, 9 * p.in_c, dw);
    return true;
  }
#endif
  constexpr int64_t L = Vec<T, Arch>::width;
  const int64_t C = p.in_c;
  if (kDwWasm || p.depth_multiplier != 1 || p.filter_h != 3 || p.filter_w != 3 || p.dilation_h != 1 ||
      p.dilation_w != 1 || (p.stride_w != 1 && p.stride_w != 2) || C % L != 0 || C == 0)
    return false;
  const int64_t rows = p.batch * p.out_h, nw = 9 * C, cvn = C / L;
  if (rows == 0 || p.out_w == 0) return false;
  const int64_t row_bytes = imax(1, p.stride_h * p.in_w * C * int64_t(sizeof(T)));
  int64_t grain = imax(1, (int64_t(256) << 10) / row_bytes);
  const int64_t min_chunks = (16 + cvn - 1) / cvn;
  grain = imin(grain, imax(1, (rows + min_chunks - 1) / min_chunks));
  grain = imax(grain, (rows + 63) / 64);
  const int64_t chunks = nchunks(rows, grain);
  // Interior columns: every kx inside x for j in [j_lo, j_hi) (ix = j*S - pl + kx).
  const int64_t S = p.stride_w;
  const int64_t j_lo = imin(p.out_w, (p.pad_left + S - 1) / S);
  const int64_t j_hi = imax(j_lo, imin(p.out_w, floordiv(p.in_w - 3 + p.pad_left, S) + 1));
  T* part = static_cast<T*>(workspace(0, sizeof(T) * (chunks * nw + 1)));
  // Prefetch (see dwf_chunk3) when x and dy are well past the L2s (a fixed size, not the
  // machine's: on cache-resident data the prefetches only cost).
  const bool big = (p.x_elements() + rows * p.out_w * C) * int64_t(sizeof(T)) > (int64_t(8) << 20);
  // Two channel vectors per item where 32 registers hold their 18 sums (the last one alone
  // if the count is odd): each pass over the chunk's rows reads two adjacent lines per pixel.
  const int64_t NV = kTiles.dw_channel_pairs ? 2 : 1;
  const int64_t groups = (cvn + NV - 1) / NV, items = chunks * groups;
  par(exec, items, (items + exec.threads - 1) / exec.threads, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t k = i / groups, c = (i % groups) * NV * L;
      const int64_t r0 = k * grain, r1 = imin(rows, r0 + grain);
      T* out = part + k * nw + c;
      const bool pf = big && c == 0;
      if (big && c + NV * L >= C && r1 < rows) {
        // The chunk's last item: the next chunk's first row (its x rows and dy row), which
        // its own first item does not prefetch.
        const int64_t n1 = r1 / p.out_h, y0 = (r1 % p.out_h) * p.stride_h - p.pad_top;
        const int64_t ya = imax(0, y0), yb = imin(p.in_h, y0 + 3);
        if (yb > ya) prefetch_lines<Arch>(x + (n1 * p.in_h + ya) * p.in_w * C, (yb - ya) * p.in_w * C * int64_t(sizeof(T)));
        prefetch_lines<Arch>(dy + r1 * p.out_w * C, p.out_w * C * int64_t(sizeof(T)));
      }
      if (NV == 2 && c + 2 * L <= C) {
        if (S == 1) dwf_chunk3<T, Arch, 1, 2>(p, x, dy, r0, r1, c, j_lo, j_hi, out, pf);
        else dwf_chunk3<T, Arch, 2, 2>(p, x, dy, r0, r1, c, j_lo, j_hi, out, pf);
      } else {
        if (S == 1) dwf_chunk3<T, Arch, 1, 1>(p, x, dy, r0, r1, c, j_lo, j_hi, out, pf);
        else dwf_chunk3<T, Arch, 2, 1>(p, x, dy, r0, r1, c, j_lo, j_hi, out, pf);
      }
    }
  });
  dwf_combine<T, Arch>(exec, part, chunks, nw, dw);
  return true;
}

template <class T, class Arch>
void depthwise_conv2d_native_backprop_filter(const Exec& exec, const ConvParams& p, const T* x,
                                             const T* dy, T* dw) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t C = p.in_c, M = p.depth_multiplier, OC = C * M, taps = p.filter_h * p.filter_w;
  const int64_t nw = taps * OC;
  if (nw == 0) return;
  if (dwf_chunked<T, Arch>(exec, p, x, dy, dw)) return;
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
  dwf_combine<T, Arch>(exec, part, chunks, nw, dw);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

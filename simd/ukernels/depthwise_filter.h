// Depthwise filter-gradient micro-kernels (channels in the lanes, M == 1): per output row
// (dwf_interior, dwf_block) or per chunk of rows (dwf_chunk3), one accumulator per tap in a
// register while the row's pixels go by, so one dy load feeds every tap.
#pragma once

#include "depthwise.h"

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

// Filter-gradient accumulation over a whole output row, one vector of channels at a time:
//   acc[r*K + k][c] += sum_j dy[j*C + c] * row[r][(j*S + o[r] + k)*C + c]   (taps inside).
// P dy vectors stay in registers; each source vector feeds every (pixel, tap) pair that
// reads it. The per-tap sum runs over j ascending into a0, except that with 8-pixel blocks
// the odd pixels of each block go to a second set a1 (two dependency chains per tap: 8
// chained multiply-adds per block would otherwise wait on the FMA latency); acc += a0 + a1.
// The order depends only on the row's geometry, never on threads.
// P: pixels per block (the unit's Tiles::dw_block_pixels).
template <class T, class Arch, int R, int K, int S, int P>
GRADRT_SIMD_NOINLINE void dwf_block(const GroupedRow<T>& gr, const T* dy, T* const* acc, int64_t cv) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr bool kSplit = P >= 8;
  constexpr int Q = (P - 1) * S + K;  // source pixels a block of P reads per group
  const int64_t C = gr.C, nj = gr.nj, j_lo = gr.j_lo, j_hi = gr.j_hi;
  for (int64_t c = 0; c < cv; c += L) {
    B a0[R * K], a1[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) a0[t] = a1[t] = V::zero();
    auto edge = [&](int64_t j) {
      const B d0 = V::load(dy + j * C + c);
      for (int r = 0; r < R; ++r)
        for (int k = 0; k < K; ++k) {
          const int64_t q = j * S + gr.o[r] + k;
          if (q >= 0 && q < gr.src_w) a0[r * K + k] = V::fma(d0, V::load(gr.row[r] + q * C + c), a0[r * K + k]);
        }
    };
    for (int64_t j = 0; j < j_lo; ++j) edge(j);
    const T* sr[R];  // running pointers, as in dwg_block
    for (int r = 0; r < R; ++r) sr[r] = gr.row[r] + (j_lo * S + gr.o[r]) * C + c;
    const T* dq = dy + j_lo * C + c;
    int64_t j = j_lo;
    for (; j + P <= j_hi; j += P) {
      B d[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        d[p] = V::load(dq);
        dq += C;
        dw_pin_ptr(dq);
        dw_pin(d[p]);
      }
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = sr[r];
        sr[r] += P * S * C;
        // Source pixel q = p*S + k: tap k of pixel p. For a fixed tap, p ascends with q.
#pragma GCC unroll 32
        for (int q = 0; q < Q; ++q) {
          B x = V::load(s);
          s += C;
          dw_pin_ptr(s);
          dw_pin(x);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q >= k && (q - k) % S == 0 && (q - k) / S < P) {
              const int pp = (q - k) / S;
              if (kSplit && (pp & 1)) {
                a1[r * K + k] = V::fma(d[pp], x, a1[r * K + k]);
              } else {
                a0[r * K + k] = V::fma(d[pp], x, a0[r * K + k]);
                dw_keep(a0[r * K + k]);
              }
            }
        }
      }
    }
    for (; j < j_hi; ++j) {
      const B d0 = V::load(dy + j * C + c);
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k)
          a0[r * K + k] = V::fma(d0, V::load(gr.row[r] + (j * S + gr.o[r] + k) * C + c), a0[r * K + k]);
    }
    for (j = imax(j_hi, j_lo); j < nj; ++j) edge(j);
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) {
      const B sum = kSplit ? a0[t] + a1[t] : a0[t];
      V::store(acc[t] + c, V::load(acc[t] + c) + sum);
    }
  }
}

// 3x3 taps, dilation 1, M == 1, column step S (1 or 2), NV (1 or 2) adjacent vectors of
// channels from c over the output rows [r0, r1) of one reduction chunk: out[t*C + v*L] =
// sum over the rows, r ascending, of each row's sum (t = ky*3 + kx). Channel-vector-major,
// rows inside: the 9*NV sums stay in registers for the whole chunk, and the three x rows
// of these channels (3 * in_w * NV * 64 bytes with AVX-512) stay in L1 while consecutive
// output rows reuse them. NV = 2 reads two adjacent lines per pixel in one pass (the whole
// pixel when C = 2L) and halves the passes over the chunk's rows. Inside a row, as in
// dwf_block: P = BP / NV dy vectors per channel vector in registers, each x vector
// loaded once per block and fed to every (pixel, kx) pair that reads it; with P = 8 the
// odd pixels of a block sum into a1 (two dependency chains per tap), and the row's pixels
// outside [j_lo, j_hi) (some kx outside x) and rows with some ky outside x go one pixel at
// a time, testing each tap. out points at the chunk's partial + c; every (t, c) of a
// chunk is written by one call.
// strip: output columns per strip (the driver's dwf_strip; >= out_w: one strip). The rows
// are swept once per column strip, so that a strip's three x row pieces stay in L1 from
// one output row to the next; the sums then run strip by strip, rows ascending inside
// each strip, pixels ascending inside each row (a fixed order: the shape sets the strips).
// The first strip ends `strip` columns past j_lo, the others are `strip` wide: every
// strip's interior blocks start on the same P-aligned grid (strip is a multiple of 8).
// pf (the chunk's first item, when x is far bigger than the caches): while on row r,
// prefetch every channel of the data row r + 1 adds (its new x rows and its dy row), so
// that the chunk's other items find them in L2: an item alone reads NV lines per pixel
// (the pixel stride, C*4 bytes, spans several lines), a pattern the hardware prefetchers
// follow poorly from DRAM (measured: 0.6 -> 0.4-0.5 ms for 8x56x56x144 s2, 1 thread).
// BP: pixels per block with one channel vector (the unit's Tiles::dw_block_pixels).
template <class T, class Arch, int S, int NV, int BP>
GRADRT_SIMD_NOINLINE void dwf_chunk3(const ConvParams& p, const T* x, const T* dy, int64_t r0, int64_t r1,
                                     int64_t c, int64_t j_lo, int64_t j_hi, int64_t strip, T* out, bool pf) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = BP / NV;
  constexpr bool kSplit = P >= 8;
  constexpr int Q = (P - 1) * S + 3;  // x pixels a block of P reads per row
  const int64_t C = p.in_c, W = p.in_w, OW = p.out_w, pl = p.pad_left;
  B a0[NV][9], a1[NV][9];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 9
    for (int t = 0; t < 9; ++t) a0[v][t] = a1[v][t] = V::zero();
  // Column strips [ja, jb): the first ends strip columns past j_lo, so that every strip's
  // interior blocks start on the same P-aligned grid as without strips.
  for (int64_t ja = 0, jb = 0; ja < OW; ja = jb) {
    jb = imin(OW, (ja == 0 ? j_lo : ja) + strip);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      const int64_t iy0 = oy * p.stride_h - p.pad_top;
      const T* dyr = dy + r * OW * C + c;
      const T* xr = x + ((n * p.in_h + iy0) * W) * C + c;  // row iy0 (maybe outside x: not read then)
      if (pf && ja == 0 && r + 1 < r1) {
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
        for (int64_t j = ja; j < jb; ++j) pixel(j, k0, k1);
        continue;
      }
      int64_t j = ja;
      for (; j < imin(jb, j_lo); ++j) pixel(j, 0, 3);
      const int64_t je = imin(jb, j_hi);
      for (; j + P <= je; j += P) {
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
      for (; j < jb; ++j) pixel(j, 0, 3);
    }
  }
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 9
    for (int t = 0; t < 9; ++t) V::store(out + t * C + v * L, kSplit ? a0[v][t] + a1[v][t] : a0[v][t]);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

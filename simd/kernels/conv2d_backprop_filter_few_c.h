// Conv2DBackpropFilter with few input channels (RGB first layers: 3 -> 16..64, 3x3 or 7x7).
//   dw[ky,kx,c,oc] = sum_{n,oy,ox} dy[n,oy,ox,oc] * x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx, c]
// The generic driver (conv2d_backprop_filter.h) makes one GEMM row tile per tap of Ci rows:
// with Ci = 3 that is 3 rows of a 6-row tile and a per-pixel copy per tap. Here, per filter
// row ky, the GEMM rows are that filter row's m = fw*Ci values (kx, c), which for one output
// pixel lie contiguous in an NHWC x row (dilation_w 1) and move by sw*Ci from one pixel to
// the next: A is read with a constant stride, no pointer tables; B = dy rows in place
// (out_c a multiple of the vector width); the accumulators span R of the m rows and NRV
// vectors of out_c, as many as the unit's GEMM tile has registers for.
//
// Image edges: per segment of output rows, the x rows it reads (under every ky) are copied
// once into a zero-padded buffer [rows][Wb*Ci], Wb = (out_w-1)*sw + fw columns (column b is
// x column b - pl), so every pixel reads the same way; x has Ci channels, so the copy is
// small beside the fw*Ci*out_c FMAs per pixel and filter row. Padding contributes 0*dy.
//
// Determinism: the output rows (n, oy) are cut into chunks by the shape alone (never the
// thread count); a chunk sums its pixels in order into its own partial dw (segment after
// segment, each call adding onto the stored value); dw = the partials added in chunk order.
// Threads only pick which chunks they compute: the bits do not depend on the thread count.
#pragma once

#include "common.h"
#include "../ukernels/gemm.h"  // GRADRT_GEMM_K_LOOP

namespace gradrt::simd::GRADRT_SIMD_NS {

// Accumulator registers and B vectors per pass: the unit's default GEMM tile's (avx512 12x2:
// 24 and 2, avx2 6x2: 12 and 2, ...), whose register budget was measured per unit.
constexpr int kFewCAcc = kTiles.gemm[0].rows * kTiles.gemm[0].vectors;
constexpr int kFewCVec = kTiles.gemm[0].vectors;

// c[i*ldc + j] (+)= sum_{r < nrows, q < ncols} a[r*ars + q*acs + i] * b[(r*ncols + q)*ldb + j]
// for i < R, j < NRV*L: R rows of A at a constant stride acs per pixel (a row of output pixels)
// and ars per output row; b's rows are consecutive pixels (ldb apart). accumulate: add onto c.
template <class T, class Arch, int R, int NRV>
struct FewCTile {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  static constexpr int64_t L = V::width;

  GRADRT_SIMD_NOINLINE static void run(int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs,
                                       const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate) {
    B acc[R][NRV];
#pragma GCC unroll 32
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NRV; ++j) acc[i][j] = accumulate ? V::load(c + i * ldc + j * L) : V::zero();
    for (int64_t r = 0; r < nrows; ++r) {
      const T* ap = a + r * ars;
      GRADRT_GEMM_K_LOOP
      for (int64_t q = 0; q < ncols; ++q, ap += acs, b += ldb) {
        B bv[NRV];
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) bv[j] = V::load(b + j * L);
#pragma GCC unroll 32
        for (int i = 0; i < R; ++i) {
          const B av = V::set1(ap[i]);
#pragma GCC unroll 4
          for (int j = 0; j < NRV; ++j) acc[i][j] = V::fma(av, bv[j], acc[i][j]);
        }
      }
    }
#pragma GCC unroll 32
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
      for (int j = 0; j < NRV; ++j) V::store(c + i * ldc + j * L, acc[i][j]);
  }
};

// FewCTile<R, NRV>::run for a run-time R in [1, kFewCAcc / NRV].
template <class T, class Arch, int NRV, int R = 1, class... A>
void few_c_tile(int64_t rows, A... args) {
  if constexpr (R <= kFewCAcc / NRV) {
    if (rows == R) return FewCTile<T, Arch, R, NRV>::run(args...);
    return few_c_tile<T, Arch, NRV, R + 1>(rows, args...);
  }
}

// The path's choice, from the shape (and the tuning's channel limit, 0: off): one group,
// undilated columns, a filter wider than 1, out_c in whole vectors (dy read in place).
template <class T, class Arch>
bool conv2d_backprop_filter_few_c_applies(const ConvTuning& tuning, const ConvParams& p) {
  return p.groups == 1 && p.dilation_w == 1 && p.filter_w > 1 && p.filter_in_c <= tuning.filter_few_c_max &&
         p.out_c % Vec<T, Arch>::width == 0;
}

// The cut of the work, from the shape only. Segments: up to `seg_rows` output rows of one
// image (~192 pixels: 24 KB of dy rows at out_c 32, read again under each filter row from L1;
// 512 took 1.02-1.09x the time of 192 on an Emerald Rapids Xeon, 1 thread, noisy host).
// Chunks: `chunk_rows` of the batch*out_h output rows each (at most 32 chunks, ~512 pixels
// or more each), one partial dw per chunk when there are several.
struct FewCPlan {
  int64_t m, wb, seg_rows, seg_in_rows, chunk_rows, chunks;
  explicit FewCPlan(const ConvParams& p) {
    m = p.filter_w * p.filter_in_c;
    wb = (p.out_w - 1) * p.stride_w + p.filter_w;
    seg_rows = imin(imax(1, 192 / imax(1, p.out_w)), imax(1, p.out_h));
    seg_in_rows = (seg_rows - 1) * p.stride_h + (p.filter_h - 1) * p.dilation_h + 1;
    const int64_t rows = p.batch * p.out_h;
    const int64_t want = imin(32, imax(1, rows * p.out_w / 512));
    chunk_rows = imax(1, (rows + want - 1) / want);
    chunks = imax(1, (rows + chunk_rows - 1) / chunk_rows);
  }
};

template <class T>
ScratchSize conv2d_backprop_filter_few_c_scratch(const ConvParams& p) {
  const FewCPlan f(p);
  return ScratchSize{}
      .add(line_bytes<T>(f.chunks > 1 ? f.chunks * p.w_elements() : 0))
      .add_per_thread(line_bytes<T>(f.seg_in_rows * f.wb * p.in_c));
}

template <class T, class Arch>
void conv2d_backprop_filter_few_c(const Exec& exec, const ConvParams& p, const T* x, const T* dy, T* dw) {
  constexpr int64_t L = Vec<T, Arch>::width;
  const int64_t nw = p.w_elements();
  if (nw == 0) return;
  if (p.batch * p.out_h * p.out_w == 0) {
    for (int64_t i = 0; i < nw; ++i) dw[i] = T(0);
    return;
  }
  const FewCPlan f(p);
  const int64_t ci = p.in_c, co = p.out_c, nv = co / L, m = f.m, rowlen = f.wb * ci;
  // Vectors of out_c per pass (NRV) and row tiles of m: per pixel and filter row, a pass
  // loads NRV dy vectors and broadcasts its R x values; pick the NRV with the fewest loads
  // (ties: the wider), rows split evenly into tiles of at most kFewCAcc / NRV.
  int nrv = 1;
  {
    int64_t best = -1;
    for (int v : {4, 2, 1}) {
      if (v > nv || v > kFewCVec || kFewCAcc / v < 1) continue;
      const int64_t tiles = (m + kFewCAcc / v - 1) / (kFewCAcc / v);
      const int64_t loads = (nv / v) * (tiles * v + m) + (nv % v ? tiles * (nv % v) + m : 0);
      if (best < 0 || loads < best) best = loads, nrv = v;
    }
  }
  const int64_t tiles = (m + kFewCAcc / nrv - 1) / (kFewCAcc / nrv);
  Arena scratch(exec);  // sizes: conv2d_backprop_filter_few_c_scratch
  T* part = f.chunks > 1 ? scratch.take<T>(f.chunks * nw) : dw;
  ThreadParts parts(scratch, conv2d_backprop_filter_few_c_scratch<T>(p).per_thread, exec.threads);
  const int64_t in_h = p.in_h, in_w = p.in_w, sh = p.stride_h, sw = p.stride_w, pt = p.pad_top, pl = p.pad_left;
  // Buffer column b is x column b - pl: x's columns fill [b_lo, b_hi), zeros around.
  const int64_t b_lo = imin(imax(pl, 0), f.wb), b_hi = imin(imax(in_w + pl, b_lo), f.wb);
  const int64_t rows = p.batch * p.out_h;
  par(exec, f.chunks, 1, [&](int64_t c0, int64_t c1) {
    Arena mine = parts.mine();
    T* xb = mine.take<T>(f.seg_in_rows * rowlen);
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      T* out = part + (f.chunks > 1 ? chunk * nw : 0);
      const int64_t r_end = imin(rows, (chunk + 1) * f.chunk_rows);
      bool first = true;
      // Segments: output rows [r, r + sr) of image n, within the chunk.
      for (int64_t r = chunk * f.chunk_rows; r < r_end;) {
        const int64_t n = r / p.out_h, oy0 = r % p.out_h;
        const int64_t sr = imin(imin(f.seg_rows, p.out_h - oy0), r_end - r);
        const int64_t in_rows = (sr - 1) * sh + (p.filter_h - 1) * p.dilation_h + 1;
        for (int64_t j = 0; j < in_rows; ++j) {  // buffer row j = x row oy0*sh - pt + j
          const int64_t iy = oy0 * sh - pt + j;
          T* dst = xb + j * rowlen;
          if (iy < 0 || iy >= in_h) {
            std::memset(static_cast<void*>(dst), 0, sizeof(T) * size_t(rowlen));
            continue;
          }
          std::memset(static_cast<void*>(dst), 0, sizeof(T) * size_t(b_lo * ci));
          std::memcpy(dst + b_lo * ci, x + ((n * in_h + iy) * in_w + b_lo - pl) * ci,
                      sizeof(T) * size_t((b_hi - b_lo) * ci));
          std::memset(static_cast<void*>(dst + b_hi * ci), 0, sizeof(T) * size_t((f.wb - b_hi) * ci));
        }
        const T* dyr = dy + r * p.out_w * co;  // the segment's pixels, consecutive in dy
        for (int64_t ky = 0; ky < p.filter_h; ++ky) {
          const T* a = xb + ky * p.dilation_h * rowlen;
          for (int64_t t = 0, r0 = 0; t < tiles; ++t) {
            const int64_t rt = m / tiles + (t < m % tiles);  // rows of this tile
            for (int64_t v0 = 0; v0 < nv; v0 += nrv) {
              const int64_t v = imin(nrv, nv - v0);
              T* c = out + (ky * m + r0) * co + v0 * L;
              const T* b = dyr + v0 * L;
              // a + r0: the tile's first (kx, c) value; sh rows of the buffer per output row.
              const T* at = a + r0;
              const int64_t ars = sh * rowlen, acs = sw * ci;
              if constexpr (kFewCVec >= 4)
                if (v == 4) {
                  few_c_tile<T, Arch, 4>(rt, sr, p.out_w, at, ars, acs, b, co, c, co, !first);
                  continue;
                }
              if constexpr (kFewCVec >= 2)
                if (v == 2) {
                  few_c_tile<T, Arch, 2>(rt, sr, p.out_w, at, ars, acs, b, co, c, co, !first);
                  continue;
                }
              few_c_tile<T, Arch, 1>(rt, sr, p.out_w, at, ars, acs, b, co, c, co, !first);
            }
            r0 += rt;
          }
        }
        first = false;
        r += sr;
      }
    }
  });
  if (f.chunks == 1) return;
  combine_partials<T, Arch>(exec, part, f.chunks, nw, dw);  // in chunk order
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

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
// Image edges: interior pixels (every tap's x row and column in range: FewCInterior) read x
// in place. The others, per segment of output rows, read a zero-padded buffer
// [rows][Wb*Ci], Wb = (out_w-1)*sw + fw columns (column b is x column b - pl), into which
// the segment copies only what they read: whole x rows under the top and bottom edge rows,
// the left and right edge columns under the others. Padding contributes 0*dy. (Session 14
// copied every x row the segment read: 18-19% of the time at 3x3 s2 3->16, where each x float
// feeds only ~2.25 vector FMAs.) A segment's pixels come in blocks of rows x columns read
// alike (FewCBlock): the tiles take a dy row stride, since a block is narrower than out_w.
//
// Determinism: the output rows (n, oy) are cut into chunks by the shape alone (never the
// thread count); a chunk sums its pixels into its own partial dw, segment after segment and
// within a segment block after block in a fixed order (each call adding onto the stored
// value); dw = the partials added in chunk order. Threads only pick which chunks they
// compute: the bits do not depend on the thread count.
#pragma once

#include "common.h"
#include "../ukernels/gemm.h"  // GRADRT_GEMM_K_LOOP

namespace gradrt::simd::GRADRT_SIMD_NS {

// Accumulator registers and B vectors per pass: the unit's default GEMM tile's (avx512 12x2:
// 24 and 2, avx2 6x2: 12 and 2, ...), whose register budget was measured per unit.
constexpr int kFewCAcc = kTiles.gemm[0].rows * kTiles.gemm[0].vectors;
constexpr int kFewCVec = kTiles.gemm[0].vectors;

// Filter rows stacked in one tile: KY filter rows ky + k (k < KY) of J = m values each, for one
// output pixel: rows (k, j) of A at a[k*kys + j] (kys: x's or the buffer's rows between filter
// rows), C's rows k*J + j consecutive (J = m: the whole filter row). Per pixel one load of NRV dy
// vectors feeds KY*J*NRV FMAs into as many independent accumulators: with out_c 16 (NRV 1) and
// m = 9 a lone filter row has 9 chains of FMAs, too few to hide the FMA latency at two FMAs per
// cycle; 3x3x3 stacks to 27. Each accumulator's chain is FewCTile's: the same bits.
template <class T, class Arch, int KY, int J, int NRV>
struct FewCStackTile {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  static constexpr int64_t L = V::width;

  GRADRT_SIMD_NOINLINE static void run(int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs,
                                       int64_t kys, const T* b, int64_t brs, int64_t ldb, T* c, int64_t ldc,
                                       bool accumulate) {
    B acc[KY][J][NRV];
#pragma GCC unroll 4
    for (int k = 0; k < KY; ++k)
#pragma GCC unroll 32
      for (int i = 0; i < J; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j)
          acc[k][i][j] = accumulate ? V::load(c + (k * J + i) * ldc + j * L) : V::zero();
    for (int64_t r = 0; r < nrows; ++r) {
      const T* ap = a + r * ars;
      const T* bp = b + r * brs;
      GRADRT_GEMM_K_LOOP
      for (int64_t q = 0; q < ncols; ++q, ap += acs, bp += ldb) {
        B bv[NRV];
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) bv[j] = V::load(bp + j * L);
#pragma GCC unroll 4
        for (int k = 0; k < KY; ++k)
#pragma GCC unroll 32
          for (int i = 0; i < J; ++i) {
            const B av = V::set1(ap[k * kys + i]);
#pragma GCC unroll 4
            for (int j = 0; j < NRV; ++j) acc[k][i][j] = V::fma(av, bv[j], acc[k][i][j]);
          }
      }
    }
#pragma GCC unroll 4
    for (int k = 0; k < KY; ++k)
#pragma GCC unroll 32
      for (int i = 0; i < J; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) V::store(c + (k * J + i) * ldc + j * L, acc[k][i][j]);
  }
};

// c[i*ldc + j] (+)= sum_{r < nrows, q < ncols} a[r*ars + q*acs + i] * b[r*brs + q*ldb + j]
// for i < R, j < NRV*L: R rows of A at a constant stride acs per pixel (a row of output pixels)
// and ars per output row; b's pixels ldb apart, its rows brs apart (a block of pixels narrower
// than the image: brs > ncols*ldb). accumulate: add onto c.
// One filter row: the stacked tile with KY = 1 (the same machine code: k*kys is 0).
template <class T, class Arch, int R, int NRV>
struct FewCTile {
  static void run(int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs, const T* b, int64_t brs,
                  int64_t ldb, T* c, int64_t ldc, bool accumulate) {
    FewCStackTile<T, Arch, 1, R, NRV>::run(nrows, ncols, a, ars, acs, 0, b, brs, ldb, c, ldc, accumulate);
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

// Accumulators a stacked tile may take with NRV vectors: the unit's vector registers (32 with
// 64-byte vectors, else 16) less the NRV dy vectors and one broadcast.
template <class T, class Arch>
constexpr int few_c_stack_acc(int nrv) {
  return (sizeof(typename Vec<T, Arch>::type) >= 64 ? 32 : 16) - nrv - 1;
}

// FewCStackTile<KY, J, NRV>::run for a run-time J with KY*J*NRV within few_c_stack_acc.
template <class T, class Arch, int KY, int NRV, int J = 1, class... A>
void few_c_stack_tile(int64_t j, A... args) {
  if constexpr (KY * J * NRV <= few_c_stack_acc<T, Arch>(NRV)) {
    if (j == J) return FewCStackTile<T, Arch, KY, J, NRV>::run(args...);
    return few_c_stack_tile<T, Arch, KY, NRV, J + 1>(j, args...);
  }
}

// few_c_stack_tile by run-time (ky, nrv), for the micro-kernel tester (RowUkernels::few_c_stack).
template <class T, class Arch>
void few_c_stack_ukernel(int ky, int nrv, int64_t j, int64_t nrows, int64_t ncols, const T* a, int64_t ars,
                         int64_t acs, int64_t kys, const T* b, int64_t brs, int64_t ldb, T* c, int64_t ldc,
                         bool accumulate) {
  auto with = [&]<int KY, int V>() {
    few_c_stack_tile<T, Arch, KY, V>(j, nrows, ncols, a, ars, acs, kys, b, brs, ldb, c, ldc, accumulate);
  };
  if (ky == 2) nrv == 2 ? with.template operator()<2, 2>() : with.template operator()<2, 1>();
  else if (ky == 3) nrv == 2 ? with.template operator()<3, 2>() : with.template operator()<3, 1>();
}

// Vectors of out_c per single-row tile: 1 or 2 (every unit's default GEMM tile has 2; a wider
// one is capped at 2).
constexpr int kFewCVecMax = kFewCVec < 2 ? kFewCVec : 2;

// few_c_tile by run-time (nrv, r), for the micro-kernel tester (table.h RowUkernels::few_c).
template <class T, class Arch>
void few_c_ukernel(int nrv, int64_t r, int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs,
                   const T* b, int64_t brs, int64_t ldb, T* c, int64_t ldc, bool accumulate) {
  if constexpr (kFewCVecMax >= 2)
    if (nrv == 2) return few_c_tile<T, Arch, 2>(r, nrows, ncols, a, ars, acs, b, brs, ldb, c, ldc, accumulate);
  if (nrv == 1) few_c_tile<T, Arch, 1>(r, nrows, ncols, a, ars, acs, b, brs, ldb, c, ldc, accumulate);
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

// A filter row of m values in single-row tiles: nrv vectors of out_c per pass (1 or 2) and the
// m rows cut into `tiles` tiles of at most kFewCAcc / nrv rows. Per pass and pixel a tile loads
// nrv dy vectors and broadcasts its rows' x values; the choice takes the fewest loads per
// output pixel (ties: 2 vectors), rows split evenly. From the shape only.
struct FewCRowTiles {
  int nrv = 1;
  int64_t tiles = 1;
  FewCRowTiles(int64_t m, int64_t nv) {
    int64_t best = -1;
    for (int v = kFewCVecMax; v >= 1; --v) {
      if (v > nv) continue;
      const int64_t rmax = kFewCAcc / v, t = (m + rmax - 1) / rmax;
      const int64_t loads = (nv / v) * (t * v + m) + (nv % v ? t * (nv % v) + m : 0);
      if (best < 0 || loads < best) best = loads, nrv = v, tiles = t;
    }
  }
};

// The output positions [lo, hi) along one axis whose every tap reads x in range: position o
// reads [o*stride - pad, o*stride - pad + span), span = the (dilated) filter extent; in range
// when o*stride >= pad and o*stride <= in + pad - span, i.e. o in
// [ceil(pad/stride), floor((in + pad - span)/stride)], clipped to [0, out). hi = lo when none
// (an image narrower than the filter).
struct FewCInterior {
  int64_t lo, hi;
  FewCInterior(int64_t in, int64_t out, int64_t pad, int64_t stride, int64_t span) {
    lo = imin(out, pad > 0 ? (pad + stride - 1) / stride : 0);
    const int64_t last = in + pad - span;  // the last in-range start, in padded coordinates
    hi = last < 0 ? lo : imax(lo, imin(out, last / stride + 1));
  }
};

// Pixels of a segment read alike: nrows output rows of ncols pixels. a: the x value (ky 0,
// kx 0, c 0) of the first pixel, in x itself or in the padded buffer, ars / kys apart between
// output rows / filter rows there; b: the first pixel's dy (rows out_w*out_c apart).
template <class T>
struct FewCBlock {
  const T* a;
  int64_t ars, kys;
  const T* b;
  int64_t nrows, ncols;
};

// stack_rows: whole filter rows in one tile where they fit (ConvTuning::filter_few_c_stack).
template <class T, class Arch>
void conv2d_backprop_filter_few_c(const Exec& exec, const ConvParams& p, bool stack_rows, const T* x, const T* dy,
                                  T* dw) {
  constexpr int64_t L = Vec<T, Arch>::width;
  const int64_t nw = p.w_elements();
  if (nw == 0) return;
  if (p.batch * p.out_h * p.out_w == 0) {
    for (int64_t i = 0; i < nw; ++i) dw[i] = T(0);
    return;
  }
  const FewCPlan f(p);
  const int64_t ci = p.in_c, co = p.out_c, nv = co / L, m = f.m, rowlen = f.wb * ci;
  const FewCRowTiles plan(m, nv);
  // Stacking whole filter rows (FewCStackTile): up to 3 where 2 or more fit the registers with
  // the single-row choice's vectors.
  const int nrv1 = plan.nrv;
  int64_t stack = 1;
  if (stack_rows && nrv1 <= 2)
    for (int64_t k = 2; k <= imin(3, p.filter_h); ++k)
      if (k * m * nrv1 <= few_c_stack_acc<T, Arch>(nrv1)) stack = k;
  Arena scratch(exec);  // sizes: conv2d_backprop_filter_few_c_scratch
  T* part = f.chunks > 1 ? scratch.take<T>(f.chunks * nw) : dw;
  ThreadParts parts(scratch, conv2d_backprop_filter_few_c_scratch<T>(p).per_thread, exec.threads);
  const int64_t in_h = p.in_h, in_w = p.in_w, sh = p.stride_h, sw = p.stride_w, pt = p.pad_top, pl = p.pad_left;
  const int64_t span_h = (p.filter_h - 1) * p.dilation_h + 1;
  const FewCInterior cols(in_w, p.out_w, pl, sw, p.filter_w), rows_in(in_h, p.out_h, pt, sh, span_h);
  // Buffer column b is x column b - pl: x's columns fill [b_lo, b_hi), zeros around. The left
  // edge pixels [0, cols.lo) read buffer columns [0, e_lo), the right ones [cols.hi, out_w) read
  // [e_hi, wb): the columns copied under interior rows.
  const int64_t b_lo = imin(imax(pl, 0), f.wb), b_hi = imin(imax(in_w + pl, b_lo), f.wb);
  const int64_t e_lo = cols.lo > 0 ? imin(b_hi, (cols.lo - 1) * sw + p.filter_w) : b_lo;
  const int64_t e_hi = cols.hi < p.out_w ? imax(b_lo, cols.hi * sw) : b_hi;
  const int64_t rows = p.batch * p.out_h, dys = p.out_w * co, acs = sw * ci;
  par(exec, f.chunks, 1, [&](int64_t c0, int64_t c1) {
    Arena mine = parts.mine();
    T* xb = mine.take<T>(f.seg_in_rows * rowlen);
    // The padding columns [0, b_lo) and [b_hi, wb) of every buffer row are zeroed here, once per
    // call of this thread: the copies below write only columns within [b_lo, b_hi) (a row outside
    // x: zeros there). The per-row memsets of the pads were ~3% of the 3x3 64x64x3->16 s2 row (perf).
    std::memset(static_cast<void*>(xb), 0, sizeof(T) * size_t(f.seg_in_rows * rowlen));
    auto copy = [&](T* row, const T* xrow, int64_t b0, int64_t b1) {  // buffer columns [b0, b1) of x's
      if (b1 > b0) std::memcpy(row + b0 * ci, xrow + (b0 - pl) * ci, sizeof(T) * size_t((b1 - b0) * ci));
    };
    FewCBlock<T> blocks[5];
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      T* out = part + (f.chunks > 1 ? chunk * nw : 0);
      const int64_t r_end = imin(rows, (chunk + 1) * f.chunk_rows);
      bool first = true;
      // Segments: output rows [oy0, oy1) of image n, within the chunk; rows [i0, i1) of them
      // interior, the others (top, bottom) edge rows.
      for (int64_t r = chunk * f.chunk_rows; r < r_end;) {
        const int64_t n = r / p.out_h, oy0 = r % p.out_h;
        const int64_t sr = imin(imin(f.seg_rows, p.out_h - oy0), r_end - r), oy1 = oy0 + sr;
        const int64_t i0 = imin(imax(rows_in.lo, oy0), oy1), i1 = imin(imax(rows_in.hi, i0), oy1);
        const int64_t in_rows = (sr - 1) * sh + span_h;
        // Buffer rows [0, top_end) and [bottom_lo, in_rows) are read by edge rows: whole rows.
        const int64_t top_end = i0 > oy0 ? (i0 - 1 - oy0) * sh + span_h : 0;
        const int64_t bottom_lo = i1 < oy1 ? (i1 - oy0) * sh : in_rows;
        for (int64_t j = 0; j < in_rows; ++j) {  // buffer row j = x row oy0*sh - pt + j
          const int64_t iy = oy0 * sh - pt + j;
          T* row = xb + j * rowlen;
          const bool inside = iy >= 0 && iy < in_h;
          const T* xrow = inside ? x + (n * in_h + iy) * in_w * ci : nullptr;
          if (j < top_end || j >= bottom_lo) {
            if (inside) copy(row, xrow, b_lo, b_hi);
            else std::memset(static_cast<void*>(row + b_lo * ci), 0, sizeof(T) * size_t((b_hi - b_lo) * ci));
          } else if (inside) {  // (a row outside x here is read by no pixel)
            copy(row, xrow, b_lo, e_lo);
            copy(row, xrow, imax(e_hi, e_lo), b_hi);  // (overlapping e_lo: copied once)
          }
        }
        const T* dyr = dy + r * dys;  // the segment's first pixel
        // Blocks in a fixed order: interior, left, right, top, bottom (empty ones dropped).
        const int64_t bars = sh * rowlen, bkys = p.dilation_h * rowlen, xars = sh * in_w * ci;
        int nb = 0;
        // Output rows [y0, y1) x columns [x0, x1); a(): its first pixel's x (called only when not
        // empty: an empty interior's x column may lie outside x).
        auto add = [&](auto a, int64_t ars, int64_t kys, int64_t y0, int64_t y1, int64_t x0, int64_t x1) {
          if (y1 > y0 && x1 > x0) blocks[nb++] = {a(), ars, kys, dyr + (y0 - oy0) * dys + x0 * co, y1 - y0, x1 - x0};
        };
        // Output pixel (oy, ox) of the segment reads buffer row (oy - oy0)*sh, column ox*sw.
        auto buf = [&](int64_t oy, int64_t ox) { return [=] { return xb + (oy - oy0) * bars + ox * acs; }; };
        add([&] { return x + ((n * in_h + i0 * sh - pt) * in_w + cols.lo * sw - pl) * ci; }, xars,
            p.dilation_h * in_w * ci, i0, i1, cols.lo, cols.hi);
        add(buf(i0, 0), bars, bkys, i0, i1, 0, cols.lo);
        add(buf(i0, cols.hi), bars, bkys, i0, i1, cols.hi, p.out_w);
        add(buf(oy0, 0), bars, bkys, oy0, i0, 0, p.out_w);
        add(buf(i1, 0), bars, bkys, i1, oy1, 0, p.out_w);
        // Every block of the segment through one tile: A from filter row ky, dy from vector v0.
        // The chunk's first call stores, the others add.
        auto each = [&](int64_t ky, int64_t v0, auto&& tile) {
          for (int k = 0; k < nb; ++k) {
            const FewCBlock<T>& bl = blocks[k];
            tile(bl.a + ky * bl.kys, bl.ars, bl.kys, bl.b + v0 * L, bl.nrows, bl.ncols, !first || k > 0);
          }
        };
        if (stack > 1) {  // whole filter rows stacked, KY at a time (one tile of m rows each)
          for (int64_t ky = 0; ky < p.filter_h;) {
            const int64_t ks = imin(stack, p.filter_h - ky);
            for (int64_t v0 = 0; v0 < nv; v0 += nrv1) {
              const int64_t v = imin(nrv1, nv - v0);
              T* ct = out + ky * m * co + v0 * L;
              auto stacked = [&]<int NV>() {
                each(ky, v0, [&](const T* at, int64_t ars, int64_t kys, const T* bt, int64_t nr, int64_t nc, bool acc) {
                  if (ks == 1) few_c_tile<T, Arch, NV>(m, nr, nc, at, ars, acs, bt, dys, co, ct, co, acc);
                  else if (ks == 2) few_c_stack_tile<T, Arch, 2, NV>(m, nr, nc, at, ars, acs, kys, bt, dys, co, ct, co, acc);
                  else few_c_stack_tile<T, Arch, 3, NV>(m, nr, nc, at, ars, acs, kys, bt, dys, co, ct, co, acc);
                });
              };
              if (v == 2) stacked.template operator()<2>();
              else stacked.template operator()<1>();
            }
            ky += ks;
          }
        } else {  // a filter row at a time, its m rows in plan.tiles tiles
          for (int64_t ky = 0; ky < p.filter_h; ++ky)
            for (int64_t t = 0, r0 = 0; t < plan.tiles; ++t) {
              const int64_t rt = m / plan.tiles + (t < m % plan.tiles);  // rows of this tile
              for (int64_t v0 = 0; v0 < nv; v0 += nrv1) {
                const int64_t v = imin(nrv1, nv - v0);
                T* ct = out + (ky * m + r0) * co + v0 * L;
                // The tile's first (kx, c) value is r0 values into filter row ky's.
                each(ky, v0, [&](const T* at, int64_t ars, int64_t, const T* bt, int64_t nr, int64_t nc, bool acc) {
                  if constexpr (kFewCVecMax >= 2)
                    if (v == 2) return few_c_tile<T, Arch, 2>(rt, nr, nc, at + r0, ars, acs, bt, dys, co, ct, co, acc);
                  few_c_tile<T, Arch, 1>(rt, nr, nc, at + r0, ars, acs, bt, dys, co, ct, co, acc);
                });
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

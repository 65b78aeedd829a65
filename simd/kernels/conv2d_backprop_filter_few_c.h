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
// Prefetch (ConvTuning::filter_few_c_prefetch): a segment's dy rows are read once per pass (a
// filter row, or a group of stacked rows, times the out_c vector passes), the first pass from
// memory when dy is past the L2 (batch 32: 4 MB at 32x32x32). Where a segment takes several
// passes and dy is past a size (ConvTuning::filter_few_c_prefetch_bytes), the passes after the
// first prefetch the next segment's dy lines into L2, one line (or less) per pixel, so that the
// next first pass finds them there;
// the first pass prefetches the x rows the next segment copies (their copy was 22% of the
// one-pass 3x3 64x64x3->16 s2 row at batch 32, perf: a copy waiting on memory). One burst of
// prefetches before each segment lost 7-25% instead (session 24).
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

// Filter rows stacked in one tile: KY filter rows ky + k (k < KY) of J = m values each, for one
// output pixel: rows (k, j) of A at a[k*kys + j] (kys: the x buffer's rows between filter rows),
// C's rows k*J + j consecutive (J = m: the whole filter row). Per pixel one load of NRV dy
// vectors feeds KY*J*NRV FMAs into as many independent accumulators: with out_c 16 (NRV 1) and
// m = 9 a lone filter row has 9 chains of FMAs, too few to hide the FMA latency at two FMAs per
// cycle; 3x3x3 stacks to 27. Each accumulator's chain is FewCTile's: the same bits.
template <class T, class Arch, int KY, int J, int NRV>
struct FewCStackTile {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  static constexpr int64_t L = V::width;

  // pf_step > 0: pixel k also prefetches the line at pf + k*pf_step into L2 (an address, never
  // read: a hint for the driver's next segment). Two bodies, the loop chosen once per call: a
  // prefetch test inside the loop (or the loop as a lambda over acc) kept acc out of registers.
  static void run(int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs, int64_t kys, const T* b,
                  int64_t ldb, T* c, int64_t ldc, bool accumulate, uintptr_t pf, int64_t pf_step) {
    if (pf_step > 0) body<true>(nrows, ncols, a, ars, acs, kys, b, ldb, c, ldc, accumulate, pf, pf_step);
    else body<false>(nrows, ncols, a, ars, acs, kys, b, ldb, c, ldc, accumulate, 0, 0);
  }

  template <bool PF>
  GRADRT_SIMD_NOINLINE static void body(int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs,
                                        int64_t kys, const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate,
                                        uintptr_t pf, int64_t pf_step) {
    B acc[KY][J][NRV];
#pragma GCC unroll 4
    for (int k = 0; k < KY; ++k)
#pragma GCC unroll 32
      for (int i = 0; i < J; ++i)
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j)
          acc[k][i][j] = accumulate ? V::load(c + (k * J + i) * ldc + j * L) : V::zero();
    for (int64_t r = 0; r < nrows; ++r) {
      // One pointer per filter row, each moved by acs per pixel: the broadcasts then take
      // constant displacements (i*sizeof(T)). With one pointer GCC kept the KY*J offsets
      // k*kys + i in registers, spilled a third of them and reloaded them every pixel.
      const T* ak[KY];
#pragma GCC unroll 4
      for (int k = 0; k < KY; ++k) ak[k] = a + r * ars + k * kys;
      GRADRT_GEMM_K_LOOP
      for (int64_t q = 0; q < ncols; ++q, b += ldb) {
#pragma GCC unroll 4
        for (int k = 0; k < KY; ++k) GRADRT_OPAQUE_POINTER(ak[k]);
        B bv[NRV];
#pragma GCC unroll 4
        for (int j = 0; j < NRV; ++j) bv[j] = V::load(b + j * L);
#pragma GCC unroll 4
        for (int k = 0; k < KY; ++k)
#pragma GCC unroll 32
          for (int i = 0; i < J; ++i) {
            const B av = V::set1(ak[k][i]);
#pragma GCC unroll 4
            for (int j = 0; j < NRV; ++j) acc[k][i][j] = V::fma(av, bv[j], acc[k][i][j]);
          }
#pragma GCC unroll 4
        for (int k = 0; k < KY; ++k) ak[k] += acs;
        if constexpr (PF) {
          prefetch_line_l2<Arch>(pf);
          pf += uintptr_t(pf_step);
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

// c[i*ldc + j] (+)= sum_{r < nrows, q < ncols} a[r*ars + q*acs + i] * b[(r*ncols + q)*ldb + j]
// for i < R, j < NRV*L: R rows of A at a constant stride acs per pixel (a row of output pixels)
// and ars per output row; b's rows are consecutive pixels (ldb apart). accumulate: add onto c.
// One filter row: the stacked tile with KY = 1 (the same machine code: k*kys is 0).
template <class T, class Arch, int R, int NRV>
struct FewCTile {
  static void run(int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs, const T* b, int64_t ldb, T* c,
                  int64_t ldc, bool accumulate, uintptr_t pf, int64_t pf_step) {
    FewCStackTile<T, Arch, 1, R, NRV>::run(nrows, ncols, a, ars, acs, 0, b, ldb, c, ldc, accumulate, pf, pf_step);
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
                         int64_t acs, int64_t kys, const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate,
                         int64_t pf_step) {
  const uintptr_t pf = reinterpret_cast<uintptr_t>(b);
  auto with = [&]<int KY, int V>() {
    few_c_stack_tile<T, Arch, KY, V>(j, nrows, ncols, a, ars, acs, kys, b, ldb, c, ldc, accumulate, pf, pf_step);
  };
  if (ky == 2) nrv == 2 ? with.template operator()<2, 2>() : with.template operator()<2, 1>();
  else if (ky == 3) nrv == 2 ? with.template operator()<3, 2>() : with.template operator()<3, 1>();
}

// dst[0, n) = src[0, n): whole vectors, then the tail one value at a time (a buffer row of a
// first layer: 192 values at 64x64x3). libc's memmove took 13% of the 3x3 64x64x3->16 s2 row
// (perf, Zen 5, batch 8); inline, that row and 64x64x3->32 took 0.94-0.98x the time, 1 and 2
// threads, batch 1 and 8, the 7x7 and s1 rows 0.99-1.00x (cli_ab --small-c, 7 rounds).
template <class T, class Arch>
inline void copy_values(T* dst, const T* src, int64_t n) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  int64_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    const auto a = V::load(src + i), b = V::load(src + i + L);
    const auto c = V::load(src + i + 2 * L), d = V::load(src + i + 3 * L);
    V::store(dst + i, a), V::store(dst + i + L, b), V::store(dst + i + 2 * L, c), V::store(dst + i + 3 * L, d);
  }
  for (; i + L <= n; i += L) V::store(dst + i, V::load(src + i));
  for (; i < n; ++i) dst[i] = src[i];
}

// Vectors of out_c per single-row tile: 1 or 2 (every unit's default GEMM tile has 2; a wider
// one is capped at 2).
constexpr int kFewCVecMax = kFewCVec < 2 ? kFewCVec : 2;

// few_c_tile by run-time (nrv, r), for the micro-kernel tester (table.h RowUkernels::few_c).
template <class T, class Arch>
void few_c_ukernel(int nrv, int64_t r, int64_t nrows, int64_t ncols, const T* a, int64_t ars, int64_t acs,
                   const T* b, int64_t ldb, T* c, int64_t ldc, bool accumulate, int64_t pf_step) {
  const uintptr_t pf = reinterpret_cast<uintptr_t>(b);
  if constexpr (kFewCVecMax >= 2)
    if (nrv == 2) return few_c_tile<T, Arch, 2>(r, nrows, ncols, a, ars, acs, b, ldb, c, ldc, accumulate, pf, pf_step);
  if (nrv == 1) few_c_tile<T, Arch, 1>(r, nrows, ncols, a, ars, acs, b, ldb, c, ldc, accumulate, pf, pf_step);
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

// tuning: whole filter rows in one tile where they fit (filter_few_c_stack); the next segment's x
// rows and dy prefetched during a segment's passes (filter_few_c_prefetch, from
// filter_few_c_prefetch_bytes of dy).
template <class T, class Arch>
void conv2d_backprop_filter_few_c(const Exec& exec, const ConvParams& p, const ConvTuning& tuning, const T* x,
                                  const T* dy, T* dw) {
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
  if (tuning.filter_few_c_stack && nrv1 <= 2)
    for (int64_t k = 2; k <= imin(3, p.filter_h); ++k)
      if (k * m * nrv1 <= few_c_stack_acc<T, Arch>(nrv1)) stack = k;
  Arena scratch(exec);  // sizes: conv2d_backprop_filter_few_c_scratch
  T* part = f.chunks > 1 ? scratch.take<T>(f.chunks * nw) : dw;
  ThreadParts parts(scratch, conv2d_backprop_filter_few_c_scratch<T>(p).per_thread, exec.threads);
  const int64_t in_h = p.in_h, in_w = p.in_w, sh = p.stride_h, sw = p.stride_w, pt = p.pad_top, pl = p.pad_left;
  // Buffer column b is x column b - pl: x's columns fill [b_lo, b_hi), zeros around.
  const int64_t b_lo = imin(imax(pl, 0), f.wb), b_hi = imin(imax(in_w + pl, b_lo), f.wb);
  const int64_t rows = p.batch * p.out_h;
  // Passes over a segment's dy rows: filter rows (or stacks of them) times out_c vector passes.
  const int64_t passes = (stack > 1 ? (p.filter_h + stack - 1) / stack : p.filter_h * plan.tiles) * ((nv + nrv1 - 1) / nrv1);
  const bool prefetch =
      tuning.filter_few_c_prefetch && p.y_elements() * int64_t(sizeof(T)) >= tuning.filter_few_c_prefetch_bytes;
  par(exec, f.chunks, 1, [&](int64_t c0, int64_t c1) {
    Arena mine = parts.mine();
    T* xb = mine.take<T>(f.seg_in_rows * rowlen);
    // The padding columns [0, b_lo) and [b_hi, wb) of every buffer row are zeroed here, once per
    // call of this thread: the copies below write only columns [b_lo, b_hi) (a row outside x: zeros
    // there). The per-row memsets of the pads were ~3% of the 3x3 64x64x3->16 s2 row (perf).
    std::memset(static_cast<void*>(xb), 0, sizeof(T) * size_t(f.seg_in_rows * rowlen));
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
          T* dst = xb + b_lo * ci + j * rowlen;
          const size_t bytes = sizeof(T) * size_t((b_hi - b_lo) * ci);
          if (iy < 0 || iy >= in_h) std::memset(static_cast<void*>(dst), 0, bytes);
          else copy_values<T, Arch>(dst, x + ((n * in_h + iy) * in_w + b_lo - pl) * ci, (b_hi - b_lo) * ci);
        }
        const T* dyr = dy + r * p.out_w * co;  // the segment's pixels, consecutive in dy
        const int64_t ars = sh * rowlen, acs = sw * ci;
        // The next segment and beyond (output rows [rn, rn + nr): up to seg_rows, where the next
        // segment ends sooner, the start of the one after; it may belong to another thread's chunk:
        // a prefetch is only a hint): pass 0 prefetches the x rows the next segment copies (in
        // image rn / out_h), passes i >= 1 a share of the dy lines, at most one line per pixel each.
        const int64_t rn = r + sr, nr = prefetch ? imin(f.seg_rows, rows - rn) : 0;
        Lines x_next, dy_next;
        if (nr > 0) {
          x_next = lines_of(x, p.x_rows_under(rn, imin(rn + nr, (rn / p.out_h + 1) * p.out_h) - 1));
          if (passes > 1) dy_next = lines_of(dy, std::pair{rn * p.out_w * co, (rn + nr) * p.out_w * co});
        }
        const int64_t px = sr * p.out_w;  // pixels per pass
        int64_t pass = 0;
        uintptr_t pf = 0;
        int64_t pf_step = 0;
        auto next_pass = [&] {  // pf, pf_step of pass number `pass`
          const int64_t i = pass++;
          const PrefetchShare s =
              i == 0 ? prefetch_share(x_next, 0, 1, px) : prefetch_share(dy_next, i - 1, passes - 1, px);
          pf = s.at, pf_step = s.step;
        };
        if (stack > 1) {  // whole filter rows stacked, KY at a time (one tile of m rows each)
          for (int64_t ky = 0; ky < p.filter_h;) {
            const int64_t ks = imin(stack, p.filter_h - ky);
            for (int64_t v0 = 0; v0 < nv; v0 += nrv1) {
              const int64_t v = imin(nrv1, nv - v0);
              const T* at = xb + ky * p.dilation_h * rowlen;
              const T* bt = dyr + v0 * L;
              T* ct = out + ky * m * co + v0 * L;
              const int64_t kys = p.dilation_h * rowlen;
              next_pass();
              auto stacked = [&]<int NV>() {
                if (ks == 1) few_c_tile<T, Arch, NV>(m, sr, p.out_w, at, ars, acs, bt, co, ct, co, !first, pf, pf_step);
                else if (ks == 2)
                  few_c_stack_tile<T, Arch, 2, NV>(m, sr, p.out_w, at, ars, acs, kys, bt, co, ct, co, !first, pf, pf_step);
                else few_c_stack_tile<T, Arch, 3, NV>(m, sr, p.out_w, at, ars, acs, kys, bt, co, ct, co, !first, pf, pf_step);
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
                // The tile's first (kx, c) value in x row 0 of filter row ky.
                const T* at = xb + ky * p.dilation_h * rowlen + r0;
                const T* bt = dyr + v0 * L;
                T* ct = out + (ky * m + r0) * co + v0 * L;
                next_pass();
                if constexpr (kFewCVecMax >= 2)
                  if (v == 2) {
                    few_c_tile<T, Arch, 2>(rt, sr, p.out_w, at, ars, acs, bt, co, ct, co, !first, pf, pf_step);
                    continue;
                  }
                few_c_tile<T, Arch, 1>(rt, sr, p.out_w, at, ars, acs, bt, co, ct, co, !first, pf, pf_step);
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

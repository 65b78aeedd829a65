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
//
// Index math inside a class: pixel (n, a, b) of the class is iy = py + a*sh, ix = px + b*sw,
// and for valid tap (u, v) its dy source is oy = a + du[u], ox = b + dv[v] with the exact
// quotients du[u] = (py + pt - ky_u*dh) / sh, dv[v] = (px + pl - kx_v*dw) / sw. So a tile's
// pointer table is (pixel offset) + (tap offset) where in bounds: no division per entry
// (building it with divisions cost 12% of the op).
#pragma once

#include "common.h"
#include "conv2d_backprop_input_stream.h"
#include "../ukernels/gemm.h"
#include "../ukernels/pack.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Small images: a zero-bordered copy of dy ("padded dy"). Most tiles of a 16x16 image hold a
// pixel whose taps leave dy (its first or last column or row), and such a tile takes the
// per-tap path: a pointer table of taps x MR entries with bounds checks, then K runs of ocg
// values (perf, 3x3 s1 16x16x32 -> 32, batch 32, 1 thread: 21% of the op in the driver's tile
// loop; the GEMM micro-kernel itself runs there at ~85% of the FMA peak). With dy copied into
// a buffer with zeros around it (pt/pl rows/columns before, enough after), every tap of every
// pixel lies inside the copy, so every tile takes one merged K run per filter row from each
// pixel's own offset. The bits stay: the merged runs visit a filter row's taps in the order
// the per-tap path does (descending kx), and a zero row adds 0 * w where that path skipped
// the tap or read the zero row (the same value for finite w).
struct DyPad {
  bool on = false;
  int64_t top = 0, left = 0, h = 0, w = 0;  // rows/columns before dy; the copy's height and width
  int64_t rows = 0;  // row tiles of this many pixels (0: MR-pixel tiles in pixel order), see below
};

// One phase ph of an axis (class pixels a = 0 .. cnt-1 at ph + a*stride): the lowest and
// highest dy offset of its valid taps (d = (ph + pad - t*dil) / stride exactly), whether it has
// any, and its edge pixels (a with a tap outside [0, out)).
struct PadPhase {
  int64_t cnt = 0, dmin = 0, dmax = 0, edge = 0;
  bool taps = false;
};
inline PadPhase pad_phase(int64_t ph, int64_t in, int64_t out, int64_t stride, int64_t pad, int64_t k, int64_t dil) {
  PadPhase r;
  r.cnt = (in - ph + stride - 1) / stride;
  for (int64_t t = 0; t < k; ++t)
    if (floormod(ph + pad - t * dil, stride) == 0) {
      const int64_t d = floordiv(ph + pad - t * dil, stride);
      r.dmin = r.taps ? imin(r.dmin, d) : d, r.dmax = r.taps ? imax(r.dmax, d) : d, r.taps = true;
    }
  // a < -dmin or a > out - 1 - dmax: a tap outside dy
  const int64_t low = imin(r.cnt, imax(0, -r.dmin)), high = imin(r.cnt, imax(0, r.cnt - (out - r.dmax)));
  r.edge = r.taps ? imin(r.cnt, low + high) : 0;
  return r;
}

// Whether (and how) this shape with MR-pixel tiles runs on padded dy: merged taps only (one
// group, undilated columns), and when half or more of the tiles would hold an edge pixel (the
// copy costs ~5% of the 16x16x32 s1 op at batch 32; at a third, 3x3 s2 on 16x16x64 took 3%
// more time, 32x32x32 the same: bench/results_xeon_emr.txt, session 12).
// Estimate per class (ch x cw pixels, er edge rows, ec edge columns): the edge rows' tiles,
// and in each other row one run of ec edge pixels (a row's last and the next row's first are
// neighbours in tile order), which meets (ec - 1 + MR) / MR tiles. 3x3 s1 (MR 12): 16x16 84%
// of the tiles, 28x28 47%, 56x56 24%; 3x3 s2 16x16 53%, 32x32 39% (MR 6: 41%, 21%); 1x1: none.
//
// Row tiles (`rows`, ConvTuning::input_pad_rows): on padded dy, tiles of R pixels that never
// leave a class row, R the tile's MR or its 2MR/3-row kernel (rows_b), the larger that divides
// every class row (16x16 s1 with 12x2: R = 8, two tiles a row). Such a tile has one dy row per
// filter row, so a filter row whose dy row lies in the zero border (the image's first and last
// rows under 3x3 pad 1) is dropped with its whole K run, as the per-tap path drops a tap that
// is padding for every pixel of its tile: same bits (an empty product adds nothing), and
// 16x16 s1 computes 46 of 48 filter-row runs (the border columns' taps stay inside the runs).
// Only where R x NRV keeps >= 16 accumulators (8x2, 4x4), enough FMAs per broadcast.
inline DyPad conv2d_backprop_input_dy_pad(const ConvParams& p, int64_t MR, bool allowed, bool rows_allowed = false,
                                          int64_t NRV = 0) {
  DyPad d;
  if (!allowed || p.groups != 1 || p.dilation_w != 1 || p.x_elements() == 0 || p.out_h * p.out_w == 0) return d;
  int64_t lo_y = 0, hi_y = p.out_h - 1, lo_x = 0, hi_x = p.out_w - 1;
  double edge = 0;  // estimated pixels in tiles with an edge pixel, per image
  for (int64_t py = 0; py < imin(p.stride_h, p.in_h); ++py) {
    const PadPhase y = pad_phase(py, p.in_h, p.out_h, p.stride_h, p.pad_top, p.filter_h, p.dilation_h);
    if (!y.taps) continue;
    lo_y = imin(lo_y, y.dmin), hi_y = imax(hi_y, y.cnt - 1 + y.dmax);
    for (int64_t px = 0; px < imin(p.stride_w, p.in_w); ++px) {
      const PadPhase x = pad_phase(px, p.in_w, p.out_w, p.stride_w, p.pad_left, p.filter_w, 1);
      if (!x.taps) continue;
      lo_x = imin(lo_x, x.dmin), hi_x = imax(hi_x, x.cnt - 1 + x.dmax);
      const double all = double(y.cnt * x.cnt);
      double e = double(y.edge * x.cnt);
      if (x.edge > 0) e += double(y.cnt - y.edge) * double((x.edge - 1 + MR) / MR * MR);
      edge += e < all ? e : all;
    }
  }
  if (2.0 * edge < double(p.in_h * p.in_w)) return d;
  d.on = true;
  d.top = -lo_y, d.left = -lo_x;
  d.h = hi_y - lo_y + 1, d.w = hi_x - lo_x + 1;
  if (!rows_allowed) return d;
  for (const int64_t r : {MR, int64_t(rows_b(int(MR)))}) {
    bool fits = r * NRV >= 16;
    for (int64_t px = 0; px < imin(p.stride_w, p.in_w); ++px)
      fits = fits && (p.in_w - px + p.stride_w - 1) / p.stride_w % r == 0;
    if (fits) return d.rows = r, d;
  }
  return d;
}

// Edge groups (ConvTuning::input_edge_groups): a class's pixels split by their valid kx taps, so
// that no tile computes a border column's zero tap. Column groups: runs of class columns b whose valid merged kx taps
// v in [vlo, vhi] (0 <= b + dv[v] < out_w) are the same: on 3x3 pad 1, the first column
// (kx = 2 reads column -1), the last, and the columns between. A group's tiles are MR of its
// pixels (over every image: a tile may span class rows and images), each pixel a merged K run
// per filter row from its own dy offset, trimmed to [vlo, vhi] (B starts at kx = kxs[vhi]):
// border columns' zero taps are never computed. Rows: a filter row whose dy row is outside dy
// for every pixel of the tile is dropped; for some pixels only, they read a zero run (GroupPixel
// orders a group's pixels so that border rows share tiles). Each pixel still sums its valid
// taps in the order of every other path (filter rows ascending, kx descending): the same bits
// for finite w (a skipped 0 * w leaves the sum as it was; sums start at +0), and no dy copy.
//
// The share of MR-pixel tiles (in pixel order) holding an edge pixel, per conv2d_backprop_input_dy_pad's estimate.
inline double conv2d_backprop_input_edge_share(const ConvParams& p, int64_t MR) {
  if (p.x_elements() == 0 || p.out_h * p.out_w == 0) return 0;
  double edge = 0;
  for (int64_t py = 0; py < imin(p.stride_h, p.in_h); ++py) {
    const PadPhase y = pad_phase(py, p.in_h, p.out_h, p.stride_h, p.pad_top, p.filter_h, p.dilation_h);
    if (!y.taps) continue;
    for (int64_t px = 0; px < imin(p.stride_w, p.in_w); ++px) {
      const PadPhase x = pad_phase(px, p.in_w, p.out_w, p.stride_w, p.pad_left, p.filter_w, 1);
      if (!x.taps) continue;
      const double all = double(y.cnt * x.cnt);
      double e = double(y.edge * x.cnt);
      if (x.edge > 0) e += double(y.cnt - y.edge) * double((x.edge - 1 + MR) / MR * MR);
      edge += e < all ? e : all;
    }
  }
  return edge / double(p.in_h * p.in_w);
}

// Edge groups for merged taps (one group, undilated columns) where a quarter or more of the
// MR-pixel tiles would hold an edge pixel (3x3 s1 16x16 and 28x28, 3x3 s2 16x16 and 32x32).
inline bool conv2d_backprop_input_edge_groups(const ConvParams& p, int64_t MR, bool allowed) {
  return allowed && p.groups == 1 && p.dilation_w == 1 && 4.0 * conv2d_backprop_input_edge_share(p, MR) >= 1.0;
}

// Pixel order inside a column group (gw columns from b0, class rows 0 .. ch-1, nb images): the
// top border rows (a < top) row by row across the images, then the middle rows image by image,
// then the bottom border rows (a >= bot) row by row. Pixels with the same valid filter rows
// sit together (most tiles drop the same zero filter rows), and in the middle consecutive
// tiles keep to an image's neighbouring rows (their dy rows shared in L1).
struct GroupPixel {
  int64_t b0, gw, nb, top, bot;
  int64_t a = 0, n = 0, b = 0;
  void locate(int64_t m) {  // the group's m-th pixel
    const int64_t row = nb * gw, top_px = top * row, mid_img = (bot - top) * gw;
    b = b0 + m % gw;
    if (m < top_px) {
      a = m / row, n = m % row / gw;
    } else if (m - top_px < nb * mid_img) {
      m -= top_px, n = m / mid_img, a = top + m % mid_img / gw;
    } else {
      m -= top_px + nb * mid_img, a = bot + m / row, n = m % row / gw;
    }
  }
  void next() {
    if (++b < b0 + gw) return;
    b = b0;
    if (a >= top && a < bot) {  // middle rows: an image's rows, then the next image's
      if (++a < bot) return;
      a = top;
      if (++n < nb) return;
      n = 0, a = bot;  // on to the bottom rows
      return;
    }
    if (++n < nb) return;
    n = 0, ++a;  // the next border row (after the last top row: the first middle or bottom row)
  }
};

// Whether each thread packs the filter panels into its own part (see the driver): at most 2
// threads, or where one thread's pack is under ~1% of its share of the GEMM.
inline bool conv2d_backprop_input_private_panels(const ConvParams& p, int64_t threads, int64_t panel_values) {
  const double flops = 2.0 * double(p.x_elements()) * double(p.filter_h * p.filter_w * (p.out_c / imax(1, p.groups)));
  return threads <= 2 || double(panel_values) * double(threads) * 4000.0 <= flops;
}

// Scratch with tile MR x NR: the phase classes' tap lists, a zero row and the packed filter
// (shared, or one copy per thread: `private_panels`); per thread, the tile's row/column
// validity, its A/B pointers for at most every tap, and (padded dy) one image's copy.
template <class T>
ScratchSize conv2d_backprop_input_scratch(const ConvParams& p, int64_t MR, int64_t NR, const DyPad& pad, bool private_panels) {
  const int64_t taps = p.filter_h * p.filter_w, fic = p.filter_in_c, ocg = p.out_c / imax(1, p.groups);
  const int64_t np = (fic + NR - 1) / NR, ncls = imin(p.stride_h, p.in_h) * imin(p.stride_w, p.in_w);
  const int64_t panels = p.groups * np * taps * ocg * NR + 1;
  ScratchSize s;
  s.add(line_bytes<int64_t>(ncls * (11 + 2 * (p.filter_h + p.filter_w)) + p.filter_w + 1))
      .add(line_bytes<int64_t>(ncls * (2 * p.filter_w + 1) * 5 + 1))
      .add(line_bytes<T>(p.filter_w * ocg + 1));
  if (pad.on) s.add_per_thread(line_bytes<int64_t>(1) + line_bytes<T>(pad.h * pad.w * p.out_c));
  if (private_panels) s.add_per_thread(line_bytes<T>(panels));
  else s.add(line_bytes<T>(panels));
  return s.add_per_thread(line_bytes<int32_t>(MR * (p.filter_h + p.filter_w) + 1))
      .add_per_thread(line_bytes<const T*>((taps + 1) * MR))
      .add_per_thread(line_bytes<const T*>(taps + 1));
}

// With the GEMM tile MR x NRV vectors (and its 2MR/3, MR/3-row variants for remainders).
template <class T, class Arch, int MR_, int NRV>
void conv2d_backprop_input_tiled(const Exec& exec, const ConvTuning& tu, const ConvParams& p, const T* w, const T* dy,
                                 T* dx) {
  using G = Gemm<T, Arch, MR_, NRV>;
  constexpr int64_t MR = MR_, NR = G::NR;
  constexpr int kMB = rows_b(MR_), kMC = rows_c(MR_);
  const int64_t taps = p.filter_h * p.filter_w, fic = p.filter_in_c, groups = p.groups;
  const int64_t ocg = p.out_c / groups, np = (fic + NR - 1) / NR;
  if (p.x_elements() == 0) return;

  const int64_t row_c = p.out_w * p.out_c;  // dy offset of one output row
  // Phase classes, all in one parallel pass (a pass per class cost a pool wake-up each:
  // 4 for a stride-2 op). Class q = (py, px) keeps its tap lists in cls + q*CL:
  // [0] py, [1] px, [2] nky, [3] nkx, [4] ch, [5] cw, [6] first tile, then kys, du (fh each),
  // kxs, dv (fw each), then (edge groups) its first column group, their count, and its top
  // and bottom border rows (GroupPixel's top, bot). du[u] = (py + pt - kys[u]*dh) / sh
  // exactly, likewise dv. Column group j: grp + j*5 = b0, gw, vlo, vhi, first tile (in class).
  const int64_t cy = imin(p.stride_h, p.in_h), cx = imin(p.stride_w, p.in_w), ncls = cy * cx;
  const int64_t fh = p.filter_h, fw = p.filter_w, CL = 11 + 2 * (fh + fw);
  Arena scratch(exec);  // sizes: conv2d_backprop_input_scratch
  int64_t* cls = scratch.take<int64_t>(ncls * CL + fw + 1);
  int64_t* grp = scratch.take<int64_t>(ncls * (2 * fw + 1) * 5 + 1);
  // Merged kx taps (dilation_w 1, one group): the valid kx of a class are kx = r, r + sw,
  // r + 2sw, ... with dy columns ox = b + dv[v], dv falling by exactly 1 per tap, so in
  // reverse kx order they are consecutive dy pixels, and (whole pixels: one group) their
  // channels one contiguous run of nkx*ocg values. An interior tile then reads a filter row's
  // taps as one K run, where the B rows are packed in the same order: the kx of a row sorted
  // by (kx mod sw, descending kx). kpos[kx] is that position (else kpos[kx] = kx).
  const bool merge = groups == 1 && p.dilation_w == 1;
  int64_t* kpos = cls + ncls * CL;
  for (int64_t r = 0, pos = 0; r < imin(p.stride_w, fw); ++r)
    for (int64_t kx = r + (fw - 1 - r) / p.stride_w * p.stride_w; kx >= 0; kx -= p.stride_w)
      kpos[kx] = merge ? pos++ : kx;
  // Padded dy (conv2d_backprop_input_dy_pad): the tiles go image by image (tiles_img each; a
  // tile never spans images), and each thread copies an image into its own part when its next
  // tile is in another image: dyp[y][x][:] = dy[n][y - top][x - left][:] inside dy, zeros
  // around it. Copied just before its tiles read it, the copy is in L1/L2 (a copy of the whole
  // dy up front took ~5% of the 16x16x32 s1 op at batch 32 and left it in L3).
  // The one place the driver decides padded dy (its workspace size and the plan's tiles string
  // call the same rule with the same tile).
  const bool edge_groups = conv2d_backprop_input_edge_groups(p, MR, tu.input_edge_groups);  // merged taps only
  const DyPad pad = edge_groups ? DyPad{} : conv2d_backprop_input_dy_pad(p, MR, tu.input_pad_dy, tu.input_pad_rows, NRV);
  const bool prefetch_dy = tu.input_prefetch_dy;
  // ConvTuning::input_prefetch_dx, input_k_block (sizes in bytes of dx, dy).
  const bool prefetch_dx = tu.input_prefetch_dx && p.stride_w == 1 &&
                           p.x_elements() * int64_t(sizeof(T)) >= tu.input_prefetch_dx_bytes;
  const int64_t k_block =
      tu.input_k_block > 0 && p.y_elements() * int64_t(sizeof(T)) >= tu.input_k_block_bytes ? tu.input_k_block : 0;
  int64_t tiles = 0, max_ctaps = 0, ngrp = 0;
  for (int64_t q = 0; q < ncls; ++q) {
    int64_t* cq = cls + q * CL;
    const int64_t py = q / cx, px = q % cx;
    int64_t *kys = cq + 7, *du = kys + fh, *kxs = du + fh, *dv = kxs + fw;
    int64_t nky = 0, nkx = 0;
    for (int64_t ky = 0; ky < fh; ++ky)
      if (floormod(py + p.pad_top - ky * p.dilation_h, p.stride_h) == 0) {
        du[nky] = floordiv(py + p.pad_top - ky * p.dilation_h, p.stride_h);
        kys[nky++] = ky;
      }
    for (int64_t kx = 0; kx < fw; ++kx)
      if (floormod(px + p.pad_left - kx * p.dilation_w, p.stride_w) == 0) {
        dv[nkx] = floordiv(px + p.pad_left - kx * p.dilation_w, p.stride_w);
        kxs[nkx++] = kx;
      }
    const int64_t ch = (p.in_h - py + p.stride_h - 1) / p.stride_h;  // rows iy = py + a*sh
    const int64_t cw = (p.in_w - px + p.stride_w - 1) / p.stride_w;
    cq[0] = py, cq[1] = px, cq[2] = nky, cq[3] = nkx, cq[4] = ch, cq[5] = cw, cq[6] = tiles;
    if (edge_groups) {
      // Column groups: runs of columns b with the same valid kx taps (dv falls as v rises, so
      // the valid v are one range; empty where no tap is inside dy: kc 0, zeros).
      int64_t* cg = cq + CL - 4;
      cg[0] = ngrp, cg[1] = 0;
      for (int64_t b = 0; b < cw; ++b) {
        int64_t lo = 0, hi = nkx - 1;
        while (lo < nkx && b + dv[lo] >= p.out_w) ++lo;
        while (hi >= 0 && b + dv[hi] < 0) --hi;
        if (lo > hi) lo = 0, hi = -1;
        int64_t* last = grp + (ngrp - 1) * 5;
        if (cg[1] > 0 && last[2] == lo && last[3] == hi) {
          ++last[1];
          continue;
        }
        int64_t* g = grp + ngrp * 5;
        g[0] = b, g[1] = 1, g[2] = lo, g[3] = hi, ++ngrp, ++cg[1];
      }
      // Border rows: a + du[nky-1] < 0 at the top, a + du[0] >= out_h at the bottom.
      cg[2] = nky > 0 ? imin(ch, imax(0, -du[nky - 1])) : 0;
      cg[3] = nky > 0 ? imax(cg[2], imin(ch, p.out_h - du[0])) : ch;
      for (int64_t j = cg[0]; j < cg[0] + cg[1]; ++j)
        grp[j * 5 + 4] = tiles - cq[6], tiles += (p.batch * ch * grp[j * 5 + 1] + MR - 1) / MR;
    } else {
      tiles += pad.rows ? ch * (cw / pad.rows) : ((pad.on ? 1 : p.batch) * ch * cw + MR - 1) / MR;
    }
    max_ctaps = imax(max_ctaps, nky * nkx);
  }
  // bpack[g][j][ky*fw + kpos[kx]][oc][NR] = w[ky][kx][j*NR + (0..NR)][g*ocg + oc]: the
  // transposed filter taps, the kx of a filter row permuted by kpos.
  const int64_t panel = taps * ocg * NR, pack_bytes = int64_t(sizeof(T)) * (groups * np * panel + 1);
  // Packs block b = (g, j, t) into bp. The transpose goes in blocks of OB oc: the OB
  // destination rows (OB * NR values) stay in L1 while the NR source rows are read OB values
  // at a time (a column-at-a-time loop over a 64 KiB panel missed L1 on every store: 9% of
  // the 1x1 op).
  auto pack = [&](T* bp, int64_t b) {
    constexpr int64_t OB = 64;
    const int64_t g = b / (np * taps), j = (b / taps) % np, t = b % taps;
    const int64_t nr = imin(NR, fic - j * NR);
    T* dst = bp + (g * np + j) * panel + (t / fw * fw + kpos[t % fw]) * ocg * NR;
    const T* src = w + (t * fic + j * NR) * p.out_c + g * ocg;  // row cc at src + cc*out_c
    for (int64_t o0 = 0; o0 < ocg; o0 += OB) {
      const int64_t ob = imin(OB, ocg - o0);
      int64_t cc = 0;  // 8x8 blocks in registers where the unit can, then one value at a time
      for (; cc + 8 <= nr; cc += 8) {
        int64_t q = 0;
        for (; q + 8 <= ob; q += 8)
          if (!transpose8x8(src + cc * p.out_c + o0 + q, p.out_c, dst + (o0 + q) * NR + cc, NR)) break;
        for (int64_t r = cc; r < cc + 8; ++r)
          for (int64_t qq = q; qq < ob; ++qq) dst[(o0 + qq) * NR + r] = src[r * p.out_c + o0 + qq];
      }
      for (; cc < nr; ++cc) {
        const T* s = src + cc * p.out_c + o0;
        for (int64_t q = 0; q < ob; ++q) dst[(o0 + q) * NR + cc] = s[q];
      }
      for (int64_t cc = nr; cc < NR; ++cc)
        for (int64_t q = 0; q < ob; ++q) dst[(o0 + q) * NR + cc] = T(0);
    }
  };
  const T* zero = scratch.take_zeros<T>(fw * ocg + 1);  // a zero run of up to fw taps
  const int64_t tiles_img = tiles;
  if (pad.on) tiles *= p.batch;
  auto copy_image = [&](T* d, int64_t n) {
    const int64_t oc = p.out_c, row = pad.w * oc, before = pad.left * oc, inside = p.out_w * oc;
    for (int64_t r = 0; r < pad.h; ++r, d += row) {
      const int64_t y = r - pad.top;
      if (y < 0 || y >= p.out_h) {
        std::memset(d, 0, size_t(row) * sizeof(T));
        continue;
      }
      std::memset(d, 0, size_t(before) * sizeof(T));
      std::memcpy(d + before, dy + (n * p.out_h + y) * inside, size_t(inside) * sizeof(T));
      std::memset(d + before + inside, 0, size_t(row - before - inside) * sizeof(T));
    }
  };
  // mine: the calling thread's part (ThreadParts below), past its private panels if any.
  // first: the thread's first chunk of this call (its copy holds no image yet).
  auto run_tiles = [&](Arena& mine, bool first, const T* bpack, int64_t t0, int64_t t1) {
    // ok_r[u*MR + i]: pixel row i has dy row a_i + du[u]; ok_c likewise for columns. Tap-major,
    // so that the per-tap loop over i below vectorizes. int32, not bytes: byte stores may
    // alias anything and made GCC reload every param.
    int32_t* ok_r = mine.take<int32_t>(MR * (fh + fw) + 1);
    int32_t* ok_c = ok_r + MR * fh;
    const T** a = mine.take<const T*>((max_ctaps + 1) * MR);
    const T** b = mine.take<const T*>(max_ctaps + 1);
    int64_t* held = pad.on ? mine.take<int64_t>(1) : nullptr;  // the image in dyp, or -1
    T* dyp = pad.on ? mine.take<T>(pad.h * pad.w * p.out_c) : nullptr;
    if (pad.on && first) *held = -1;
    int64_t pix_off[MR];  // dy offset of (n, a, b) itself (may lie outside dy: only offsets)
    int64_t arow[MR];     // edge groups: the pixel's class row
    int64_t gi = 0;       // edge groups: the column group of the last tile
    const int64_t in_h = p.in_h, in_w = p.in_w, in_c = p.in_c, out_h = p.out_h, out_w = p.out_w,
                  out_c = p.out_c, sh = p.stride_h, sw = p.stride_w;
    int64_t q = 0;
    for (int64_t tile_g = t0; tile_g < t1; ++tile_g) {
      // Padded: tile_g = img * tiles_img + tin, the classes' first tiles counted per image.
      const int64_t img = pad.on ? tile_g / tiles_img : 0, tin = tile_g - img * tiles_img;
      if (tin < cls[q * CL + 6]) q = 0;
      while (q + 1 < ncls && cls[(q + 1) * CL + 6] <= tin) ++q;
      const int64_t* cq = cls + q * CL;
      const int64_t py = cq[0], px = cq[1], nky = cq[2], nkx = cq[3], ch = cq[4], cw = cq[5];
      const int64_t *kys = cq + 7, *du = kys + fh, *kxs = du + fh, *dv = kxs + fw;
      const int64_t npix = (pad.on ? 1 : p.batch) * ch * cw, tile = tin - cq[6];
      // Row tiles (pad.rows = R): cw / R tiles per class row, R pixels each.
      const int64_t R = pad.rows, m0 = R ? tile / (cw / R) * cw + tile % (cw / R) * R : tile * MR;
      int64_t mr = R ? R : imin(MR, npix - m0);  // edge groups: set below
      T* c[MR];
      // The GEMM over the np column panels of group g, taps a/b[0..nt) of kc values each (b
      // advanced per panel). A class's last tile (mr < MR pixels) runs the kMB = 2MR/3 or
      // kMC = MR/3 row kernel where it fits (1x1 28x28: 784 pixels = 65 tiles of 12 and one
      // of 4, which cost a whole tile).
      auto run_panels = [&](int64_t g, int64_t nt, int64_t kc) {
        if (k_block > 0 && nt == 1 && kc > k_block && mr > kMB) {
          // One K run in blocks of k_block values, each over every panel: the tile's A block
          // (MR x k_block values) stays in L1 while the panels' B blocks stream past it (one
          // 512-value run of 12 pixels is 24 KB, a 32-column panel of it 64 KB: A was read
          // from L2 again for each panel). Block k0 > 0 adds onto the stored sums: same bits.
          // A branch of its own: folded into the panel loop below (a k0 loop around it, a and b
          // advanced in place) the 1x1 28x28x256->512 batch-8 row took 1.05x the time (Zen 5).
          for (int64_t k0 = 0; k0 < kc; k0 += k_block) {
            const int64_t kb = imin(k_block, kc - k0);
            const T* ak[MR];
            for (int64_t i = 0; i < MR; ++i) ak[i] = a[i] + k0;
            for (int64_t j = 0; j < np; ++j) {
              T* cj[MR];
              for (int64_t i = 0; i < MR; ++i) cj[i] = c[i] + g * fic + j * NR;
              const T* bj = b[0] + j * panel + k0 * NR;
              const int64_t nr = imin(NR, fic - j * NR);
              if (k0 == 0) G::rows(1, kb, ak, MR, &bj, cj, mr, nr);
              else G::rows_acc(1, kb, ak, MR, &bj, cj, mr, nr);
            }
          }
          return;
        }
        for (int64_t j = 0; j < np; ++j) {
          T* cj[MR];
          for (int64_t i = 0; i < MR; ++i) cj[i] = c[i] + g * fic + j * NR;
          if (j > 0)
            for (int64_t t = 0; t < nt; ++t) b[t] += panel;
          const int64_t nr = imin(NR, fic - j * NR);
          if (mr > kMB) G::rows(nt, kc, a, MR, b, cj, mr, nr);
          else if (mr > kMC) Gemm<T, Arch, kMB, NRV>::rows(nt, kc, a, MR, b, cj, mr, nr);
          else Gemm<T, Arch, kMC, NRV>::rows(nt, kc, a, MR, b, cj, mr, nr);
        }
      };
      // Merged K runs: filter rows u < nt, each pixel's taps read from its own offset pix_off[i]
      // in `base` (rows of row_elems values), B from the packed filter at the row's last kx.
      // row >= 0 (row tiles: every pixel in class row `row`): filter rows whose dy row
      // row + du[u] is outside dy are dropped (all zeros in the padded copy).
      auto merged_runs = [&](const T* base, int64_t row_elems, int64_t nt, int64_t row) {
        int64_t k = 0;
        for (int64_t u = 0; u < nt; ++u) {
          if (row >= 0 && (row + du[u] < 0 || row + du[u] >= out_h)) continue;
          const int64_t toff = du[u] * row_elems + dv[nkx - 1] * out_c;
          const T** at = a + k * MR;
          for (int64_t i = 0; i < MR; ++i) at[i] = base + (pix_off[i] + toff);
          b[k++] = bpack + (kys[u] * fw + kpos[kxs[nkx - 1]]) * ocg * NR;
        }
        run_panels(0, k, nkx * ocg);
      };
      if (edge_groups) {  // the tile = MR pixels of column group gi (GroupPixel order)
        const int64_t g0 = cq[CL - 4], gn = cq[CL - 3];
        if (gi < g0 || gi >= g0 + gn || grp[gi * 5 + 4] > tile) gi = g0;
        while (gi + 1 < g0 + gn && grp[(gi + 1) * 5 + 4] <= tile) ++gi;
        const int64_t* gq = grp + gi * 5;
        const int64_t vlo = gq[2], vhi = gq[3], gm0 = (tile - gq[4]) * MR;
        const int64_t gmr = imin(MR, p.batch * ch * gq[1] - gm0);
        const int64_t kc = vhi >= vlo && nky > 0 ? (vhi - vlo + 1) * ocg : 0;
        const int64_t run0 = kc > 0 ? dv[vhi] * out_c : 0;  // the trimmed run's first dy column
        GroupPixel it{gq[0], gq[1], p.batch, cq[CL - 2], cq[CL - 1]};
        it.locate(gm0);
        for (int64_t i = 0; i < MR; ++i) {
          c[i] = dx + ((it.n * in_h + py + it.a * sh) * in_w + px + it.b * sw) * in_c;
          pix_off[i] = ((it.n * out_h + it.a) * out_w + it.b) * out_c + run0;
          arow[i] = it.a;
          if (i + 1 < gmr) it.next();  // rows >= gmr repeat the last pixel
        }
        int64_t k = 0;
        for (int64_t u = 0; u < (kc > 0 ? nky : 0); ++u) {
          const T** at = a + k * MR;
          int32_t any = 0;
          for (int64_t i = 0; i < MR; ++i) {
            const int32_t in = arow[i] + du[u] >= 0 && arow[i] + du[u] < out_h;
            at[i] = in ? dy + (pix_off[i] + du[u] * row_c) : zero;
            any |= in;
          }
          if (any) b[k++] = bpack + (kys[u] * fw + kpos[kxs[vhi]]) * ocg * NR;
        }
        mr = gmr;
        run_panels(0, k, kc);
        continue;
      }
      int64_t bb = m0 % cw, aa = (m0 / cw) % ch, n = img + m0 / (cw * ch);
      if (pad.on) {  // every tap inside dyp: merged K runs from each pixel's own offset there
        if (*held != n) copy_image(dyp, n), *held = n;
        const int64_t nt = nky > 0 && nkx > 0 ? nky : 0, prow = pad.w * out_c;
        for (int64_t i = 0; i < MR; ++i) {
          c[i] = dx + ((n * in_h + py + aa * sh) * in_w + px + bb * sw) * in_c;
          pix_off[i] = ((aa + pad.top) * pad.w + bb + pad.left) * out_c;
          if (i + 1 < mr && ++bb == cw) bb = 0, ++aa;  // rows >= mr repeat the last pixel
        }
        merged_runs(dyp, prow, nt, R ? (m0 / cw) % ch : -1);
        continue;
      }
      // Interior tile: MR pixels in one class row, every tap inside dy for all of them
      // (du, dv are decreasing: du[0] is the largest). Then pixel i's pointer under any tap
      // is pixel 0's plus i*out_c, and the table is a plain fill (most tiles of a large image).
      const bool interior = mr == MR && nky > 0 && nkx > 0 && bb + MR <= cw && aa + du[nky - 1] >= 0 &&
                            aa + du[0] < out_h && bb + dv[nkx - 1] >= 0 && bb + MR - 1 + dv[0] < out_w;
      if (interior) {
        const int64_t off0 = ((n * out_h + aa) * out_w + bb) * out_c;
        if (prefetch_dy && bb + 2 * MR <= cw && bb + 2 * MR - 1 + dv[0] < out_w) {
          // The next tile of this class row (MR pixels on), if interior in x: its dy lines under
          // every tap row. Each tile's fresh dy row (the bottom tap's) otherwise arrives as
          // 12 streams of 4 lines, too short for the hardware prefetchers: 1 thread, 3x3 s1
          // 56x56x64 -> 64, per image: batch 8 1.24 -> 1.15 ms, batch 1 1.08 -> 1.07 ms (Zen 5).
          // On Emerald Rapids the prefetches cost more than they saved (ConvTuning::
          // input_prefetch_dy: 2-3% faster without, 1 and 2 threads, batch 1 and 8).
          const int64_t span = (MR + dv[0] - dv[nkx - 1]) * out_c * int64_t(sizeof(T));
          for (int64_t u = 0; u < nky; ++u)
            prefetch_lines<Arch>(dy + off0 + MR * out_c + du[u] * row_c + dv[nkx - 1] * out_c, span);
        }
        T* c0 = dx + ((n * in_h + py + aa * sh) * in_w + px + bb * sw) * in_c;
        for (int64_t i = 0; i < MR; ++i) c[i] = c0 + i * sw * in_c;
        // The next tile's dx pixels (contiguous at column stride 1), which its stores would
        // otherwise fetch one line at a time as they miss (a tile stores MR pixels' channels).
        if (prefetch_dx && bb + 2 * MR <= cw) prefetch_lines<Arch>(c0 + MR * in_c, MR * in_c * int64_t(sizeof(T)));
        if (merge) {  // a tap per filter row: its kx from kxs[nkx-1] down to kxs[0]
          for (int64_t u = 0; u < nky; ++u) {
            const T* base = dy + (off0 + du[u] * row_c + dv[nkx - 1] * out_c);
            const T** at = a + u * MR;
            for (int64_t i = 0; i < MR; ++i) at[i] = base + i * out_c;
            b[u] = bpack + (kys[u] * fw + kpos[kxs[nkx - 1]]) * ocg * NR;
          }
          run_panels(0, nky, nkx * ocg);
          continue;
        }
        for (int64_t g = 0; g < groups; ++g) {
          int64_t nt = 0;
          for (int64_t u = 0; u < nky; ++u)
            for (int64_t v = 0; v < nkx; ++v, ++nt) {
              const T* base = dy + (off0 + du[u] * row_c + dv[v] * out_c + g * ocg);
              const T** at = a + nt * MR;
              for (int64_t i = 0; i < MR; ++i) at[i] = base + i * out_c;
              b[nt] = bpack + g * np * panel + (kys[u] * fw + kpos[kxs[v]]) * ocg * NR;
            }
          run_panels(g, nt, ocg);
        }
        continue;
      }
      // all_in: every pixel of the tile (rows >= mr repeat the last) has every tap of the class
      // inside dy, though they may span class rows or images (small images, a 1x1 class row
      // of cw pixels: most tiles); then merged K runs from each pixel's own dy offset.
      bool all_in = merge && nky > 0 && nkx > 0;
      for (int64_t i = 0; i < MR; ++i) {
        const bool real = i < mr;
        c[i] = dx + ((n * in_h + py + aa * sh) * in_w + px + bb * sw) * in_c;
        pix_off[i] = ((n * out_h + aa) * out_w + bb) * out_c;
        if (all_in)
          all_in = aa + du[nky - 1] >= 0 && aa + du[0] < out_h && bb + dv[nkx - 1] >= 0 && bb + dv[0] < out_w;
        for (int64_t u = 0; u < nky; ++u) {
          const int64_t oy = aa + du[u];
          ok_r[u * MR + i] = real && oy >= 0 && oy < out_h;
        }
        for (int64_t v = 0; v < nkx; ++v) {
          const int64_t ox = bb + dv[v];
          ok_c[v * MR + i] = ox >= 0 && ox < out_w;
        }
        if (i + 1 < mr && ++bb == cw) {  // next pixel of the class (rows >= mr repeat the last)
          bb = 0;
          if (++aa == ch) aa = 0, ++n;
        }
      }
      if (all_in) {
        merged_runs(dy, row_c, nky, -1);
        continue;
      }
      for (int64_t g = 0; g < groups; ++g) {
        // Taps where every row is padding are dropped (with their B rows). Merged, a filter
        // row's taps go in descending kx, the order of the merged K runs: every pixel then sums
        // its taps in the same order whichever path its tile takes, so its bits do not depend
        // on the tile (the GEMM tile, or where a tile starts).
        int64_t nt = 0;
        for (int64_t u = 0; u < nky; ++u)
          for (int64_t vv = 0; vv < nkx; ++vv) {
            const int64_t v = merge ? nkx - 1 - vv : vv;
            const int64_t toff = du[u] * row_c + dv[v] * out_c + g * ocg;
            int32_t any = 0;
            const T** at = a + nt * MR;
            for (int64_t i = 0; i < MR; ++i) {
              const int32_t in = ok_r[u * MR + i] & ok_c[v * MR + i];
              at[i] = in ? dy + (pix_off[i] + toff) : zero;
              any |= in;
            }
            if (!any) continue;
            b[nt++] = bpack + g * np * panel + (kys[u] * fw + kpos[kxs[v]]) * ocg * NR;
          }
        run_panels(g, nt, ocg);
      }
    }
  };
  // A plan keeps the packed panels (Exec::state): packed (in parallel, shared) only when the
  // weights changed (PlanRunOptions::weights_version), then read by every thread; the shared
  // and private packing below is for calls without a plan or without a weights version.
  bool kept_current = false;
  if (T* kept = static_cast<T*>(kept_weights(exec, w, size_t(pack_bytes), uint64_t(NR * int64_t(sizeof(T))), &kept_current))) {
    if (!kept_current)
      par(exec, groups * np * taps, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) pack(kept, b);
      });
    ThreadParts parts(scratch, conv2d_backprop_input_scratch<T>(p, MR, NR, pad, false).per_thread, int(exec.threads));
    par_guided(exec, tiles, 1, [&](int64_t t0, int64_t t1) {
      bool first = false;
      Arena mine = parts.mine(&first);
      run_tiles(mine, first, kept, t0, t1);
    });
    return;
  }
  // Who packs. Shared: the panels packed once, in parallel, into the caller's workspace,
  // then read by every thread. Private: each thread packs all of them into its own workspace
  // when it takes its first tiles. Shared, every pack store must first take the line from the
  // other core's cache, where the last call's tiles read it: at 2 threads the pack took 2.5%
  // of the 3x3 56x56x64 -> 64 op (0.2% at 1 thread) and 7.6% of the 1x1 28x28x256 -> 512
  // (2.7%); private, 1.1% and 3.9%, and the op 1-5% faster at batch 1. Private packing
  // repeats the work on every thread, so beyond 2 threads it is taken only where one thread's
  // pack (~0.2 ns a value) is under ~1% of its share of the GEMM (~0.005 ns a flop).
  const int64_t nblocks = groups * np * taps, threads = exec.threads;
  const bool priv = conv2d_backprop_input_private_panels(p, threads, groups * np * panel);
  const ScratchSize sizes = conv2d_backprop_input_scratch<T>(p, MR, NR, pad, priv && threads > 1);
  if (priv && threads > 1) {
    // A thread packs into its own part (the same on each of its chunks) on its first chunk of
    // this call; `parts` (owned by this call) records which threads have.
    ThreadParts parts(scratch, sizes.per_thread, int(threads));
    par_guided(exec, tiles, 1, [&](int64_t t0, int64_t t1) {
      bool first = false;
      Arena mine = parts.mine(&first);
      T* bp = static_cast<T*>(mine.take_bytes(size_t(pack_bytes)));
      if (first)
        for (int64_t b = 0; b < nblocks; ++b) pack(bp, b);
      run_tiles(mine, first, bp, t0, t1);
    });
    return;
  }
  T* bpack = static_cast<T*>(scratch.take_bytes(size_t(pack_bytes)));
  ThreadParts parts(scratch, sizes.per_thread, int(threads));
  par(exec, nblocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) pack(bpack, b);
  });
  // Guided chunks down to one tile (a few microseconds): with 4 fixed chunks per thread the
  // last chunk left one thread idle for up to a quarter of a small op.
  par_guided(exec, tiles, 1, [&](int64_t t0, int64_t t1) {
    bool first = false;
    Arena mine = parts.mine(&first);
    run_tiles(mine, first, bpack, t0, t1);
  });
}

// Keep in step with the takes above (the test "cpu workspace" fails on any shortfall); the
// private-panel rule is the driver's.
// The GEMM tile of this shape: the tuning's, or the unit's tile that pads the fic dx channels
// (the GEMM's N) to fewer columns (ConvTuning::input_fit_columns). On AVX-512, 32 dx channels
// in 6x4's 64 columns computed as many zeros as values.
template <class T, class Arch>
GemmTile conv2d_backprop_input_tile(const ConvTuning& tuning, const ConvParams& p) {
  if (!tuning.input_fit_columns) return tuning.backprop_input;
  return fewest_padded_columns(kTiles, tuning.backprop_input, p.filter_in_c, Vec<T, Arch>::width);
}

template <class T, class Arch>
size_t conv2d_backprop_input_workspace(int threads, const ConvTuning& tuning, const ConvParams& p) {
  if (const int cv = conv2d_backprop_input_stream_vectors<T, Arch>(tuning, p))
    return conv2d_backprop_input_stream_workspace<T, Arch>(cv, p);
  size_t bytes = 0;
  with_gemm_tile<kTiles>(conv2d_backprop_input_tile<T, Arch>(tuning, p), [&]<int MR, int NRV>() {
    constexpr int64_t NR = Gemm<T, Arch, MR, NRV>::NR;
    const int64_t taps = p.filter_h * p.filter_w, ocg = p.out_c / imax(1, p.groups);
    const int64_t panel = taps * ocg * NR, np = (p.filter_in_c + NR - 1) / NR;
    const bool priv = conv2d_backprop_input_private_panels(p, threads, p.groups * np * panel);
    const bool groups = conv2d_backprop_input_edge_groups(p, MR, tuning.input_edge_groups);
    const DyPad pad = groups ? DyPad{} : conv2d_backprop_input_dy_pad(p, MR, tuning.input_pad_dy, tuning.input_pad_rows, NRV);
    bytes = conv2d_backprop_input_scratch<T>(p, MR, NR, pad, priv && threads > 1).total(threads);
  });
  return bytes;
}

template <class T, class Arch>
void conv2d_backprop_input(const Exec& exec, const ConvTuning& tuning, const ConvParams& p, const T* w, const T* dy,
                           T* dx) {
  // 1x1 stride 1 with few dx channels: the streaming path (conv2d_backprop_input_stream.h).
  if (const int cv = conv2d_backprop_input_stream_vectors<T, Arch>(tuning, p))
    return conv2d_backprop_input_stream<T, Arch>(cv, exec, tuning, p, w, dy, dx);
  with_gemm_tile<kTiles>(conv2d_backprop_input_tile<T, Arch>(tuning, p),
                 [&]<int MR, int NRV>() {
                   conv2d_backprop_input_tiled<T, Arch, MR, NRV>(exec, tuning, p, w, dy, dx);
                 });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

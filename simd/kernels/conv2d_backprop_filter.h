// Conv2DBackpropFilter (TF: input = x, out_backprop = dy, output = dw):
//   dw[ky,kx,f,oc] = sum_{n,oy,ox} dy[n,oy,ox,oc] * x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, g*fic + f]
// As a GEMM per group: rows (tap, f) of dw, columns oc of the group, K = output pixels.
// A[(t,f)][k] = x at pixel k under tap t, channel f: for a fixed k the MR rows of a tile are MR
// consecutive channels of one x pixel, so A is read in place through one pointer per k
// (Gemm::cols); B[k][oc] = dy row k, read in place in NR-column panels where a panel row is
// at least a cache line (AVX2, AVX-512), else (and for a partial last panel) copied per K
// chunk into zero-padded panels [k][NR].
//
// Determinism: every dw element is owned by one tile, which sums k in increasing order over
// the K chunks (each chunk adds onto the running value); threads split the tiles only, so
// the bits never depend on the thread count or the split.
//
// K slices (a small dw, a long K: 1x1 32->32 at batch 32 is 3 tiles over 32768 pixels): the
// pixels are cut into S slices by the shape alone (conv2d_backprop_filter_slices); each slice's
// tiles sum their pixels into the slice's own partial dw (in the workspace), and the partials
// are added in slice order at the end (combine_partials). Work items are (slice, tile), so
// threads split the pixels too: each reads its part of x and dy once. The bits depend on S
// (a shape fact), never on the thread count.
#pragma once

#include "common.h"
#include "conv2d_backprop_filter_few_c.h"
#include "../ukernels/gemm.h"
#include "../ukernels/pack.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Scratch with tile MR x NR and K chunk KC: the row tiles' table where more than 64 and a
// zero row (shared); per thread, dy panels, the A pointers, packed tail tiles, a tap's pixel
// table and the chunk's pixel offsets and positions.
template <class T>
ScratchSize conv2d_backprop_filter_scratch(int64_t fic, int64_t np, int64_t MR, int64_t NR, int64_t KC,
                                           int64_t part_elements) {
  const int64_t max_tiles = fic / rows_c(int(MR)) + 2;
  return ScratchSize{}
      .add(line_bytes<T>(part_elements))
      .add(line_bytes<int64_t>(max_tiles > 64 ? 3 * max_tiles : 0))
      .add(line_bytes<T>(fic + MR + 1))
      .add_per_thread(line_bytes<T>(KC * NR * np))
      .add_per_thread(line_bytes<const T*>(KC))
      .add_per_thread(line_bytes<T>(KC * MR))
      .add_per_thread(line_bytes<const T*>(KC))
      .add_per_thread(line_bytes<int64_t>(KC))
      .add_per_thread(line_bytes<int64_t>(3 * KC));
}

// K slices for p with the MR x NR tile (1: none). Only where dw is at most
// filter_split_tiles MR x NR register tiles (groups x taps x row tiles x column panels): there
// the items are too few to share among threads (1x1 32->32 at avx512's 12x2: 3 items, 2 for
// one thread and 1 for the other, each reading all of x and dy); with more tiles (3x3 32->32:
// 27) the items already balance and slices only add the partials' passes (Emerald Rapids,
// 2 threads: 1.07-1.09x the CPU time). The output pixels (batch x out_h x out_w, the GEMM's
// K) are cut into S slices of at least filter_split_pixels each, at most kMaxFilterSlices,
// with the S partial dw within filter_split_kib KiB (the partials' writes and the final pass
// cost ~2 memory accesses per dw value and slice, against a slice's pixels x 1 FMA). Shape,
// dtype and tile only: never the thread count, which would change the bits.
inline constexpr int64_t kMaxFilterSlices = 32;

template <class T>
int64_t conv2d_backprop_filter_slices(const ConvTuning& tuning, const ConvParams& p, int64_t MR, int64_t NR) {
  const int64_t npix = p.batch * p.out_h * p.out_w, nw = p.w_elements();
  if (tuning.filter_split_pixels <= 0 || nw <= 0) return 1;
  const int64_t groups = imax(1, p.groups), ocg = p.out_c / groups;
  const int64_t tiles = groups * p.filter_h * p.filter_w * ((p.filter_in_c + MR - 1) / MR) * ((ocg + NR - 1) / NR);
  if (tiles > tuning.filter_split_tiles) return 1;
  const int64_t by_pixels = npix / tuning.filter_split_pixels;
  const int64_t by_bytes = (tuning.filter_split_kib << 10) / (nw * int64_t(sizeof(T)));
  const int64_t s = imin(kMaxFilterSlices, imin(by_pixels, by_bytes));
  return s >= 2 ? s : 1;
}

// K chunk (pixels per pass over a dw tile; the driver and the workspace size both take it): the
// dy panels of a chunk (KC x ocg) and the x rows it touches stay in L2. Narrow oc (<= 128
// padded columns: 3x3 64->64) takes 512 pixels, halving the dw tile reloads (+2.5% there); wider
// oc keeps 256 (512 was 1-2% slower for 1x1 256->512). The chunking never changes the bits:
// each dw value is one FMA chain in pixel order, stored and reloaded between.
// (Zen 5's figures; `tuning` holds the K chunks per microarchitecture, simd/tuning.cpp.)
inline int64_t conv2d_backprop_filter_kc(const ConvTuning& tuning, int64_t padded_columns) {
  return imax(1, padded_columns <= 128 ? tuning.filter_k_narrow : tuning.filter_k_wide);
}

// With the GEMM tile MR x NRV vectors (and its 2MR/3, MR/3-row variants) and the K chunks of
// `tuning`.
template <class T, class Arch, int MR_, int NRV>
void conv2d_backprop_filter_tiled(const Exec& exec, const ConvTuning& tuning, const ConvParams& p, const T* x,
                                  const T* dy, T* dw) {
  using G = Gemm<T, Arch, MR_, NRV>;
  constexpr int64_t MR = MR_, NR = G::NR;
  const int64_t taps = p.filter_h * p.filter_w, fic = p.filter_in_c, groups = p.groups;
  const int64_t ocg = p.out_c / groups, np = (ocg + NR - 1) / NR;
  const int64_t npix = p.batch * p.out_h * p.out_w;
  const int64_t nw = p.w_elements();
  if (nw == 0) return;
  if (npix == 0) {
    for (int64_t i = 0; i < nw; ++i) dw[i] = T(0);
    return;
  }
  const int64_t KC = conv2d_backprop_filter_kc(tuning, np * NR);
  // In place, each panel pass reads NR values of every dy row: with 32-byte rows (SSE, NEON,
  // WASM) that is half a line per row and the K chunk's dy lines leave L1 between passes
  // (WASM 3x3 and 1x1: 15% slower than packed); with 128-byte rows (AVX-512) packing cost more
  // (each thread packed every panel per K chunk: ~4% at 2 threads). AVX2 (64 bytes): even.
  constexpr bool in_place = NR * int64_t(sizeof(T)) >= 64;
  // Row tiles of the fic channels of a tap: as many MR-row tiles as fit, the rest in
  // tiles of MB = 2MR/3 or MC = MR/3 rows (other instantiations of the same micro-kernel), so
  // that e.g. fic = 64 with MR = 12 runs 4x12 + 2x8 with no wasted rows. A remainder that
  // matches none is padded (its A rows packed with zeros).
  constexpr int MB = rows_b(MR_), MC = rows_c(MR_);
  Arena scratch(exec);  // sizes: conv2d_backprop_filter_scratch
  int64_t tile_f0[64], tile_mr[64], tile_kind[64];  // kind: 0 -> MR, 1 -> MB, 2 -> MC
  int64_t ftiles = 0;
  int64_t* tf0 = tile_f0;
  int64_t* tmr = tile_mr;
  int64_t* tkind = tile_kind;
  {
    const int64_t max_tiles = fic / MC + 2;
    if (max_tiles > 64) {
      int64_t* ws = scratch.take<int64_t>(3 * max_tiles);
      tf0 = ws;
      tmr = ws + max_tiles;
      tkind = ws + 2 * max_tiles;
    }
    int64_t full = fic / MR, r = fic % MR;
    bool split = r > 0 && r <= MC && full > 0 && MB * 2 >= MR + r;  // MR + r -> MB + MB
    if (split) --full;
    int64_t f = 0;
    auto add = [&](int64_t kind, int64_t rows, int64_t cap) {
      tf0[ftiles] = f;
      tmr[ftiles] = imin(rows, cap);
      tkind[ftiles] = kind;
      f += tmr[ftiles];
      ++ftiles;
    };
    for (int64_t i = 0; i < full; ++i) add(0, MR, MR);
    if (split) {
      add(1, MB, MB);
      add(1, fic - f, MB);
    }
    r = fic - f;
    while (r > 0) {
      if (r > MB) add(0, r, MR);
      else if (r > MC) add(1, r, MB);
      else add(2, r, MC);
      r = fic - f;
    }
  }
  auto cap_of = [&](int64_t kind) -> int64_t { return kind == 0 ? MR : kind == 1 ? MB : MC; };  // rows of a kind
  bool partial_tiles = false;  // a row tile narrower than its kind: its rows are packed through off[]
  for (int64_t i = 0; i < ftiles; ++i) partial_tiles |= tmr[i] != cap_of(tkind[i]);
  // Work items (g, jb, t, f-tile), each owning a block of dw. jb splits the oc panels into
  // nb blocks (ConvTuning::filter_oc_blocks): with several threads and a wide, tap-poor filter
  // (1x1: 512 oc) each thread then packs (or, in place, streams) only its own panels of dy,
  // where splitting over (t, f-tile) alone had every thread pack all of them. With many taps
  // the per-tap pointer tables cost more than the packing, and (t, f-tile) is the better split
  // (nb = 1). The split decides only who computes a dw element, never its order of additions.
  const int64_t nb = tuning.filter_oc_blocks && exec.threads > 1 && ocg > 16 * taps ? imin(np, exec.threads) : 1;
  const int64_t npb = (np + nb - 1) / nb;  // panels per block (the last may have fewer)
  // Items: slice-major (slice, g, jb, t, f-tile), so a thread's run of items covers whole
  // slices and reads only their pixels.
  const int64_t slices = conv2d_backprop_filter_slices<T>(tuning, p, MR, NR);
  const int64_t slice_items = groups * nb * taps * ftiles;
  const int64_t items = slices * slice_items;
  T* part = slices > 1 ? scratch.take<T>(slices * nw) : dw;  // partial dw of slice s at s * nw
  // Padding pixels point here; read at offsets f0 + i < fic + MR.
  const T* zero = scratch.take_zeros<T>(fic + MR + 1);
  ThreadParts parts(scratch, conv2d_backprop_filter_scratch<T>(fic, np, MR, NR, KC, 0).per_thread, exec.threads);
  const bool prefetch = tuning.filter_chunk_prefetch &&
                        (p.x_elements() + p.y_elements()) * int64_t(sizeof(T)) >= tuning.filter_chunk_prefetch_bytes;
  par(exec, items, balance_grain(exec, items, 1), [&](int64_t c0, int64_t c1) {
    Arena mine = parts.mine();
    T* bpack = mine.take<T>(KC * NR * np);
    const T** a = mine.take<const T*>(KC);
    T* apack = mine.take<T>(KC * MR);  // tail tiles: [k][MR]
    const T** ptab = mine.take<const T*>(KC);  // per tap: x pixel or zero
    int64_t* off = mine.take<int64_t>(KC);
    int64_t* pix = mine.take<int64_t>(3 * KC);
    // Locals, not p.*: the int64 stores into off/pix may alias the params (all int64), and
    // GCC reloaded them on every iteration.
    const int64_t in_h = p.in_h, in_w = p.in_w, in_c = p.in_c, out_h = p.out_h, out_w = p.out_w;
    const int64_t sh = p.stride_h, sw = p.stride_w, pt = p.pad_top, pl = p.pad_left;
    const int64_t dh = p.dilation_h, dwl = p.dilation_w, fw = p.filter_w;
    // 1x1, stride 1, no padding: output pixel k reads x pixel k, so the tiles read A at a
    // constant stride (Gemm::cols_strided) and the chunk's position and pointer tables are not
    // built (they were ~15% of the Keras 1x1 32->32 filter gradient at batch 32, perf).
    const bool affine = taps == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && out_h == in_h && out_w == in_w;
    for (int64_t s = c0 / slice_items; s * slice_items < c1; ++s) {
      // Slice s: pixels [ks, ke) (s * npix / slices: even cuts, shape only), items [i0, i1) of
      // this chunk, local to the slice; its tiles write the partial out (dw itself at S = 1).
      const int64_t ks = s * npix / slices, ke = (s + 1) * npix / slices;
      const int64_t i0 = imax(c0, s * slice_items) - s * slice_items, i1 = imin(c1, (s + 1) * slice_items) - s * slice_items;
      T* const out = part + s * nw;
      for (int64_t k0 = ks; k0 < ke; k0 += KC) {
        const int64_t kc = imin(KC, ke - k0);
        // Per pixel of the chunk, once (three arrays of KC, so the per-tap loop below vectorizes):
        // the x offset under tap (0, 0) (possibly outside x: only an offset) and the tap-0 input
        // position (stepped pixel by pixel; one division per chunk). Under tap (ky, kx) the offset
        // is that plus a per-tap constant, valid where the position is inside x: an add and two
        // unsigned compares per pixel (the per-tap loop had two multiplies and four compares per
        // pixel and took ~3% of 3x3 filter gradients).
        if (!affine) {
          int64_t ox = k0 % out_w, oy = (k0 / out_w) % out_h, n = k0 / (out_w * out_h);
          for (int64_t k = 0; k < kc; ++k) {
            pix[k] = ((n * in_h + oy * sh - pt) * in_w + ox * sw - pl) * in_c;
            pix[KC + k] = oy * sh - pt;
            pix[2 * KC + k] = ox * sw - pl;
            if (++ox == out_w) {
              ox = 0;
              if (++oy == out_h) oy = 0, ++n;
            }
          }
        }
        // Where x + dy are past the L2 (ConvTuning::filter_chunk_prefetch, _bytes): the chunk's
        // items after the first (which reads x and dy from memory) prefetch the next chunk's x rows
        // and dy lines into L2 (two contiguous ranges), each tile call its share, at most one line
        // of each per pixel, and only where the next chunk's lines are few enough not to push the
        // current one out (filter_chunk_prefetch_ahead). The next chunk: this slice's, else the
        // next slice's when this thread's items cover it. Hints only: the same bits.
        int64_t pf_calls = 0, pf_call = 0;
        Lines x_next, dy_next;
        if (prefetch && i1 - i0 > 1) {
          int64_t kn = k0 + kc, kcn = imin(KC, ke - kn);
          if (kn >= ke && s + 1 < slices && (s + 1) * slice_items < c1)
            kcn = imin(KC, (s + 2) * npix / slices - kn);
          if (kn < npix && kcn > 0) {
            // x: pixels [kn, kn + kcn) of affine, else the x rows under their output rows' taps.
            x_next = lines_of(x, affine ? std::pair{kn * in_c, (kn + kcn) * in_c}
                                        : p.x_rows_under(kn / out_w, (kn + kcn - 1) / out_w));
            dy_next = lines_of(dy, {kn * p.out_c, (kn + kcn) * p.out_c});
            // This thread's FLOPs on the chunk (items of MR rows by npb panels of NR, kc deep)
            // per line prefetched: the gate filter_chunk_prefetch_min_flops.
            const int64_t lines = x_next.count + dy_next.count;
            const int64_t flops = 2 * kc * MR * NR * npb * (i1 - i0);
            if (lines * 64 <= tuning.filter_chunk_prefetch_ahead &&
                flops >= lines * tuning.filter_chunk_prefetch_min_flops)
              pf_calls = (i1 - i0 - 1) * npb;
          }
        }
        int64_t packed = -1, offs_for = -1;
        for (int64_t item = i0; item < i1; ++item) {
          const int64_t gb = item / (taps * ftiles), t = (item / ftiles) % taps, ft = item % ftiles;
          const int64_t g = gb / nb, j0 = (gb % nb) * npb, j1 = imin(np, j0 + npb);
          if (gb != packed) {  // the panels not read in place: dy[k0.., g*ocg + j*NR..] into [kc][NR]
            const T* src = dy + k0 * p.out_c + g * ocg;
            if (!in_place) pack_panels<NR>(src, p.out_c, kc, ocg, j0, j1, KC, bpack);
            else if (j1 == np && np * NR > ocg) pack_panels<NR>(src, p.out_c, kc, ocg, np - 1, np, KC, bpack);
            packed = gb;
          }
          const int64_t f0 = tf0[ft], mr = tmr[ft], kind = tkind[ft];
          const int64_t cap = cap_of(kind);
          if (!affine && offs_for != g * taps + t) {  // x offsets of the chunk's pixels under tap t
            const int64_t ky = t / fw, kx = t % fw;
            const int64_t dyy = ky * dh, dxx = kx * dwl, dt = (dyy * in_w + dxx) * in_c + g * fic;
            const uint64_t uh = static_cast<uint64_t>(in_h), uw = static_cast<uint64_t>(in_w);
            const int64_t* __restrict o00 = pix;
            const int64_t* __restrict iy0 = pix + KC;
            const int64_t* __restrict ix0 = pix + 2 * KC;
            int64_t* __restrict offr = off;
            const T** __restrict pt_ = ptab;
            // Branch-free, x and zero in locals (not the lambda's captures, which GCC reloaded every
            // pixel), offsets only where a partial tile reads them: GCC vectorizes it (it ran scalar
            // with two branches per pixel at ~4 cycles, ~10% of the Keras 3x3 16x16x32->32 b32 call).
            const T* const xl = x;
            const T* const zl = zero;
            if (partial_tiles)
              for (int64_t k = 0; k < kc; ++k) {
                const bool in = (static_cast<uint64_t>(iy0[k] + dyy) < uh) & (static_cast<uint64_t>(ix0[k] + dxx) < uw);
                offr[k] = in ? o00[k] + dt : -1;
              }
            for (int64_t k = 0; k < kc; ++k) {
              const bool in = (static_cast<uint64_t>(iy0[k] + dyy) < uh) & (static_cast<uint64_t>(ix0[k] + dxx) < uw);
              pt_[k] = in ? xl + (o00[k] + dt) : zl;
            }
            offs_for = g * taps + t;
          }
          // Full tiles read x in place through the tap's table (shifted by f0); a partial tile
          // copies its channels so that no read runs past them.
          const T* const* at = ptab;
          int64_t a_off = f0;
          // Affine: the tile's rows of pixel k at xa + k*in_c (a packed partial tile: apack, cap apart).
          const T* xa = affine ? x + k0 * in_c + g * fic + f0 : nullptr;
          int64_t lda = in_c;
          if (mr != cap) {
            for (int64_t k = 0; k < kc; ++k) {
              T* dst = apack + k * cap;
              const T* src = affine ? xa + k * in_c : off[k] >= 0 ? x + off[k] + f0 : nullptr;
              for (int64_t i = 0; i < cap; ++i) dst[i] = (src && i < mr) ? src[i] : T(0);
              a[k] = dst;
            }
            at = a;
            a_off = 0;
            xa = apack;
            lda = cap;
          }
          T* c = out + (t * fic + f0) * p.out_c + g * ocg;
          for (int64_t j = j0; j < j1; ++j) {
            const int64_t nr = imin(NR, ocg - j * NR);
            const bool direct = in_place && nr == NR;
            const int64_t ldb = direct ? p.out_c : NR;
            const T* bj = direct ? dy + k0 * p.out_c + g * ocg + j * NR : bpack + j * KC * NR;
            PrefetchShare sx, sd;  // this call's share of the next chunk's lines
            if (pf_calls > 0 && item > i0 && pf_call < pf_calls) {
              sx = prefetch_share(x_next, pf_call, pf_calls, kc), sd = prefetch_share(dy_next, pf_call, pf_calls, kc);
              ++pf_call;
            }
            auto tile = [&]<int R>() {
              using GR = Gemm<T, Arch, R, NRV>;
              const bool pf = sx.step > 0 || sd.step > 0;
              if (affine && pf)
                GR::cols_strided_pf(kc, xa, lda, bj, ldb, c + j * NR, p.out_c, mr, nr, k0 > ks, sx.at, sx.step, sd.at,
                                    sd.step);
              else if (affine) GR::cols_strided(kc, xa, lda, bj, ldb, c + j * NR, p.out_c, mr, nr, k0 > ks);
              else if (pf)
                GR::cols_pf(kc, at, a_off, bj, ldb, c + j * NR, p.out_c, mr, nr, k0 > ks, sx.at, sx.step, sd.at,
                            sd.step);
              else GR::cols(kc, at, a_off, bj, ldb, c + j * NR, p.out_c, mr, nr, k0 > ks);
            };
            if (kind == 0) tile.template operator()<MR_>();
            else if (kind == 1) tile.template operator()<MB>();
            else tile.template operator()<MC>();
          }
        }
      }
    }
  });
  if (slices > 1) combine_partials<T, Arch>(exec, part, slices, nw, dw);  // in slice order
}

// The tile for p: the tuned one, unless the group's output channels fill at most half of its
// NR columns; then the unit's instantiated tile with the fewest column vectors. Every dw column
// a panel pads costs the micro-kernel as much as a real one: with Emerald Rapids' 6x4 tile (64
// floats) a 1x1 16->8 filter gradient (MobileNetV2) computed 8 real columns of 64; 12x2
// computes 8 of 32 (0.74x the time, bench/results_xeon_emr.txt). Depends on the shape only.
template <class T, class Arch>
GemmTile conv2d_backprop_filter_tile(const ConvTuning& tuning, const ConvParams& p) {
  GemmTile tile = tuning.backprop_filter;
  int64_t nr = 0;
  with_gemm_tile<kTiles>(tile, [&]<int MR, int NRV>() {
    tile = GemmTile{MR, NRV};  // what runs (a tile the unit lacks runs its default)
    nr = Gemm<T, Arch, MR, NRV>::NR;
  });
  if (2 * (p.out_c / imax(1, p.groups)) > nr) return tile;
  for (const GemmTile& t : kTiles.gemm)
    if (t.rows > 0 && t.vectors < tile.vectors) tile = t;
  return tile;
}

// Keep in step with the takes above (the test "cpu workspace" fails on any shortfall).
template <class T, class Arch>
size_t conv2d_backprop_filter_workspace(int threads, const ConvTuning& tuning, const ConvParams& p) {
  if (conv2d_backprop_filter_few_c_applies<T, Arch>(tuning, p))
    return conv2d_backprop_filter_few_c_scratch<T>(p).total(threads);
  size_t bytes = 0;
  with_gemm_tile<kTiles>(conv2d_backprop_filter_tile<T, Arch>(tuning, p), [&]<int MR, int NRV>() {
    constexpr int64_t NR = Gemm<T, Arch, MR, NRV>::NR;
    const int64_t np = (p.out_c / imax(1, p.groups) + NR - 1) / NR;
    const int64_t KC = conv2d_backprop_filter_kc(tuning, np * NR);
    const int64_t slices = conv2d_backprop_filter_slices<T>(tuning, p, MR, NR);
    bytes = conv2d_backprop_filter_scratch<T>(p.filter_in_c, np, MR, NR, KC, slices > 1 ? slices * p.w_elements() : 0)
                .total(threads);
  });
  return bytes;
}

template <class T, class Arch>
void conv2d_backprop_filter(const Exec& exec, const ConvTuning& tuning, const ConvParams& p, const T* x, const T* dy,
                            T* dw) {
  if (conv2d_backprop_filter_few_c_applies<T, Arch>(tuning, p))
    return conv2d_backprop_filter_few_c<T, Arch>(exec, p, tuning, x, dy, dw);
  with_gemm_tile<kTiles>(conv2d_backprop_filter_tile<T, Arch>(tuning, p), [&]<int MR, int NRV>() {
    conv2d_backprop_filter_tiled<T, Arch, MR, NRV>(exec, tuning, p, x, dy, dw);
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// DepthwiseConv2dNativeBackpropFilter (TF: input = x, out_backprop = dy, output = dw [FH,FW,C,M]):
//   dw[ky,kx,c,m] = sum_{n,oy,ox} dy[n,oy,ox,c*M+m] * x[n, oy*sh - pt + ky*dh, ox*sw - pl + kx*dw, c]
// A reduction over output rows (n, oy): rows are cut into fixed chunks (the cut depends only
// on the row count), each chunk sums into its own partial dw, and the partials are added in
// chunk order at the end: the same bits for any thread count. Inside a chunk, per output row
// and vector of channels, one accumulator per tap stays in a register while ox runs, so one
// dy load feeds every tap (dwf_interior).
#pragma once

#include "common.h"
#include "depthwise_rows.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Output columns per strip of dwf_chunk3 for items of nv channels: the x rows (3 per
// output row) and the dy row that one strip's pass over one output row touches stay within
// l1 bytes, so the next output row finds two of its three x rows in L1 (without strips,
// 112x112x32 stride 1 touches 57 KB per output row: every x line came from L2 three times).
// Strips of about equal width (a multiple of 8); the whole row when it fits. The strips are
// part of the summation order (dwf_chunk3), fixed by the shape.
// Emerald Rapids (48 KiB L1d), 1 thread, cli_ab: 112x112x32 s1 0.90-0.92x the time at
// batch 1 with budgets of 24 and 32 KiB (the same within noise), 0.91-0.97x at batch 8;
// 24 KiB leaves room in a 32 KiB L1d (Zen 4). 56x56x144 s2 fits whole rows (no strips).
constexpr int64_t kDwfStripBytes = int64_t{24} << 10;

template <class T>
int64_t dwf_strip(const ConvParams& p, int64_t nv, int64_t l1) {
  const int64_t OW = p.out_w, S = p.stride_w, pixel = p.in_c * int64_t(sizeof(T));
  const int64_t pb = pixel < 64 ? pixel : imax(64, nv * int64_t(sizeof(T)));  // bytes of each pixel touched
  if (l1 <= 0) return imax(1, OW);
  // (3 * ((w - 1) * S + 3) + w) * pb <= l1
  const int64_t w = (l1 / pb - 6 + 3 * S) / (3 * S + 1);
  if (w >= OW) return imax(1, OW);
  const int64_t n = (OW + imax(8, w) - 1) / imax(8, w);
  return ((OW + n - 1) / n + 7) / 8 * 8;
}

// The dwf_chunk3 path (3x3, dilation 1, M == 1, stride_w 1 or 2, whole vectors of channels; the
// native units' DwRowKernels::filter_chunked; WebAssembly runs its own, dwf_wasm_chunks in
// simd/wasm/kernels.h). Work items are (row chunk, group of NV channel vectors), chunk-major;
// rows are chunked so that a chunk's x rows (about 256 KB) stay in L2 while its groups run,
// into at least enough chunks to give 16 (channel vector) items, at most 64. The chunking
// depends on the shape only, each item writes its own part of its chunk's partial, and the
// partials are combined in chunk order: the same bits for any thread count. The threads take
// contiguous runs of items (one run each, in one parallel pass): each keeps to its own rows, so
// at batch 1 its part of x stays in its own L2 from one call to the next, and no x line is
// fetched by both cores. (Items claimed one at a time from both ends, session 13's
// par_two_ended, made no measurable difference: NOTES, "Batch norm and depthwise threads".)
// Returns false (nothing done) if the shape is not one of these.
template <class T, class Arch>
bool dwf_chunked(const Exec& exec, Arena& scratch, const ConvParams& p, bool prefetch, const T* x, const T* dy,
                 T* dw) {
  constexpr int64_t L = Vec<T, Arch>::width;
  const int64_t C = p.in_c;
  if (p.depth_multiplier != 1 || p.filter_h != 3 || p.filter_w != 3 || p.dilation_h != 1 ||
      p.dilation_w != 1 || (p.stride_w != 1 && p.stride_w != 2) || C % L != 0 || C == 0)
    return false;
  const int64_t rows = p.batch * p.out_h, nw = 9 * C, cvn = C / L;
  if (rows == 0 || p.out_w == 0) return false;
  const int64_t row_bytes = imax(1, p.stride_h * p.in_w * C * int64_t(sizeof(T)));
  // Prefetch (see dwf_chunk3) when x and dy are well past the L2s (a fixed size, not the
  // machine's: on cache-resident data the prefetches only cost).
  // Off where ConvTuning::depthwise_filter_prefetch says so (Emerald Rapids: the bursts of
  // prefetches at each row's start cost more than the misses they remove).
  const bool big = prefetch && (p.x_elements() + rows * p.out_w * C) * int64_t(sizeof(T)) > (int64_t(8) << 20);
  int64_t grain = imax(1, (int64_t(256) << 10) / row_bytes);
  const int64_t min_chunks = (16 + cvn - 1) / cvn;
  grain = imin(grain, imax(1, (rows + min_chunks - 1) / min_chunks));
  grain = imax(grain, (rows + 63) / 64);
  const int64_t chunks = nchunks(rows, grain);
  // Interior columns: every kx inside x for j in [j_lo, j_hi) (ix = j*S - pl + kx).
  const int64_t S = p.stride_w;
  const int64_t j_lo = imin(p.out_w, (p.pad_left + S - 1) / S);
  const int64_t j_hi = imax(j_lo, imin(p.out_w, floordiv(p.in_w - 3 + p.pad_left, S) + 1));
  T* part = scratch.take<T>(chunks * nw + 1);
  const int64_t strip1 = dwf_strip<T>(p, L, kDwfStripBytes), strip2 = dwf_strip<T>(p, 2 * L, kDwfStripBytes);
  // Two channel vectors per item where 32 registers hold their 18 sums (the last one alone
  // if the count is odd): each pass over the chunk's rows reads two adjacent lines per pixel.
  const int64_t NV = kTiles.dw_channel_pairs ? 2 : 1;
  constexpr int BP = kTiles.dw_block_pixels;
  const int64_t groups = (cvn + NV - 1) / NV;
  // Channels [c, c + NV*L) (or the lone last vector) of rows [r0, r1) into out.
  auto run = [&](int64_t r0, int64_t r1, int64_t c, T* out, bool pf) {
    if (NV == 2 && c + 2 * L <= C) {
      if (S == 1) dwf_chunk3<T, Arch, 1, 2, BP>(p, x, dy, r0, r1, c, j_lo, j_hi, strip2, out, pf);
      else dwf_chunk3<T, Arch, 2, 2, BP>(p, x, dy, r0, r1, c, j_lo, j_hi, strip2, out, pf);
    } else {
      if (S == 1) dwf_chunk3<T, Arch, 1, 1, BP>(p, x, dy, r0, r1, c, j_lo, j_hi, strip1, out, pf);
      else dwf_chunk3<T, Arch, 2, 1, BP>(p, x, dy, r0, r1, c, j_lo, j_hi, strip1, out, pf);
    }
  };
  const int64_t items = chunks * groups;
  auto item = [&](int64_t i) {
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
    run(r0, r1, c, out, pf);
  };
  par(exec, items, (items + exec.threads - 1) / exec.threads, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) item(i);
  });
  combine_partials<T, Arch>(exec, part, chunks, nw, dw);
  return true;
}

// A thread's tap tables of the general path: x rows, dw rows, column offsets.
template <class T>
ScratchSize dwf_tap_tables(int64_t taps) {
  return ScratchSize{}
      .add_per_thread(line_bytes<const T*>(taps + 1))
      .add_per_thread(line_bytes<T*>(taps + 1))
      .add_per_thread(line_bytes<int64_t>(taps + 1));
}

// The largest of the three paths' scratch (they start at the same place; one runs): the
// general path's chunk partials and tap tables, the unit's chunked path's (3x3, M == 1:
// DwKernels::filter_chunked_bytes).
template <class T, class Arch>
size_t depthwise_conv2d_native_backprop_filter_workspace(int threads, const ConvTuning&, const ConvParams& p) {
  const int64_t taps = p.filter_h * p.filter_w, nw = taps * p.in_c * p.depth_multiplier;
  const int64_t rows = p.batch * p.out_h, chunks16 = nchunks(rows, reduction_grain(rows, 2, 16));
  ScratchSize general = dwf_tap_tables<T>(taps);
  general.add(line_bytes<T>(chunks16 * nw + 1));
  size_t bytes = general.total(threads);
  if (p.depth_multiplier == 1 && taps == 9)
    bytes = size_t(imax(int64_t(bytes), DwKernels<T, Arch>::filter_chunked_bytes(p)));
  return bytes;
}

template <class T, class Arch>
void depthwise_conv2d_native_backprop_filter(const Exec& exec, const ConvTuning& tuning, const ConvParams& p,
                                             const T* x, const T* dy, T* dw) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t C = p.in_c, M = p.depth_multiplier, OC = C * M, taps = p.filter_h * p.filter_w;
  const int64_t nw = taps * OC;
  if (nw == 0) return;
  Arena scratch(exec);
  if (DwKernels<T, Arch>::filter_chunked(exec, scratch, p, tuning.depthwise_filter_prefetch, x, dy, dw)) return;
  const int64_t rows = p.batch * p.out_h;
  // At most 16 chunks of >= 2 rows: an even split for 2 threads at batch 1 (e.g. 28 rows:
  // 14 chunks of 2) and few partials to combine; fixed by the row count alone.
  const int64_t grain = reduction_grain(rows, 2, 16);
  const int64_t chunks = nchunks(rows, grain);
  T* part = scratch.take<T>(chunks * nw + 1);
  ThreadParts parts(scratch, dwf_tap_tables<T>(taps).per_thread, exec.threads);
  par(exec, rows, grain, [&](int64_t r0, int64_t r1) {
    T* acc_w = part + (r0 / grain) * nw;
    for (int64_t i = 0; i < nw; ++i) acc_w[i] = T(0);
    Arena mine = parts.mine();
    const T** src = mine.take<const T*>(taps + 1);
    T** accp = mine.take<T*>(taps + 1);
    int64_t* off = mine.take<int64_t>(taps + 1);
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
  combine_partials<T, Arch>(exec, part, chunks, nw, dw);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

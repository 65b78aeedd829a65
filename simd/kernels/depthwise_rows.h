// Row-level choice of the depthwise micro-kernels, shared by the three depthwise drivers:
// a row's tap table (tap t: source pixel j*step + off[t] of row src[t], weight or accumulator
// row t) is matched to the kernel that serves its shape best.
//
// The callers build the table ky-major, so it usually comes as R groups of K taps that
// share one source row and whose offsets are consecutive (dilation 1): off = o_r + k,
// k = 0..K-1 (in either order inside the group). `tap_groups` detects that shape; dwg_row
// (gather: the forward and the input gradient) and dwf_row (filter-gradient accumulation)
// then run the grouped kernels (ukernels/depthwise_*.h) of the unit's set (DwKernels below;
// WebAssembly's: simd/wasm/kernels.h).
#pragma once

#include <type_traits>

#include "../ukernels/depthwise_filter.h"
#include "common.h"
#include "../ukernels/depthwise_gather.h"
#include "table.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// A thread's tap tables of the depthwise forward and input-gradient rows: two pointers per tap
// (input row, filter row) and a column offset per tap (+1 each: a terminator slot).
template <class T>
ScratchSize dw_tap_tables(int64_t taps) {
  return ScratchSize{}.add_per_thread(line_bytes<const T*>(2 * (taps + 1))).add_per_thread(line_bytes<int64_t>(taps + 1));
}

// Those tables, taken from a thread's part (ThreadParts::mine over dw_tap_tables).
template <class T>
struct DwTapTables {
  const T** src;  // input (or dy) row of each tap
  const T** wt;   // filter row of each tap
  int64_t* off;   // column offset of each tap
};
template <class T>
DwTapTables<T> take_tap_tables(Arena& part, int64_t taps) {
  const T** src = part.take<const T*>(2 * (taps + 1));
  return {src, src + taps + 1, part.take<int64_t>(taps + 1)};
}

// The grouped form of a tap table: group r reads row base[r] (already offset to the
// group's lowest source pixel o_r, i.e. base[r] = src + o_r*C), and its k-th tap (source
// pixel j*step + o_r + k) has table index idx[r*K + k].
struct TapGroups {
  int R = 0, K = 0;
  int64_t o[3];    // lowest offset of each group
  int64_t idx[9];  // table index of group r, tap k
};

// Whether taps [0, nt) form R <= 3 groups of K (2 or 3) consecutive offsets sharing a row;
// fills g if so. A group is K taps in a row of the table with equal src pointer.
template <class T>
inline bool tap_groups(int64_t nt, const T* const* src, const int64_t* off, TapGroups* g) {
  for (int K = 3; K >= 2; --K) {
    if (nt % K != 0 || nt / K > 3) continue;
    const int R = static_cast<int>(nt / K);
    bool ok = true;
    for (int r = 0; r < R && ok; ++r) {
      const int64_t t0 = int64_t(r) * K;
      int64_t lo = off[t0];
      for (int k = 1; k < K; ++k) {
        if (src[t0 + k] != src[t0]) ok = false;
        lo = imin(lo, off[t0 + k]);
      }
      // Offsets must be exactly lo .. lo+K-1 (each once).
      int64_t seen = 0;
      for (int k = 0; k < K && ok; ++k) {
        const int64_t d = off[t0 + k] - lo;
        if (d < 0 || d >= K || (seen >> d & 1)) ok = false;
        else {
          seen |= int64_t(1) << d;
          g->idx[r * K + d] = t0 + k;
        }
      }
      g->o[r] = lo;
    }
    if (ok) {
      g->R = R;
      g->K = K;
      return true;
    }
  }
  return false;
}

// Fills gr and the per-group-tap pointers (w or acc, reordered to group order) for a row
// whose taps form groups g. Returns the vector channel count cv (0: nothing to do here).
template <class T, class Arch, class P>
inline int64_t grouped_row(const TapGroups& g, const T* const* src, const P* tab, int64_t nj, int64_t j_lo,
                           int64_t j_hi, int64_t src_w, int64_t C, GroupedRow<T>* gr, P* out) {
  constexpr int64_t L = Vec<T, Arch>::width;
  for (int r = 0; r < g.R; ++r) {
    gr->row[r] = src[g.idx[r * g.K]];
    gr->o[r] = g.o[r];
  }
  for (int t = 0; t < g.R * g.K; ++t) out[t] = tab[g.idx[t]];
  gr->nj = nj;
  gr->j_lo = j_lo;
  gr->j_hi = j_hi;
  gr->src_w = src_w;
  gr->C = C;
  return C / L * L;
}

// Calls f.template operator()<R, K>() with the groups' shape as constants (R = 1..3 rows of
// K = 2 or 3 taps); false for any other shape.
template <class F>
inline bool with_groups(const TapGroups& g, F&& f) {
  switch (g.R * 4 + g.K) {
    case 1 * 4 + 2: f.template operator()<1, 2>(); return true;
    case 2 * 4 + 2: f.template operator()<2, 2>(); return true;
    case 3 * 4 + 2: f.template operator()<3, 2>(); return true;
    case 1 * 4 + 3: f.template operator()<1, 3>(); return true;
    case 2 * 4 + 3: f.template operator()<2, 3>(); return true;
    case 3 * 4 + 3: f.template operator()<3, 3>(); return true;
    default: return false;
  }
}

// The 3x3 filter gradient's chunked path (depthwise_conv2d_native_backprop_filter.h).
template <class T, class Arch>
bool dwf_chunked(const Exec& exec, Arena& scratch, const ConvParams& p, bool prefetch, const T* x, const T* dy, T* dw);

// The depthwise row kernels a unit runs, as one set: the drivers (dw_row, dwg_row, dwf_row
// here, the filter and input-gradient drivers) reach every unit-specific kernel through
// DwKernels<T, Arch>, never through a branch on the unit. This is the native set; the
// WebAssembly unit's (simd/wasm/kernels.h, WasmDwKernels) derives from it and replaces the
// members V8 runs better with its own kernels. Each member returns whether (or how far) it
// did the work; the caller takes its generic path for the rest.
template <class T, class Arch>
struct DwRowKernels {
  // Gather, one row of grouped taps (step 1), vector channels [0, cv): channel vectors in
  // pairs where 32 registers hold them (dwg_pair), then dwg_block; Reload: dwg_block reloads
  // the weights per pixel block (for V8's 15 registers).
  template <bool Reload = false>
  static bool gather_blocks(const TapGroups& g, const GroupedRow<T>& gr, const T* const* w, int64_t cv, T* dst,
                            int64_t ds) {
    constexpr int64_t L = Vec<T, Arch>::width;
    const int64_t cv2 = kTiles.dw_channel_pairs ? cv / (2 * L) * (2 * L) : 0;
    constexpr int P = kTiles.dw_block_pixels;
    return with_groups(g, [&]<int R, int K>() {
      if (cv2) dwg_pair<T, Arch, R, K>(gr, w, cv2, dst, ds);
      dwg_block<T, Arch, R, K, P, Reload>(gr, w, cv2, cv, dst, ds);
    });
  }
  static bool gather_grouped(const TapGroups& g, const GroupedRow<T>& gr, const T* const* w, int64_t cv, T* dst,
                             int64_t ds) {
    return gather_blocks(g, gr, w, cv, dst, ds);
  }

  // Gather, step 1, 1 to 3 taps at one offset (dw_row's rows that tap_groups does not
  // group): the vector channels it did (0: none; dw_row's interior and edges do the row).
  static int64_t gather_one_offset(int64_t /*nt*/, const T* const* /*src*/, const int64_t* /*off*/,
                                   const T* const* /*wt*/, int64_t /*step*/, int64_t /*nj*/, int64_t /*j_lo*/,
                                   int64_t /*j_hi*/, int64_t /*src_w*/, int64_t /*C*/, T* /*dst*/, int64_t /*ds*/) {
    return 0;
  }

  // dw_row's interior pixels [j_lo, j_hi): returns the first channel left for dw_row's
  // generic loop. The tap count as a constant keeps the w vectors and pointers in registers.
  static int64_t interior(int64_t nt, int64_t j_lo, int64_t j_hi, const T* const* src, const int64_t* off,
                          const T* const* wt, int64_t step, int64_t C, T* dst, int64_t ds) {
    switch (nt) {
      case 1: return dw_interior<T, Arch, 1>(j_lo, j_hi, src, off, wt, step, C, dst, ds);
      case 2: return dw_interior<T, Arch, 2>(j_lo, j_hi, src, off, wt, step, C, dst, ds);
      case 3: return dw_interior<T, Arch, 3>(j_lo, j_hi, src, off, wt, step, C, dst, ds);
      case 4: return dw_interior<T, Arch, 4>(j_lo, j_hi, src, off, wt, step, C, dst, ds);
      case 6: return dw_interior<T, Arch, 6>(j_lo, j_hi, src, off, wt, step, C, dst, ds);
      case 9: return dw_interior<T, Arch, 9>(j_lo, j_hi, src, off, wt, step, C, dst, ds);
      default: return 0;
    }
  }

  // Filter gradient, one output row of grouped taps, source step S (1 or 2), vector
  // channels [0, cv): dwf_block reuses each x vector for every tap that reads it.
  template <int S>
  static bool filter_blocks(const TapGroups& g, const GroupedRow<T>& gr, const T* dy, T* const* acc, int64_t cv) {
    return with_groups(
        g, [&]<int R, int K>() { dwf_block<T, Arch, R, K, S, kTiles.dw_block_pixels>(gr, dy, acc, cv); });
  }
  static bool filter_grouped(const TapGroups& g, const GroupedRow<T>& gr, int64_t step, const T* dy, T* const* acc,
                             int64_t cv) {
    return step == 1 ? filter_blocks<1>(g, gr, dy, acc, cv) : filter_blocks<2>(g, gr, dy, acc, cv);
  }

  // The 3x3 filter gradient's chunked path (dwf_chunked, the filter driver); false: the
  // driver's generic path. Its scratch: filter_chunked_bytes.
  static bool filter_chunked(const Exec& exec, Arena& scratch, const ConvParams& p, bool prefetch, const T* x,
                             const T* dy, T* dw) {
    return dwf_chunked<T, Arch>(exec, scratch, p, prefetch, x, dy, dw);
  }
  static int64_t filter_chunked_bytes(const ConvParams& p) {
    return int64_t(line_bytes<T>(imin(64, p.batch * p.out_h) * 9 * p.in_c + 1));  // dwf_chunked's <= 64 partials
  }

  // Input gradient, stride 2 x 3 taps along x: one whole dx row from its R filter rows'
  // dy rows (dwx2_row; R == 0: zeros); false: the driver's phase-class path. stream: dx with
  // non-temporal stores (the driver's choice: it checked the unit, dx's alignment and C).
  static bool dwx2(int R, const T* const* rows, const T* const* wr, int64_t ow, int64_t C, T* dx, bool stream) {
    if (R < 0 || R > 3) return false;
    if (R == 0) {
      for (int64_t e = 0; e < 2 * ow * C; ++e) dx[e] = T(0);
      return true;
    }
    if constexpr (bn_can_stream<T, Arch>())
      if (stream) {
        dwx2_rows<true>(R, rows, wr, ow, C, dx);
        return true;
      }
    dwx2_rows<false>(R, rows, wr, ow, C, dx);
    return true;
  }
  template <bool NT>
  static void dwx2_rows(int R, const T* const* rows, const T* const* wr, int64_t ow, int64_t C, T* dx) {
    if (R == 1) dwx2_row<T, Arch, 1, NT>(rows, wr, ow, C, dx);
    else if (R == 2) dwx2_row<T, Arch, 2, NT>(rows, wr, ow, C, dx);
    else dwx2_row<T, Arch, 3, NT>(rows, wr, ow, C, dx);
  }

  // The tester table's slots for this set's own micro-kernels (kernels/table.h; the kernels
  // every unit shares are filled by kernels/ukernel_table.h): dwf_block (GroupedRow's fields
  // as arguments: the tester cannot name the unit's GroupedRow), dwf_chunk3, dwx2_row.
  static void fill_testers(TypedRowUkernels<T>& u) {
    constexpr int P = kTiles.dw_block_pixels;
    auto block = [&]<int S, int R, int K>() {
      u.dwf_block[S - 1][R - 1][K - 2] = [](const T* const* row, const int64_t* o, int64_t nj, int64_t j_lo,
                                             int64_t j_hi, int64_t src_w, int64_t C, const T* dy, T* const* acc,
                                             int64_t cv) {
        GroupedRow<T> gr{{}, {}, nj, j_lo, j_hi, src_w, C};
        for (int r = 0; r < R; ++r) gr.row[r] = row[r], gr.o[r] = o[r];
        dwf_block<T, Arch, R, K, S, P>(gr, dy, acc, cv);
      };
    };
    auto blocks = [&]<int S>() {
      block.template operator()<S, 1, 2>(), block.template operator()<S, 2, 2>(), block.template operator()<S, 3, 2>();
      block.template operator()<S, 1, 3>(), block.template operator()<S, 2, 3>(), block.template operator()<S, 3, 3>();
    };
    blocks.template operator()<1>(), blocks.template operator()<2>();
    u.dwf_chunk3[0][0] = &dwf_chunk3<T, Arch, 1, 1, P>;
    u.dwf_chunk3[1][0] = &dwf_chunk3<T, Arch, 2, 1, P>;
    if constexpr (kTiles.dw_channel_pairs) {
      u.dwf_chunk3[0][1] = &dwf_chunk3<T, Arch, 1, 2, P>;
      u.dwf_chunk3[1][1] = &dwf_chunk3<T, Arch, 2, 2, P>;
    }
  }
  static void fill_testers(RowUkernels& u) {
    static_assert(std::is_same_v<T, float>);
    u.dwx2_row[0] = &dwx2_row<T, Arch, 1>;
    u.dwx2_row[1] = &dwx2_row<T, Arch, 2>;
    u.dwx2_row[2] = &dwx2_row<T, Arch, 3>;
  }
};

// The unit's set: kTiles.wasm picks WebAssembly's (declared here, defined in simd/wasm/kernels.h,
// which only that unit includes; elsewhere the name is never completed).
template <class T, class Arch>
struct WasmDwKernels;
template <class T, class Arch>
using DwKernels = std::conditional_t<kTiles.wasm, WasmDwKernels<T, Arch>, DwRowKernels<T, Arch>>;

// The whole row of a dw_row gather with grouped taps (step 1), vector channels; returns
// the first channel left for the caller's scalar tail (0 if the groups are not handled).
template <class T, class Arch>
inline int64_t dwg_row(const TapGroups& g, int64_t nj, int64_t j_lo, int64_t j_hi, const T* const* src,
                       const T* const* wt, int64_t src_w, int64_t C, T* dst, int64_t ds) {
  GroupedRow<T> gr;
  const T* w[9];
  const int64_t cv = grouped_row<T, Arch>(g, src, wt, nj, j_lo, j_hi, src_w, C, &gr, w);
  if (cv == 0) return 0;
  return DwKernels<T, Arch>::gather_grouped(g, gr, w, cv, dst, ds) ? cv : 0;
}

// The filter gradient of one whole output row with grouped taps, source step 1 or 2:
// accp[t] += contributions of the vector channels of every column. Returns the first
// channel left for the caller (0 if it did nothing).
template <class T, class Arch>
inline int64_t dwf_row(const TapGroups& g, int64_t nj, int64_t j_lo, int64_t j_hi, const T* dyrow,
                       const T* const* src, T* const* accp, int64_t step, int64_t src_w, int64_t C) {
  if (step != 1 && step != 2) return 0;
  GroupedRow<T> gr;
  T* acc[9];
  const int64_t cv = grouped_row<T, Arch>(g, src, accp, nj, j_lo, j_hi, src_w, C, &gr, acc);
  if (cv == 0) return 0;
  return DwKernels<T, Arch>::filter_grouped(g, gr, step, dyrow, acc, cv) ? cv : 0;
}

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
  // Rows of 1 to 3 taps at one offset, where the unit has a kernel for them (WebAssembly).
  if (const int64_t cv = DwKernels<T, Arch>::gather_one_offset(nt, src, off, wt, step, nj, j_lo, j_hi, src_w, C,
                                                                dst, ds);
      cv > 0) {
    if (cv < C) channel_tail(cv);
    return;
  }
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
  int64_t c = DwKernels<T, Arch>::interior(nt, j_lo, j_hi, src, off, wt, step, C, dst, ds);
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

}  // namespace gradrt::simd::GRADRT_SIMD_NS

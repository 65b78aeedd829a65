// The WebAssembly unit's depthwise kernel set (WasmDwKernels; kernels/depthwise_rows.h
// DwKernels picks it where kTiles.wasm): the native set (DwRowKernels) with the members that
// V8 runs better replaced by the kernels of wasm/depthwise.h, and the filter gradient's own
// chunked path. Included only by arch/wasm_simd128.cpp, after the unit's kTiles.
#pragma once

#include <type_traits>

#include "../kernels/depthwise_rows.h"
#include "depthwise.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
const T* dwf_wasm_chunks(const Exec& exec, Arena& scratch, const ConvParams& p, const T* x, const T* dy,
                         int64_t* chunks_out);

// The wasm kernels are float only: at double the set runs the native members, except the
// interior (dw_interior_wasm is a template on T) and dwg_block's weight reload.
// Each wasm kernel is called through a volatile function pointer: Binaryen inlines a function
// with one caller (noinline does not reach it), and V8 allocates registers worse in the big
// merged function; as an indirect call it stays its own (small) function.
template <class T, class Arch>
struct WasmDwKernels : DwRowKernels<T, Arch> {
  using Native = DwRowKernels<T, Arch>;
  static constexpr bool kFloat = std::is_same_v<T, float>;
  // dwf_wasm_chunks: at most kFilterRows output rows per dwf_wasm call, a part's pass within kL1Bytes.
  static constexpr int64_t kFilterRows = 3, kL1Bytes = 32 << 10;

  // dwg_wasm<R, K> where the R groups share one offset (the sliding window); dwg_block with
  // the weights reloaded per pixel block otherwise.
  static bool gather_grouped(const TapGroups& g, const GroupedRow<T>& gr, const T* const* w, int64_t cv, T* dst,
                             int64_t ds) {
    if constexpr (kFloat) {
      bool same = true;
      for (int r = 1; r < g.R; ++r) same = same && gr.o[r] == gr.o[0];
      if (same && gather_rows(g.R, g.K, gr.row, gr.o[0], gr.nj, gr.j_lo, gr.j_hi, gr.src_w, gr.C, w, cv, dst, ds))
        return true;
    }
    return Native::template gather_blocks<true>(g, gr, w, cv, dst, ds);
  }

  // Step 1, 1 to 3 taps at one offset (e.g. the stride-2 input gradient's odd phase classes:
  // one tap per filter row): dwg_wasm with groups of one tap does the whole row's vector
  // channels, edges included.
  static int64_t gather_one_offset(int64_t nt, const T* const* src, const int64_t* off, const T* const* wt,
                                   int64_t step, int64_t nj, int64_t j_lo, int64_t j_hi, int64_t src_w, int64_t C,
                                   T* dst, int64_t ds) {
    if constexpr (kFloat) {
      constexpr int64_t L = Vec<T, Arch>::width;
      bool one_off = step == 1 && nt >= 1 && nt <= 3 && C >= L;
      for (int64_t t = 1; t < nt && one_off; ++t) one_off = off[t] == off[0];
      if (one_off) {
        const int64_t cv = C / L * L;
        gather_rows(static_cast<int>(nt), 1, src, off[0], nj, j_lo, j_hi, src_w, C, wt, cv, dst, ds);
        return cv;
      }
    }
    return 0;
  }

  // Few taps (e.g. the stride-2 input gradient's phase classes: 1, 2 or 4): dw_interior's
  // 2 x NT weight vectors + 8 accumulators still (nearly) fit, and it keeps the weights in
  // registers along the row (measured faster there); more taps spill, so they go through
  // dw_interior_wasm (vector channels; the tap tables are the caller's, which the kernel
  // offsets to pixel j_lo itself: no scratch of its own).
  static int64_t interior(int64_t nt, int64_t j_lo, int64_t j_hi, const T* const* src, const int64_t* off,
                          const T* const* wt, int64_t step, int64_t C, T* dst, int64_t ds) {
    if (nt <= 4) return Native::interior(nt, j_lo, j_hi, src, off, wt, step, C, dst, ds);
    if (j_hi <= j_lo) return 0;
    constexpr int64_t L = Vec<T, Arch>::width;
    const int64_t cv = C / L * L;
    dw_interior_wasm<T, Arch>(j_hi - j_lo, nt, src, off, j_lo * step, C, wt, step * C, cv, dst + j_lo * ds, ds);
    return cv;
  }

  // dwf_wasm (a filter row and 8 channels per pass, the dy window in registers) where the R
  // groups share one offset; nothing otherwise: dwf_interior's 9 accumulators + 1 dy + 1
  // source fit V8's registers and measured faster there (about 23 vs 17-22 GFLOP/s in Node 20)
  // than any dwf_block shape tried (LLVM/Binaryen reorder a block so that its reused sources
  // all stay live; see depthwise.h).
  static bool filter_grouped(const TapGroups& g, const GroupedRow<T>& gr, int64_t step, const T* dy, T* const* acc,
                             int64_t cv) {
    if constexpr (kFloat) {
      for (int r = 1; r < g.R; ++r)
        if (gr.o[r] != gr.o[0]) return false;
      // One row: no parts, no running sums.
      return filter_rows(step, g.K, gr.row, g.R, gr.o[0], gr.nj, gr.src_w, gr.C, dy, acc, cv, 1, 0, 0, nullptr, 1);
    }
    return false;
  }

  // The row chunks of dwf_wasm_chunks (float), combined here; never dwf_chunked.
  static bool filter_chunked(const Exec& exec, Arena& scratch, const ConvParams& p, bool, const T* x, const T* dy,
                             T* dw) {
    if constexpr (kFloat) {
      int64_t chunks = 0;
      const T* part = dwf_wasm_chunks<T, Arch>(exec, scratch, p, x, dy, &chunks);
      if (part == nullptr) return false;
      combine_partials<T, Arch>(exec, part, chunks, 9 * p.in_c, dw);
      return true;
    }
    return false;
  }
  // Its two sets of at most 16 chunk partials (the native bound kept too).
  static int64_t filter_chunked_bytes(const ConvParams& p) {
    const int64_t rows = p.batch * p.out_h, chunks16 = nchunks(rows, reduction_grain(rows, 2, 16));
    return imax(Native::filter_chunked_bytes(p), int64_t(line_bytes<T>(2 * chunks16 * 9 * p.in_c + 1)));
  }

  // dwx2_wasm for R = 1..3 filter rows (float, the vector channels; dwx2_tail the rest).
  static bool dwx2(int R, const T* const* rows, const T* const* wr, int64_t ow, int64_t C, T* dx, bool) {
    if constexpr (kFloat) {
      if (R < 1 || R > 3 || C < 4) return false;
      const int64_t cv = C / 4 * 4;
      using Fn = void (*)(const float* const*, const float* const*, int64_t, int64_t, int64_t, float*);
      static Fn volatile const kFns[3] = {&dwx2_wasm<1>, &dwx2_wasm<2>, &dwx2_wasm<3>};
      kFns[R - 1](rows, wr, ow, C, cv, dx);
      dwx2_tail(rows, wr, R, ow, C, cv, dx);
      return true;
    }
    return false;
  }

  // The tester table's slots (kernels/table.h) for this set's own kernels: dwg_wasm, dwf_wasm,
  // dw_interior_wasm, and dwx2_row's job done as dwx2 does it. dwf_block and dwf_chunk3 never
  // run here: their slots stay null.
  static void fill_testers(TypedRowUkernels<T>&) {}
  static void fill_testers(RowUkernels& u) {
    static_assert(kFloat);
    auto x2 = [&]<int R>() {
      u.dwx2_row[R - 1] = [](const float* const* dyr, const float* const* wr, int64_t ow, int64_t C, float* dx) {
        const int64_t cv = C / 4 * 4;
        dwx2_wasm<R>(dyr, wr, ow, C, cv, dx);
        dwx2_tail(dyr, wr, R, ow, C, cv, dx);
      };
    };
    x2.template operator()<1>(), x2.template operator()<2>(), x2.template operator()<3>();
    auto g = [&]<int R, int K>() { u.dwg_wasm[K - 1][R - 1] = &dwg_wasm<R, K>; };
    g.template operator()<1, 1>(), g.template operator()<2, 1>(), g.template operator()<3, 1>();
    g.template operator()<1, 2>(), g.template operator()<2, 2>(), g.template operator()<3, 2>();
    g.template operator()<1, 3>(), g.template operator()<2, 3>(), g.template operator()<3, 3>();
    u.dwf_wasm[0][0] = &dwf_wasm<2, 1>, u.dwf_wasm[0][1] = &dwf_wasm<3, 1>;
    u.dwf_wasm[1][0] = &dwf_wasm<2, 2>, u.dwf_wasm[1][1] = &dwf_wasm<3, 2>;
    u.dw_interior_wasm = &dw_interior_wasm<float, Arch>;
  }

  // dwg_wasm<R, K> (float); false where there is none.
  static bool gather_rows(int R, int K, const float* const* row, int64_t o, int64_t nj, int64_t j_lo, int64_t j_hi,
                          int64_t src_w, int64_t C, const float* const* w, int64_t cv, float* dst, int64_t ds) {
    using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                        const float* const*, int64_t, float*, int64_t);
    static Fn volatile const kFns[3][3] = {{&dwg_wasm<1, 1>, &dwg_wasm<2, 1>, &dwg_wasm<3, 1>},
                                           {&dwg_wasm<1, 2>, &dwg_wasm<2, 2>, &dwg_wasm<3, 2>},
                                           {&dwg_wasm<1, 3>, &dwg_wasm<2, 3>, &dwg_wasm<3, 3>}};
    if (R < 1 || R > 3 || K < 1 || K > 3) return false;
    kFns[K - 1][R - 1](row, o, nj, j_lo, j_hi, src_w, C, w, cv, dst, ds);
    return true;
  }

  // dwf_wasm<K, S> (float); false where there is none.
  static bool filter_rows(int64_t S, int K, const float* const* row, int64_t R, int64_t o, int64_t nj, int64_t src_w,
                          int64_t C, const float* dy, float* const* acc, int64_t cv, int64_t nr, int64_t xrs,
                          int64_t dys, float* sum, int64_t sub) {
    using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, const float*, float* const*,
                        int64_t, int64_t, int64_t, int64_t, float*, int64_t);
    static Fn volatile const kFns[2][2] = {{&dwf_wasm<2, 1>, &dwf_wasm<3, 1>}, {&dwf_wasm<2, 2>, &dwf_wasm<3, 2>}};
    if ((S != 1 && S != 2) || (K != 2 && K != 3)) return false;
    kFns[S - 1][K - 2](row, R, o, nj, src_w, C, dy, acc, cv, nr, xrs, dys, sum, sub);
    return true;
  }
};

// The filter gradient (3x3, dilation 1, M == 1, column stride 1 or 2, C % 4 == 0) as chunk
// partials, for the caller to combine in chunk order: returns *chunks partials of 9*C floats
// (from scratch), or nullptr for other shapes (the caller takes the generic path). Rows
// are cut into at most 16 chunks of >= 2 rows (by the row count only, as the generic path:
// the same bits for any thread count). Inside a chunk, runs of up to kRows consecutive
// output rows of one image with all 3 ky inside x go to one dwf_wasm call (simd/wasm/);
// rows with some ky outside x go alone, with fewer filter rows.
// Where the time goes (56x56x144 stride 2, Node 20, Zen 5 guest; 67 us, the same as with the
// earlier kernel, all 9 taps of one channel vector per step): with every channel group
// reading group 0's x and dy lines (so all but the first group hit L1) it runs in 54-55 us,
// so the first touch of each 64-byte line costs ~13 us; the rest is the loop itself (earlier
// kernel: ~40 x64 instructions per step in V8 for 9 multiply-adds; dwf_wasm, unrolled 3x by
// V8: ~25 per step for 6: 6 loads, 6 mul, 6 add, 3 address adds, counter; 88% of its
// samples). 112x112x32 stride 1 is compute-bound (the
// same time with half its lines never touched): 218 -> 180 us. Measured and lost (A/B,
// dwmicro.mjs), this kernel:
// - 3 channel vectors per step (stride 2: 9 accumulators + 6 dy): V8 schedules a step's
//   loads first, so 9 loaded vectors are live: spills, 100 us; a compiler barrier between the
//   vectors does not stop V8 (only a loop exit between them does, as in its own unrolling).
// - the earlier 9-tap kernel without the never-loop for stride 1: spills, 222 us.
// - the never-loop in the 8-channel loop: stride 1 ~12% slower (it stops V8's unrolling);
//   keeping it only for the first-touch blocks (c % 16 == 0): +2 us.
// - touch loads (volatile i32, 1 instruction each) of the next 16 channels' lines: 3 per
//   step in the blocks that touch no new line: +5 us; 2 per step in every block (the lines
//   of the block after next): +3 us. Filter row outer, channel block inner: +4 us. A loop on
//   the dy pointer instead of a counter: no change (LLVM keeps the counter).
// The earlier 9-tap kernel:
// - packing each 16-channel group's x and dy rows into L1 scratch (pixel stride 64 B) before
//   its 4 passes: 113 us; packing all groups of a run at once with in-order reads: 118 us.
//   The compute on packed L1 data is ~52 us, but the copy (2.1 MB of stores per call, reads
//   missing the same lines) costs more than the misses it removes.
// - a scalar "touch" load per step (GPR sink, no vector register) of the next run's x rows
//   (in order) or of the next group's lines (stride C): no gain / +6 us; one call per channel
//   group instead of per run: +5 us. A separate in-order touch pass over a run's rows: +13 us.
//   In this kernel, touching the next group's line at the current pixel (rows 0/1, both
//   pixels, over a group's 4 passes): no gain. So the first-touch cost is not the latency
//   of the first pass's misses alone (L2-resident 28x28x144: 20.0 us vs 18.0 us all-L1).
// - C as a compile-time constant (immediate load offsets): -2.4 us only.
template <class T, class Arch>
const T* dwf_wasm_chunks(const Exec& exec, Arena& scratch, const ConvParams& p, const T* x, const T* dy,
                         int64_t* chunks_out) {
  using Wasm = WasmDwKernels<T, Arch>;
  constexpr int64_t kRows = Wasm::kFilterRows, kL1 = Wasm::kL1Bytes;
  const int64_t C = p.in_c, W = p.in_w, OW = p.out_w;
  if (p.depth_multiplier != 1 || p.filter_h != 3 || p.filter_w != 3 || p.dilation_h != 1 || p.dilation_w != 1 ||
      (p.stride_w != 1 && p.stride_w != 2) || C % 4 != 0 || C == 0)
    return nullptr;
  const int64_t rows = p.batch * p.out_h, nw = 9 * C;
  if (rows == 0 || OW == 0) return nullptr;
  const int64_t grain = reduction_grain(rows, 2, 16), chunks = nchunks(rows, grain);
  const int64_t S = p.stride_w;
  // The chunk partials, then per chunk the running sums of dwf_wasm.
  T* part = scratch.take<T>(2 * chunks * nw + 1);
  const int64_t xrs = p.stride_h * W * C, dys = OW * C;
  // Rows per part (dwf_wasm): one 8-channel pass over n rows reads (n-1)*stride_h + 3 x rows
  // and n dy rows, min(64, 4C) bytes (its line) per pixel; the next 8 channels (same lines)
  // find them in L1 if that stays within kL1 (112x112x32 stride 1: 1 row, 56x56x144
  // stride 2: 2 rows; 1 row each: 168 vs 193 us and 71 vs 68 us).
  const int64_t line = imin(64, 4 * C);
  int64_t sub = 1;
  while (sub < kRows && ((sub * p.stride_h + 3) * W + (sub + 1) * OW) * line <= kL1) ++sub;
  par(exec, rows, grain, [&](int64_t r0, int64_t r1) {
    T* out = part + (r0 / grain) * nw;
    T* sum = part + (chunks + r0 / grain) * nw;
    for (int64_t i = 0; i < nw; ++i) out[i] = T(0);
    for (int64_t r = r0; r < r1;) {
      const int64_t n = r / p.out_h, oy = r % p.out_h;
      const int64_t iy0 = oy * p.stride_h - p.pad_top;
      const int64_t k0 = imax(0, -iy0), k1 = imin(3, p.in_h - iy0);
      int64_t nr = 1;
      if (k0 == 0 && k1 == 3)  // more rows of this image with every ky inside, up to kRows
        while (nr < kRows && r + nr < r1 && oy + nr < p.out_h && iy0 + nr * p.stride_h + 3 <= p.in_h) ++nr;
      if (k1 > k0) {
        const T* xr = x + (n * p.in_h + iy0) * W * C;  // row iy0 (maybe outside x: not read then)
        const T* rws[3];
        T* acc[9];
        for (int64_t ky = k0; ky < k1; ++ky) {
          rws[ky - k0] = xr + ky * W * C;
          for (int kx = 0; kx < 3; ++kx) acc[(ky - k0) * 3 + kx] = out + (ky * 3 + kx) * C;
        }
        Wasm::filter_rows(S, 3, rws, k1 - k0, -p.pad_left, OW, W, C, dy + r * dys, acc, C, nr, xrs, dys, sum, sub);
      }
      r += nr;
    }
  });
  *chunks_out = chunks;
  return part;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

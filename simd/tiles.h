// Per-ISA tile choices of the cpu kernels, as data: one Tiles per arch unit, side by side
// below (as XNNPACK's configs). simd/arch/arch_unit.h makes the unit's row its `kTiles`;
// the drivers (simd/kernels/) read that and pass the sizes to the micro-kernels
// (simd/ukernels/) as template arguments.
//
// The GEMM drivers (conv2d and its two gradients) also take a ConvTuning at run time: which
// of the unit's instantiated GEMM tiles each runs and the filter gradient's K chunks, chosen
// per microarchitecture (simd/tuning.h: a table keyed by CPU vendor, family and model).
#pragma once

#include <cstdint>

namespace gradrt::simd {

// A GEMM register tile (ukernels/gemm.h): rows (broadcast values) x vectors of columns.
struct GemmTile {
  int rows = 0;
  int vectors = 0;
  constexpr bool operator==(const GemmTile&) const = default;
};

// Run-time choices of the GEMM drivers (simd/tuning.cpp fills them per microarchitecture).
struct ConvTuning {
  // Tile per driver; one the unit has not instantiated (Tiles::gemm) runs the unit's default.
  GemmTile conv2d, backprop_input, backprop_filter;
  // Conv2DBackpropFilter K chunk (output pixels per pass over a dw tile), for groups whose
  // padded output channels fit 128 and for wider ones.
  int64_t filter_k_narrow = 512;
  int64_t filter_k_wide = 256;
  // Conv2DBackpropFilter (per-tap GEMM path) with a dw of at most filter_split_tiles register
  // tiles and a long reduction: the output pixels are cut into S slices (S from the shape
  // alone: at least filter_split_pixels pixels per slice, at most 32 slices, S partial dw of at
  // most filter_split_kib KiB in all), each slice summed into its own partial in the plan's
  // workspace, then the partials added in slice order (kernels/conv2d_backprop_filter.h
  // conv2d_backprop_filter_slices). Threads then split the pixels, not only the few dw tiles.
  // Off: GRADRT_CPU_TILES=filter_split=0/0/0 (the key takes PIXELS/KIB/TILES).
  int64_t filter_split_pixels = 1024;
  int64_t filter_split_kib = 1024;
  int64_t filter_split_tiles = 16;
  // Conv2DBackpropFilter on several threads with a wide, tap-poor filter (out_c per group > 16 x
  // taps): work items also split the oc panels into one block per thread, so that each thread reads
  // only its own columns of dy (else the threads split the row tiles and each reads all of dy).
  // Who computes a dw element only, never the bits. Off: GRADRT_CPU_TILES=filter_oc=0.
  bool filter_oc_blocks = true;
  // Conv2DBackpropFilter with at most this many input channels (one group, undilated
  // columns, fw > 1, out_c in whole vectors) runs conv2d_backprop_filter_few_c.h: GEMM rows are
  // a filter row's (kx, c) values. 0: off (the per-tap GEMM for every shape).
  int64_t filter_few_c_max = 4;
  // Also there: up to 3 whole filter rows in one tile where they fit the registers
  // (FewCStackTile, e.g. 3x3x3 -> 16: 27 accumulators; same bits). Off: filter_stack=0.
  bool filter_few_c_stack = true;
  // And there, dy of filter_few_c_prefetch_bytes or more: a segment's passes prefetch the next
  // segment's x rows and dy into L2 (a hint: same bits). Off: few_c_pf=0. Below the size, dy
  // stays in L2 from call to call and the prefetches only cost.
  bool filter_few_c_prefetch = false;
  int64_t filter_few_c_prefetch_bytes = int64_t{2} << 20;
  // Conv2DBackpropFilter (per-tap GEMM path), x + dy of filter_chunk_prefetch_bytes or more: a K
  // chunk's later tiles prefetch the next chunk's x rows and dy into L2 where those are at most
  // filter_chunk_prefetch_ahead bytes (more pushes the chunk being read out of the L2). Same
  // bits. Off: chunk_pf=0.
  bool filter_chunk_prefetch = false;
  int64_t filter_chunk_prefetch_bytes = int64_t{4} << 20;
  int64_t filter_chunk_prefetch_ahead = int64_t{1} << 20;
  // ... and only where this thread's tiles of the chunk do at least this many FLOPs per line
  // prefetched (few channels: little work to hide each line behind; 0: no minimum).
  int64_t filter_chunk_prefetch_min_flops = 0;
  // Conv2DBackpropInput: an interior tile prefetches the next tile's dy lines under every
  // tap row (Zen 5: 1-7% faster; Emerald Rapids: 2-3% slower).
  bool input_prefetch_dy = true;
  // Conv2DBackpropInput, dx of input_prefetch_dx_bytes or more, column stride 1: an interior
  // tile prefetches the next tile's dx lines before its stores (Zen 5: 3x3 s1 56x56x64 batch 8
  // 0.96x the time, 1 and 2 threads). Same bits. On: input_dxpf=1[/FROM_KIB].
  bool input_prefetch_dx = false;
  int64_t input_prefetch_dx_bytes = int64_t{4} << 20;
  // Conv2DBackpropInput, dy of input_k_block_bytes or more, one K run per tile longer than
  // input_k_block values (a 1x1 with many dy channels): the run is cut into blocks of that many,
  // each over every column panel (the tile's A block stays in L1 across the panels; the sums
  // carry over in k order: same bits). 0: off. On: input_kb=K[/FROM_KIB].
  int64_t input_k_block = 0;
  int64_t input_k_block_bytes = int64_t{4} << 20;
  // DepthwiseConv2dNativeBackpropFilter, 3x3 chunks over 8 MB of x + dy: each row chunk's
  // first item prefetches the next row's lines (Zen 5: 0.6 -> 0.4-0.5 ms at 8x56x56x144 s2;
  // Emerald Rapids: 1.2-1.4x the time).
  bool depthwise_filter_prefetch = true;
  // Conv2DBackpropInput 1x1 stride 1 without padding: dx channels up to this many (and at most
  // 4 vectors) stream dy in place (kernels/conv2d_backprop_input_stream.h); 0: off.
  int64_t input_stream_max = 64;
  // That path prefetches the next tile's dy block along each tile's k loop (ukernels/
  // conv1x1_stream.h; EMR: 0.72-0.96x the CPU time on the Keras 1x1 rows, paired, 1 and 2
  // threads). Off: GRADRT_CPU_TILES=stream_pf=0.
  bool input_stream_prefetch = true;
  // Conv2DBackpropInput: run the unit's tile that pads the dx channels (the GEMM's N) to the
  // fewest columns (fewest_padded_columns below) in place of `backprop_input` when that pads
  // more. Emerald Rapids, 1 thread, batch 32, 32 dx channels: 6x4 (64 columns, half of them
  // zeros) took 1.5-3x the time of 12x2 (bench/results_xeon_emr.txt). Off: GRADRT_CPU_TILES=input_fit=0.
  bool input_fit_columns = true;
  // FusedBatchNormGrad with dy + x of at most this many bytes: the dx pass takes its row
  // chunks last to first, so it starts on the rows the sum pass read last (still in L2 where
  // the L2 holds a good part of dy + x). 0: never. Emerald Rapids (2 MB L2): 16 MiB.
  // On 2 or more threads bn_grad_dx_reverse_bytes_mt where >= 0 (each thread's own L2 holds the
  // tail of its own rows, so more of dy + x is still there).
  int64_t bn_grad_dx_reverse_bytes = 0;
  int64_t bn_grad_dx_reverse_bytes_mt = -1;
  int64_t bn_reverse_bytes(int threads) const {
    return threads > 1 && bn_grad_dx_reverse_bytes_mt >= 0 ? bn_grad_dx_reverse_bytes_mt : bn_grad_dx_reverse_bytes;
  }
  // The per-channel sums of FusedBatchNorm (statistics) and FusedBatchNormGrad over inputs of at
  // least this many bytes (x; dy + x) walk whole rows with the sums in L1 (ukernels/batch_norm.h
  // bn_whole_row_sums; same bits) instead of blocks of channels over a chunk of rows. 0: never.
  // Zen 4: 24 MiB (past the L3 with what the op writes). BiasAddGrad keeps its blocks: one tensor,
  // which its blocks read at DRAM speed (Zen 4, 28.9 MB: whole rows 0.9-1.7x the time).
  int64_t bn_whole_rows_bytes = 0;
  bool bn_whole_rows(int64_t bytes) const { return bn_whole_rows_bytes > 0 && bytes >= bn_whole_rows_bytes; }
  // DepthwiseConv2dNativeBackpropInput's stride-2 3-tap rows (dwx2_row): dx of at least this many
  // bytes written with non-temporal stores (vector-aligned dx, whole vectors of channels; a normal
  // store first reads each dx line from DRAM). 0: never. Zen 4, 56x56x144 s2 (session 32, cli_ab):
  // batch 16 (28.9 MB of dx) 0.41x the time at 1 thread, 0.54x at 2; batch 8 (14.4 MB, the L3's
  // size here) 0.87x at 1 thread but 2.6x at 2 when dx stayed in the L3; batch 1 1.7-2.8x. 16 MiB.
  int64_t dw_input_stream_bytes = int64_t{16} << 20;
  // FusedBatchNormGrad (training): dx of at least this many bytes is written
  // with non-temporal stores (when vector-aligned). 0: never. Zen 5: 4 MiB (kernels/fused_batch_norm_grad.h).
  int64_t bn_grad_stream_bytes = int64_t{4} << 20;
  // Conv2DBackpropInput on small images: a zero-bordered copy of dy so that every tile takes
  // merged K runs (simd/kernels/conv2d_backprop_input.h, conv2d_backprop_input_dy_pad; the
  // shape decides, this allows it). Off: GRADRT_CPU_TILES=input_pad=0.
  bool input_pad_dy = true;
  // On padded dy, tiles that keep to one class row where a row tile fits (conv2d_backprop_input_dy_pad
  // `rows`): filter rows on the zero border are dropped. Off: GRADRT_CPU_TILES=input_rows=0.
  bool input_pad_rows = true;
  // Conv2DBackpropInput, merged taps with many edge tiles: tiles of pixels with the same valid
  // taps (conv2d_backprop_input_edge_groups), which never compute a zero tap (and need no dy
  // copy). Off: GRADRT_CPU_TILES=input_groups=0.
  bool input_edge_groups = true;
};

inline constexpr int kMaxGemmTiles = 3;

struct Tiles {
  // GEMM tiles instantiated in this unit; gemm[0] is the default. Unused entries: {0, 0}.
  GemmTile gemm[kMaxGemmTiles];
  // Depthwise row kernels: pixels per register block, and whether two adjacent channel
  // vectors go through one pass (needs 32 vector registers).
  int dw_block_pixels;
  bool dw_channel_pairs;
  // Batch-norm sums: channel vectors per pass over the rows, per element type.
  int bn_vectors_f32;
  int bn_vectors_f64;
  // The 1x1 input gradient's streaming tile (ukernels/conv1x1_stream.h): pixel rows R for
  // ci in 1, 2, 3, 4 vectors. R*CV accumulators + CV filter vectors + a broadcast (+ a product
  // without FMA) fill the unit's registers.
  int stream_rows[4];
  // Its tile rows in half-width vectors (ukernels/conv1x1_stream.h HalfArch) for dx rows of at
  // most half a vector; 0: none (those rows take stream_rows[0] full vectors).
  int stream_half_rows = 0;
  // WebAssembly SIMD128 (V8: 15 vector registers, no FMA): the depthwise kernels of
  // simd/wasm/ replace some of the native ones.
  bool wasm;
};

// The tile of `unit` whose NR = vectors * lanes pads `columns` to the fewest columns (a multiple
// of NR), `preferred` where none pads fewer (the unit's default tile when `preferred` is not one
// of its tiles), the earlier tile between two others that tie. Depends on the shape only, never
// on threads; the conv input gradient sums every pixel's taps in one order whatever its tile
// (simd/kernels/conv2d_backprop_input.h): the same bits with any tile.
constexpr GemmTile fewest_padded_columns(const Tiles& unit, GemmTile preferred, int64_t columns, int64_t lanes) {
  bool built = false;
  for (const GemmTile& t : unit.gemm) built = built || (t.rows > 0 && t == preferred);
  GemmTile best = built ? preferred : unit.gemm[0];
  auto padded = [&](GemmTile t) {
    const int64_t nr = t.vectors * lanes;
    return (columns + nr - 1) / nr * nr;
  };
  for (const GemmTile& t : unit.gemm)
    if (t.rows > 0 && padded(t) < padded(best)) best = t;
  return best;
}

// The rows, one per unit (namespace gradrt::simd::<isa> takes tiles::<isa>).
namespace tiles {
// 32 zmm registers: a 12x2 GEMM tile (24 accumulators; 6x4, the alternative simd/tuning.cpp
// picks on Intel server cores; 14x2 was measured there and dropped), 8-pixel depthwise blocks
// with channel-vector pairs, 8 float vectors per batch-norm pass (16 floats each; 4 for double).
inline constexpr Tiles avx512{.gemm = {{12, 2}, {6, 4}},
                              .dw_block_pixels = 8, .dw_channel_pairs = true, .bn_vectors_f32 = 8,
                              .bn_vectors_f64 = 4, .stream_rows = {16, 12, 8, 6}, .stream_half_rows = 24,
                              .wasm = false};
// 16 ymm registers: a 6x2 GEMM tile (12 accumulators + 2 B + broadcast), 4-pixel depthwise
// blocks, 4 vectors per batch-norm pass (2 sums + mean each). Also built: 4x3 (12 accumulators
// + 3 B + broadcast: 7 loads per 12 FMAs, against 6x2's 8; the shape of oneDNN's AVX2 JIT
// tiles) and 12x1 (NR = 8 floats, for 8 or fewer output / dx channels, which 6x2 pads to 16);
// simd/tuning.cpp says where each runs (session 14: measured on an Emerald Rapids core running
// this unit, bench/results_xeon_emr.txt "AVX2 on Emerald Rapids").
inline constexpr Tiles avx2{.gemm = {{6, 2}, {4, 3}, {12, 1}},
                            .dw_block_pixels = 4, .dw_channel_pairs = false, .bn_vectors_f32 = 4,
                            .bn_vectors_f64 = 4, .stream_rows = {12, 6, 4, 3}, .wasm = false};
// 16 xmm registers: as avx2 (6x2 only), without FMA.
inline constexpr Tiles sse4_2{.gemm = {{6, 2}},
                              .dw_block_pixels = 4, .dw_channel_pairs = false, .bn_vectors_f32 = 4,
                              .bn_vectors_f64 = 4, .stream_rows = {12, 6, 4, 3}, .wasm = false};
// 32 q registers of 4 floats: an 8x2 GEMM tile, 8-pixel depthwise blocks with channel-vector
// pairs, 4 vectors per batch-norm pass.
inline constexpr Tiles neon{.gemm = {{8, 2}},
                            .dw_block_pixels = 8, .dw_channel_pairs = true, .bn_vectors_f32 = 4,
                            .bn_vectors_f64 = 4, .stream_rows = {16, 12, 8, 6}, .wasm = false};
// V8 on x64: 15 allocatable vector registers and no FMA (a*b + c is a multiply into a
// temporary, then an add), so a 6x2 GEMM tile (12 accumulators + 2 B + broadcast + product
// = 16) spills; 4x2 leaves room. 4-pixel depthwise blocks, and the simd/wasm/ row kernels
// where they measured faster.
inline constexpr Tiles wasm_simd128{.gemm = {{4, 2}}, .dw_block_pixels = 4, .dw_channel_pairs = false,
                                    .bn_vectors_f32 = 4, .bn_vectors_f64 = 4, .stream_rows = {8, 4, 3, 2}, .wasm = true};
// Vector width 1 (plain C++): a 4x2 GEMM tile.
inline constexpr Tiles scalar{.gemm = {{4, 2}},
                              .dw_block_pixels = 4, .dw_channel_pairs = false, .bn_vectors_f32 = 4,
                              .bn_vectors_f64 = 4, .stream_rows = {8, 4, 4, 2}, .wasm = false};
}  // namespace tiles

}  // namespace gradrt::simd

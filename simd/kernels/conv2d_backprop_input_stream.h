// Conv2DBackpropInput, 1x1 stride 1 without padding, few input channels: one GEMM
//   dx[P x ci] = dy[P x co] * W[ci x co]^T,   P = batch*in_h*in_w pixels (in_h = out_h, in_w = out_w)
// with a narrow output (ci = 1..4 vectors) and a short K (co). It is memory-bound (the Keras
// step's 32x32x16 <- 96 at batch 32 reads 12.6 MB of dy for 100 MFLOP), so nothing may copy dy
// or cost per tile: the GEMM driver's pointer tables and 6-12-row tiles took 2.4x oneDNN's time
// there. Here dy rows stream in place: R consecutive pixels are one contiguous block of R*co dy
// values and R*ci dx values (ukernels/conv1x1_stream.h); W^T (co x ci padded to NR, a few KB) is
// packed once per call (or kept by the plan) and stays in L1. Threads split P into whole R-pixel
// tiles; each dx value is computed by one tile whatever the cut: the same bits at any thread
// count, and the same as the GEMM path (k in order 0..co-1 in one FMA chain per value).
//
// When (conv2d_backprop_input_stream_vectors): ConvTuning::input_stream_max bounds ci (per
// microarchitecture, simd/tuning.cpp, where the crossover against the GEMM path is measured), and
// ci must fit Tiles::stream_rows' 4 vectors (avx512: 64 floats, 32 doubles; avx2 32 / 16; sse4_2,
// neon, wasm 16 / 8; scalar 4) and W^T L1 (below). Rows of at most half a vector run half-width
// vectors where the unit has them (AVX-512: ymm, Tiles::stream_half_rows). Every tile prefetches
// the next tile's dy along its k loop (ConvTuning::input_stream_prefetch, ukernels/conv1x1_stream.h).
#pragma once

#include <type_traits>

#include "common.h"
#include "../ukernels/conv1x1_stream.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Vectors of ci (the micro-kernel's CV) when this path runs the shape, else 0.
template <class T, class Arch>
constexpr int conv2d_backprop_input_stream_vectors(const ConvTuning& tu, const ConvParams& p) {
  const bool shape = p.filter_h == 1 && p.filter_w == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
                     p.pad_left == 0 && p.groups == 1 && p.in_h == p.out_h && p.in_w == p.out_w &&
                     p.filter_in_c == p.in_c && p.in_c >= 1 && p.in_c <= tu.input_stream_max;
  if (!shape) return 0;
  // W^T must stay in L1 beside the streams: co rows of cv vectors within 32 KiB (the Keras
  // shapes: at most 144 x 32 floats, 18 KiB). This also leaves the NCHW 1x1 filter gradient's
  // remapped calls (core/ops/conv_1x1_nchw.cpp: "co" = H*W pixels, a 128+ KiB W^T repacked per
  // image, and "P" = only Ci rows) on the GEMM path.
  const int64_t cv = (p.in_c + Vec<T, Arch>::width - 1) / Vec<T, Arch>::width;
  const bool fits_l1 = p.out_c * cv * Vec<T, Arch>::width * int64_t(sizeof(T)) <= 32 * 1024;
  return cv <= 4 && fits_l1 && kTiles.stream_rows[cv - 1] > 0 ? int(cv) : 0;
}

// Rows of the half-width-vector tile (HalfArch, Tiles::stream_half_rows) when ci fits half a
// vector of the unit; 0: the full-width tile (stream_rows[0]).
template <class T, class Arch>
constexpr int conv2d_backprop_input_stream_half_rows(int64_t ci) {
  using H = typename HalfArch<Arch>::type;
  if constexpr (std::is_void_v<H> || kTiles.stream_half_rows == 0)
    return 0;
  else
    return ci <= Vec<T, H>::width ? kTiles.stream_half_rows : 0;
}

// Scratch: the packed W^T (co rows of NR values), when the plan keeps none.
template <class T, class Arch>
size_t conv2d_backprop_input_stream_workspace(int cv, const ConvParams& p) {
  return line_bytes<T>(p.out_c * cv * Vec<T, Arch>::width);
}

// Whether the tiles prefetch the next tile's dy block over their co steps (ukernels/
// conv1x1_stream.h): when the tuning allows it (ConvTuning::input_stream_prefetch) and a dy row
// fills a cache line: 32768 pixels of 16 <- 8 (32-byte rows, 8 steps) took 1.04-1.05x the
// time with it (EMR, 1 thread).
template <class T>
bool conv2d_backprop_input_stream_prefetch(const ConvTuning& tu, int64_t co) {
  return tu.input_stream_prefetch && co * int64_t(sizeof(T)) >= 64;
}

// The path with tiles of R pixels x CV vectors of arch VArch (the unit's, or its HalfArch).
template <class T, class VArch, int R, int CV>
void conv2d_backprop_input_stream_tiles(const Exec& exec, const ConvTuning& tu, const ConvParams& p, const T* w,
                                        const T* dy, T* dx) {
  using K = Conv1x1Stream<T, VArch, R, CV>;
  using K1 = Conv1x1Stream<T, VArch, 1, CV>;
  constexpr int64_t NR = K::NR;
  const int64_t P = p.batch * p.in_h * p.in_w, co = p.out_c, ci = p.in_c;
  if (P == 0) return;
  // wt[k*NR + c] = w[c*co + k] (HWIO with H = W = 1: w is [ci][co]), zero for c >= ci. The
  // layout tag differs from the GEMM panels' (NR * sizeof(T)) by the high bit: a plan whose
  // tuning changed path never reads the other layout as its own.
  Arena scratch(exec);
  bool current = false;
  const uint64_t layout = (uint64_t(1) << 63) | uint64_t(NR * int64_t(sizeof(T)));
  T* wt = static_cast<T*>(kept_weights(exec, w, line_bytes<T>(co * NR), layout, &current));
  if (!wt) wt = scratch.take<T>(co * NR);
  if (!current)
    for (int64_t k = 0; k < co; ++k)
      for (int64_t c = 0; c < NR; ++c) wt[k * NR + c] = c < ci ? w[c * co + k] : T(0);
  // Tile t covers pixels [t*R, t*R + R); the last P % R pixels one at a time (the 1-row kernel:
  // same order of sums). Guided chunks of >= 8 tiles (~1-2 us each at the Keras shapes).
  const int64_t tiles = P / R;
  const bool pf = conv2d_backprop_input_stream_prefetch<T>(tu, co);
  par_guided(exec, tiles, 8, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) K::run(co, ci, dy + t * R * co, wt, dx + t * R * ci, pf);
  });
  for (int64_t i = tiles * R; i < P; ++i) K1::run(co, ci, dy + i * co, wt, dx + i * ci, false);
}

// Runs the path with cv vectors (from conv2d_backprop_input_stream_vectors).
template <class T, class Arch>
void conv2d_backprop_input_stream(int cv, const Exec& exec, const ConvTuning& tu, const ConvParams& p, const T* w,
                                  const T* dy, T* dx) {
  constexpr int half = kTiles.stream_half_rows;
  if constexpr (half > 0 && !std::is_void_v<typename HalfArch<Arch>::type>)
    if (conv2d_backprop_input_stream_half_rows<T, Arch>(p.in_c))
      return conv2d_backprop_input_stream_tiles<T, typename HalfArch<Arch>::type, half, 1>(exec, tu, p, w, dy, dx);
  constexpr Tiles u = kTiles;
  switch (cv) {
    case 1: return conv2d_backprop_input_stream_tiles<T, Arch, u.stream_rows[0], 1>(exec, tu, p, w, dy, dx);
    case 2: return conv2d_backprop_input_stream_tiles<T, Arch, u.stream_rows[1], 2>(exec, tu, p, w, dy, dx);
    case 3: return conv2d_backprop_input_stream_tiles<T, Arch, u.stream_rows[2], 3>(exec, tu, p, w, dy, dx);
    default: return conv2d_backprop_input_stream_tiles<T, Arch, u.stream_rows[3], 4>(exec, tu, p, w, dy, dx);
  }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

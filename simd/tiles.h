// Per-ISA tile choices of the cpu kernels: data, one constant per arch unit
// (simd/arch/<isa>.cpp defines `kTiles` in its namespace before including arch_unit.h).
// The drivers (simd/kernels/) read these; the micro-kernels (simd/ukernels/) take them as
// template parameters. Why each value is what it is: the unit's comments.
#pragma once

#include <cstdint>

namespace gradrt::simd {

struct Tiles {
  // GEMM register tile (ukernels/gemm.h): rows (broadcast values) x vectors of columns.
  int gemm_rows;
  int gemm_vectors;
  // Conv2DBackpropFilter K chunk (output pixels per pass over a dw tile), for groups of at
  // most 128 output channels and for wider ones.
  int64_t filter_k_narrow;
  int64_t filter_k_wide;
  // Depthwise row kernels: pixels per register block, and whether two adjacent channel
  // vectors go through one pass (needs 32 vector registers).
  int dw_block_pixels;
  bool dw_channel_pairs;
  // Batch-norm sums: channel vectors per pass over the rows, per element type.
  int bn_vectors_f32;
  int bn_vectors_f64;
  // WebAssembly SIMD128 (V8: 15 vector registers, no FMA): the depthwise kernels of
  // simd/wasm/ replace some of the native ones.
  bool wasm;
};

}  // namespace gradrt::simd

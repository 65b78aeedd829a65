// The cpu kernels instantiated for avx2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx2
#define GRADRT_SIMD_ARCH xsimd::fma3<xsimd::avx2>
#include "../tiles.h"

namespace gradrt::simd::avx2 {
// 16 ymm registers: a 6x2 GEMM tile (12 accumulators + 2 B + broadcast), 4-pixel depthwise
// blocks, 4 vectors per batch-norm pass (2 sums + mean each).
constexpr Tiles kTiles{.gemm_rows = 6, .gemm_vectors = 2, .filter_k_narrow = 512, .filter_k_wide = 256,
                       .dw_block_pixels = 4, .dw_channel_pairs = false, .bn_vectors_f32 = 4, .bn_vectors_f64 = 4,
                       .wasm = false};
}  // namespace gradrt::simd::avx2

#include "arch_unit.h"

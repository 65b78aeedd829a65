// The cpu kernels instantiated for sse4_2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS sse4_2
#define GRADRT_SIMD_ARCH xsimd::sse4_2
#include "../tiles.h"

namespace gradrt::simd::sse4_2 {
// 16 xmm registers: as avx2 (6x2 GEMM tile, 4-pixel depthwise blocks), no FMA.
constexpr Tiles kTiles{.gemm_rows = 6, .gemm_vectors = 2, .filter_k_narrow = 512, .filter_k_wide = 256,
                       .dw_block_pixels = 4, .dw_channel_pairs = false, .bn_vectors_f32 = 4, .bn_vectors_f64 = 4,
                       .wasm = false};
}  // namespace gradrt::simd::sse4_2

#include "arch_unit.h"

// The cpu kernels instantiated for avx512 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx512
#define GRADRT_SIMD_ARCH xsimd::avx512f
#include "../tiles.h"

namespace gradrt::simd::avx512 {
// 32 zmm registers: a 12x2 GEMM tile, 8-pixel depthwise blocks with channel-vector pairs,
// 8 float vectors per batch-norm pass (16 floats each; 4 for double).
constexpr Tiles kTiles{.gemm_rows = 12, .gemm_vectors = 2, .filter_k_narrow = 512, .filter_k_wide = 256,
                       .dw_block_pixels = 8, .dw_channel_pairs = true, .bn_vectors_f32 = 8, .bn_vectors_f64 = 4,
                       .wasm = false};
}  // namespace gradrt::simd::avx512

#include "arch_unit.h"

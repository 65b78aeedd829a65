// The cpu kernels instantiated for neon (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS neon
#define GRADRT_SIMD_ARCH xsimd::neon64
#include "../tiles.h"

namespace gradrt::simd::neon {
// 32 q registers of 4 floats: an 8x2 GEMM tile, 8-pixel depthwise blocks with channel-vector
// pairs, 4 vectors per batch-norm pass.
constexpr Tiles kTiles{.gemm_rows = 8, .gemm_vectors = 2, .filter_k_narrow = 512, .filter_k_wide = 256,
                       .dw_block_pixels = 8, .dw_channel_pairs = true, .bn_vectors_f32 = 4, .bn_vectors_f64 = 4,
                       .wasm = false};
}  // namespace gradrt::simd::neon

#include "arch_unit.h"

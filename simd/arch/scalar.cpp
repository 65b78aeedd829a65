// The cpu kernels instantiated for scalar (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS scalar
#define GRADRT_SIMD_ARCH scalar::scalar_arch
#include "../tiles.h"

namespace gradrt::simd::scalar {
// Vector width 1 (plain C++): a 4x2 GEMM tile.
constexpr Tiles kTiles{.gemm_rows = 4, .gemm_vectors = 2, .filter_k_narrow = 512, .filter_k_wide = 256,
                       .dw_block_pixels = 4, .dw_channel_pairs = false, .bn_vectors_f32 = 4, .bn_vectors_f64 = 4,
                       .wasm = false};
}  // namespace gradrt::simd::scalar

#include "arch_unit.h"

// The cpu kernels instantiated for WebAssembly SIMD128 (Emscripten; compiler flags:
// simd/CMakeLists.txt). xsimd 8.1 has no wasm arch: its sse4_2 arch compiles to SIMD128
// through Emscripten's SSE headers (-msimd128 -msse4.2); the kernels written for V8
// directly (<wasm_simd128.h>) are in simd/wasm/.
#define GRADRT_SIMD_NS wasm_simd128
#define GRADRT_SIMD_ARCH xsimd::sse4_2
#include "../tiles.h"

namespace gradrt::simd::wasm_simd128 {
// V8 on x64: 15 allocatable vector registers and no FMA (a*b + c is a multiply into a
// temporary, then an add), so a 6x2 GEMM tile (12 accumulators + 2 B + broadcast +
// product = 16) spills; 4x2 leaves room. Depthwise blocks of 4 pixels, and the simd/wasm/
// row kernels where they measured faster.
constexpr Tiles kTiles{.gemm_rows = 4, .gemm_vectors = 2, .filter_k_narrow = 512, .filter_k_wide = 256,
                       .dw_block_pixels = 4, .dw_channel_pairs = false, .bn_vectors_f32 = 4, .bn_vectors_f64 = 4,
                       .wasm = true};
}  // namespace gradrt::simd::wasm_simd128

#include "../wasm/hooks.h"
#include "arch_unit.h"

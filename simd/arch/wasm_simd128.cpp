// The cpu kernels instantiated for WebAssembly SIMD128 (Emscripten; compiler flags:
// simd/CMakeLists.txt). xsimd 8.1 has no wasm arch: its sse4_2 arch compiles to SIMD128
// through Emscripten's SSE headers (-msimd128 -msse4.2); the kernels written for V8
// directly (<wasm_simd128.h>) are in simd/wasm/, and the unit's depthwise kernel set
// (wasm/kernels.h, WasmDwKernels) needs the unit's kTiles before it.
#define GRADRT_SIMD_NS wasm_simd128
#define GRADRT_SIMD_ARCH xsimd::sse4_2
#include "unit_tiles.h"
#include "../wasm/kernels.h"
#include "arch_unit.h"

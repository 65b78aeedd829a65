// The cpu kernels instantiated for sse4_2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS sse4_2
#define GRADRT_SIMD_ARCH xsimd::sse4_2
#if defined(__wasm_simd128__)
// WASM SIMD128 (V8 on x64): 15 allocatable vector registers and no FMA (a*b + c is a
// multiply into a temporary, then an add), so 6x2 (12 accumulators + 2 B + broadcast +
// product = 16) spills; 4x2 leaves room.
#ifndef GRADRT_WASM_MR
#define GRADRT_WASM_MR 4
#endif
#define GRADRT_SIMD_MR GRADRT_WASM_MR
#define GRADRT_SIMD_NRV 2
#else
#define GRADRT_SIMD_MR 6   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#endif
#include "arch_unit.h"

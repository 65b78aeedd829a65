// The cpu kernels instantiated for avx2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx2
#define GRADRT_SIMD_ARCH xsimd::fma3<xsimd::avx2>
#define GRADRT_SIMD_MR 6   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "arch_unit.h"

// The cpu kernels instantiated for avx512 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx512
#define GRADRT_SIMD_ARCH xsimd::avx512f
#define GRADRT_SIMD_MR 12   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "arch_unit.h"

// The cpu kernels instantiated for neon (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS neon
#define GRADRT_SIMD_ARCH xsimd::neon64
#define GRADRT_SIMD_MR 8   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "arch_unit.h"

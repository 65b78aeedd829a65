// The cpu kernels instantiated for scalar (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS scalar
#define GRADRT_SIMD_ARCH scalar::scalar_arch
#define GRADRT_SIMD_MR 4   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "arch_unit.h"

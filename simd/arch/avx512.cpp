// The cpu kernels instantiated for avx512 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx512
#define GRADRT_SIMD_ARCH xsimd::avx512f
#include "arch_unit.h"

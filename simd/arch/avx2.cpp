// The cpu kernels instantiated for avx2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx2
#define GRADRT_SIMD_ARCH xsimd::fma3<xsimd::avx2>
#include "arch_unit.h"

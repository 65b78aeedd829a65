// The cpu kernels instantiated for neon (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS neon
#define GRADRT_SIMD_ARCH xsimd::neon64
#include "arch_unit.h"

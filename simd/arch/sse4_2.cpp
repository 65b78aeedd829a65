// The cpu kernels instantiated for sse4_2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS sse4_2
#define GRADRT_SIMD_ARCH xsimd::sse4_2
#include "arch_unit.h"

// The cpu kernels instantiated for scalar (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS scalar
#define GRADRT_SIMD_ARCH scalar::scalar_arch
#include "arch_unit.h"

// The cpu kernels instantiated for scalar (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS scalar
#define GRADRT_SIMD_MR 4   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "../kernels/all.h"

namespace gradrt::simd {

const KernelTable* table_scalar() {
  static const KernelTable table = scalar::make_table<scalar::scalar_arch>();
  return &table;
}

}  // namespace gradrt::simd

// The cpu kernels instantiated for neon (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS neon
#define GRADRT_SIMD_MR 8   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "../kernels/all.h"

namespace gradrt::simd {

const KernelTable* table_neon() {
  static const KernelTable table = neon::make_table<xsimd::neon64>();
  return &table;
}

}  // namespace gradrt::simd

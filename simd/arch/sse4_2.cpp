// The cpu kernels instantiated for sse4_2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS sse4_2
#define GRADRT_SIMD_MR 6   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "../kernels/all.h"

namespace gradrt::simd {

const KernelTable* table_sse4_2() {
  static const KernelTable table = sse4_2::make_table<xsimd::sse4_2>();
  return &table;
}

}  // namespace gradrt::simd

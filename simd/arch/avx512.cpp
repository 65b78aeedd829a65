// The cpu kernels instantiated for avx512 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx512
#define GRADRT_SIMD_MR 12   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "../kernels/all.h"

namespace gradrt::simd {

const KernelTable* table_avx512() {
  static const KernelTable table = avx512::make_table<xsimd::avx512f>();
  return &table;
}

}  // namespace gradrt::simd

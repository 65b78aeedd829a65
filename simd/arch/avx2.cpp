// The cpu kernels instantiated for avx2 (compiler flags: simd/CMakeLists.txt).
#define GRADRT_SIMD_NS avx2
#define GRADRT_SIMD_MR 6   // GEMM tile: MR rows x NRV vectors
#define GRADRT_SIMD_NRV 2
#include "../kernels/all.h"

namespace gradrt::simd {

const KernelTable* table_avx2() {
  static const KernelTable table = avx2::make_table<xsimd::fma3<xsimd::avx2>>();
  return &table;
}

}  // namespace gradrt::simd

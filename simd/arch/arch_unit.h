// The body of every simd/arch/<isa>.cpp: the kernels for one arch and its table accessor
// table_<GRADRT_SIMD_NS>(). The unit defines GRADRT_SIMD_NS (its namespace, also the name of
// its row in simd/tiles.h) and GRADRT_SIMD_ARCH (the xsimd arch type), then includes this file.
#include "unit_tiles.h"

#include "../kernels/all.h"

#define GRADRT_SIMD_TABLE_FN_(ns) table_##ns
#define GRADRT_SIMD_TABLE_FN(ns) GRADRT_SIMD_TABLE_FN_(ns)

namespace gradrt::simd {

const KernelTable* GRADRT_SIMD_TABLE_FN(GRADRT_SIMD_NS)() {
  static const KernelTable table = GRADRT_SIMD_NS::make_table<GRADRT_SIMD_ARCH>();
  return &table;
}

}  // namespace gradrt::simd

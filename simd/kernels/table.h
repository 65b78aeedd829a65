// The kernel table one ISA's translation unit fills (simd/arch/<isa>.cpp) and
// cpu_backend.cpp calls through. Plain function pointers: no arch-dependent type crosses
// the boundary.
#pragma once

#include "backend.h"

namespace gradrt::simd {

// One slot per kernel of the list (kernels.h); make_kernels (all.h) fills them.
template <class T>
struct KernelsT {
#define GRADRT_CPU_SLOT(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) void (*STEM)(const Exec&, const P&, GRADRT_UNPACK ARGS);
  GRADRT_KERNELS(GRADRT_CPU_SLOT, T)
#undef GRADRT_CPU_SLOT
};

struct KernelTable {
  KernelsT<float> f32;
  KernelsT<double> f64;
};

// One per ISA unit built into this binary (see simd/CMakeLists.txt).
const KernelTable* table_scalar();
const KernelTable* table_sse4_2();
const KernelTable* table_avx2();
const KernelTable* table_avx512();
const KernelTable* table_neon();
const KernelTable* table_wasm_simd128();

}  // namespace gradrt::simd

// The kernel table one ISA's translation unit fills (simd/arch/<isa>.cpp) and
// cpu_backend.cpp calls through. Plain function pointers: no arch-dependent type crosses
// the boundary.
#pragma once

#include "backend.h"
#include "../cpu_isa.h"
#include "../tiles.h"

namespace gradrt::simd {

// One slot per kernel of the list (kernels.h); make_kernels (all.h) fills them. Every slot
// takes the run-time GEMM choices (tiles.h ConvTuning); only the GEMM drivers read them.
// <stem>_workspace: the scratch bytes the driver takes for these params on `threads`
// threads (Backend::workspace_size; 0 for a driver that takes none).
template <class T>
struct KernelsT {
#define GRADRT_CPU_SLOT(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  void (*STEM)(const Exec&, const ConvTuning&, const P&, GRADRT_UNPACK ARGS);   \
  size_t (*STEM##_workspace)(int threads, const ConvTuning&, const P&);
  GRADRT_KERNELS(GRADRT_CPU_SLOT, T)
#undef GRADRT_CPU_SLOT
};

// A GEMM micro-kernel of the unit (ukernels/gemm.h Gemm<float, Arch, rows, vectors>), for its
// tester (tests/test_ukernels.cpp): the unit's tiles and their 2MR/3, MR/3-row variants.
struct GemmUkernel {
  GemmTile tile;
  int lanes = 1;  // floats per vector: the micro-kernel's NR is tile.vectors * lanes
  void (*rows)(int64_t ntaps, int64_t kc, const float* const* a, int64_t as, const float* const* b, float* const* c,
               int64_t mr, int64_t nr) = nullptr;
  void (*cols)(int64_t kc, const float* const* a, int64_t a_off, const float* b, int64_t ldb, float* c, int64_t ldc,
               int64_t mr, int64_t nr, bool accumulate) = nullptr;
};

struct KernelTable {
  KernelsT<float> f32;
  KernelsT<double> f64;
  GemmUkernel gemm[3 * kMaxGemmTiles];  // unused entries: tile {0, 0}
};

// Driver calls that took memory of their own for want of workspace (common.h Arena).
uint64_t workspace_fallbacks();
// Packs of a plan's kept weights (common.h kept_weights).
uint64_t weight_packs();

// The table of an ISA built into this binary (the scalar one for any other); cpu_backend.cpp.
const KernelTable* kernel_table(Isa isa);

// One per ISA unit built into this binary (see simd/CMakeLists.txt).
const KernelTable* table_scalar();
const KernelTable* table_sse4_2();
const KernelTable* table_avx2();
const KernelTable* table_avx512();
const KernelTable* table_neon();
const KernelTable* table_wasm_simd128();

}  // namespace gradrt::simd

// Shared pieces of the depthwise micro-kernels (depthwise_gather.h, depthwise_filter.h):
// the block size, register pins, and the grouped-row argument.
//
// A row's taps often come as R groups of K taps that share one source row and whose
// offsets are consecutive (dilation 1; simd/kernels/depthwise_rows.h finds them). Then
// pixel j's tap k and pixel j+1's tap k-1 (step 1) read the same source vector: a block of
// P pixels needs only (P-1)*step + K source loads per group instead of P*K, each feeding up
// to K multiply-adds from registers (dwg_block, dwg_pair, dwf_block, dwf_chunk3).
#pragma once

#include "vec.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Pixels per register block: a template parameter P of the block micro-kernels (dwg_block,
// dwf_block, dwf_chunk3), which the drivers take from their unit's Tiles::dw_block_pixels.
// With 32 vector registers (AVX-512, NEON) 8 pixels fit next to 9 weights/accumulators; with
// 16 (SSE, AVX2), 4.
// WASM: V8 has 15 usable on x64 and needs a temporary for every product (no FMA), and
// neither LLVM nor Binaryen keep the source order of a block (they hoist its loads and
// compute one accumulator's whole chain at a time), so a block must fit even with every
// value of it live at once: the gather reloads the K weights of one group per block
// (dwg_block's ReloadW; 4 pixels: 6 sources + 3 weights + 4 sums); the filter gradient keeps
// dwf_interior.

// Pins a loaded vector in a register. Without it GCC folds the load back into every
// multiply-add that uses it (a memory operand per FMA: the reuse these kernels are about is
// undone, and unaligned 64-byte loads split across cache lines cost twice).
// WASM: LLVM does not model registers there (locals are free) and hoists every load of a
// block to its top, computing pixel after pixel; V8 then spills most of them. The pin is
// an ordering point instead (volatile, memory clobber): no load moves across it.
template <class B>
inline void dw_pin(B& x) {
#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
  if constexpr (sizeof(B) >= 16) {
    auto r = static_cast<typename B::register_type>(x);
#if defined(__x86_64__)
    asm("" : "+v"(r));
#else
    asm("" : "+w"(r));
#endif
    x = B(r);
  }
#elif defined(__wasm_simd128__)
  if constexpr (sizeof(B) >= 16) {
    auto r = static_cast<typename B::register_type>(x);
    asm volatile("" : "+r"(r) : : "memory");
    x = B(r);
  }
#else
  (void)x;
#endif
}

// WASM: keeps an accumulator's update before the next dw_pin (see there), so the
// multiply-adds of one source vector run before the next one is loaded. Native: nothing.
template <class B>
inline void dw_keep(B& a) {
#if defined(__wasm_simd128__)
  if constexpr (sizeof(B) >= 16) {
    auto r = static_cast<typename B::register_type>(a);
    asm volatile("" : "+r"(r));
    a = B(r);
  }
#else
  (void)a;
#endif
}

// Pins a pointer in a register, so that an unrolled walk `load(q); q += C;` stays one add
// per step instead of GCC precomputing every multiple of C (one register each: spilled).
template <class T>
inline void dw_pin_ptr(T*& q) {
#if defined(__GNUC__) && !defined(__wasm__)
  asm("" : "+r"(q));
#else
  (void)q;
#endif
}

// A row in grouped form for the grouped kernels: group r reads source row row[r], its tap k
// at source pixel j*S + o[r] + k; every tap of pixel j is inside the row (0 <= pixel <
// src_w) for j in [j_lo, j_hi) (the interior); the edge pixels outside it test each tap.
template <class T>
struct GroupedRow {
  const T* row[3];
  int64_t o[3];
  int64_t nj, j_lo, j_hi, src_w, C;
};

}  // namespace gradrt::simd::GRADRT_SIMD_NS

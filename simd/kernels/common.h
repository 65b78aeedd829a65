// Shared pieces of the cpu kernels. Every kernel header is included by each per-ISA
// translation unit (simd/arch/<isa>.cpp) and instantiated there for one xsimd arch.
//
// Trap (ODR across ISA flags): an inline function or template instantiation that does not
// depend on the arch is emitted in every ISA's object, each compiled with different -m flags,
// and the linker keeps one of them at random, possibly the AVX-512 one. So kernel code
// depends on `Arch` everywhere, and anything arch-independent that touches memory
// (allocation, std::function for parallel_for) lives in cpu_backend.cpp, compiled with
// baseline flags, behind the plain functions declared here.
#pragma once

#include <cstddef>
#include <cstdint>

#include <xsimd/xsimd.hpp>

#include "backend.h"
#include "params.h"
#include "tiles.h"

// Keeps a micro-kernel out of line. Native: GCC -O3 inlining spilled the GEMM tile. WASM:
// V8 tiers a function up to TurboFan only when it is called again, so a hot loop must sit
// in a function called per tile or per row, not inside one entered once per op.
#if defined(__GNUC__)
#define GRADRT_SIMD_NOINLINE __attribute__((noinline))
#else
#define GRADRT_SIMD_NOINLINE
#endif

namespace gradrt::simd {

// ---- implemented in cpu_backend.cpp (baseline flags)
// parallel_for(exec, n, grain, fn) with fn as a plain function pointer + context.
void parallel_chunks(const Exec& exec, int64_t n, int64_t grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end));
// parallel_for_guided(exec, n, min_grain, fn), likewise.
void parallel_guided(const Exec& exec, int64_t n, int64_t min_grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end));
// A thread-local, 64-byte aligned scratch buffer per slot, grown on demand and kept for
// reuse (the only memory kernels obtain). Contents are unspecified. Slots let one kernel
// hold several buffers at once; a pointer stays valid until the same thread asks the same
// slot for more bytes.
void* workspace(int slot, size_t bytes);
// A zero-filled, read-only buffer of at least `bytes` (thread-local, grown on demand).
const void* zeros(size_t bytes);

}  // namespace gradrt::simd

#ifndef GRADRT_SIMD_NS
#error "define GRADRT_SIMD_NS (the ISA's namespace) before including simd kernels"
#endif

// Everything below, and every kernel header, lives in gradrt::simd::<isa>, so no symbol of
// one ISA's object can stand in for another's at link time.
namespace gradrt::simd::GRADRT_SIMD_NS {

// A stand-in xsimd arch for the plain C++ build: vector width 1, T itself is the "batch".
struct scalar_arch {
  static constexpr const char* name() { return "scalar"; }
};

// The few vector operations the kernels use, over an xsimd batch or (scalar_arch) a T.
template <class T, class Arch>
struct Vec {
  using type = xsimd::batch<T, Arch>;
  static constexpr int64_t width = static_cast<int64_t>(type::size);
  static type load(const T* p) { return type::load_unaligned(p); }
  static void store(T* p, const type& v) { v.store_unaligned(p); }
  static type set1(T v) { return type(v); }
  static type zero() { return type(T(0)); }
  // a*b + c (fused where the ISA has FMA; sse4_2 gets a multiply and an add).
  static type fma(const type& a, const type& b, const type& c) { return xsimd::fma(a, b, c); }
};

template <class T>
struct Vec<T, scalar_arch> {
  using type = T;
  static constexpr int64_t width = 1;
  static type load(const T* p) { return *p; }
  static void store(T* p, const type& v) { *p = v; }
  static type set1(T v) { return v; }
  static type zero() { return T(0); }
  static type fma(const type& a, const type& b, const type& c) { return a * b + c; }
};

// Calls f(begin, end) over [0, n) in chunks of `grain` through parallel_chunks. The chunking
// is parallel_for's: it depends on n and grain only.
template <class F>
inline void par(const Exec& exec, int64_t n, int64_t grain, F&& f) {
  using Fn = std::remove_reference_t<F>;
  parallel_chunks(exec, n, grain, const_cast<void*>(static_cast<const void*>(&f)),
                  [](void* ctx, int64_t b, int64_t e) { (*static_cast<Fn*>(ctx))(b, e); });
}

// Calls f(begin, end) over [0, n) in guided chunks of at least min_grain items (parallel.h
// parallel_for_guided): only for loops whose results do not depend on the cut.
template <class F>
inline void par_guided(const Exec& exec, int64_t n, int64_t min_grain, F&& f) {
  using Fn = std::remove_reference_t<F>;
  parallel_guided(exec, n, min_grain, const_cast<void*>(static_cast<const void*>(&f)),
                  [](void* ctx, int64_t b, int64_t e) { (*static_cast<Fn*>(ctx))(b, e); });
}

// Software prefetch of the 64-byte lines of [p, p + bytes) (a hint: no effect on results).
template <class Arch>
inline void prefetch_lines(const void* p, int64_t bytes) {
#if defined(__GNUC__) && !defined(__wasm__)
  const char* c = static_cast<const char*>(p);
  for (int64_t b = 0; b < bytes; b += 64) __builtin_prefetch(c + b, 0, 3);
#else
  (void)p;
  (void)bytes;
#endif
}

constexpr int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
constexpr int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

// Floor division and modulo for possibly negative a, positive b.
constexpr int64_t floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
constexpr int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

// Grain for loops whose results do not depend on the chunking (each output written by one
// chunk, no cross-chunk sums): a few chunks per thread for load balance.
inline int64_t balance_grain(const Exec& exec, int64_t n, int64_t chunks_per_thread = 4) {
  int64_t parts = imax(1, int64_t(exec.threads) * chunks_per_thread);
  return imax(1, (n + parts - 1) / parts);
}

// Chunks of `grain` in [0, n): what parallel_for cuts.
constexpr int64_t nchunks(int64_t n, int64_t grain) { return grain <= 0 ? 0 : (n + grain - 1) / grain; }

// Fixed row chunking for reductions over rows: depends only on `rows` (never on threads),
// at least `min_rows` rows per chunk and at most `max_chunks` chunks, so the partial sums
// and their fixed-order combination are the same for any thread count.
constexpr int64_t reduction_grain(int64_t rows, int64_t min_rows, int64_t max_chunks) {
  int64_t g = (rows + max_chunks - 1) / max_chunks;
  return g < min_rows ? min_rows : g;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

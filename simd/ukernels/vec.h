// What every cpu micro-kernel (simd/ukernels/, simd/wasm/) may use: the vector type of an
// arch, integer helpers, prefetch hints. Deliberately no scratch memory and no threads: those
// are the drivers' (simd/kernels/common.h), so a micro-kernel takes every buffer as an argument.
//
// Trap (ODR across ISA flags): an inline function or template instantiation that does not
// depend on the arch is emitted in every ISA's object, each compiled with different -m flags,
// and the linker keeps one of them at random, possibly the AVX-512 one. So kernel code
// depends on `Arch` everywhere, and anything arch-independent that touches memory
// (allocation, std::function for parallel_for) lives in cpu_backend.cpp, compiled with
// baseline flags, behind the plain functions declared in simd/kernels/common.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "params.h"
#include "tiles.h"

// Keeps a micro-kernel out of line. Native: GCC -O3 inlining spilled the GEMM tile. WASM:
// V8 tiers a function up to TurboFan only when it is called again, so a hot loop must sit
// in a function called per tile or per row, not inside one entered once per op.
// GRADRT_SIMD_INLINE: a micro-kernel's shared body, inlined into each out-of-line entry.
#if defined(__GNUC__)
#define GRADRT_SIMD_NOINLINE __attribute__((noinline))
#define GRADRT_SIMD_INLINE __attribute__((always_inline)) inline
#else
#define GRADRT_SIMD_NOINLINE
#define GRADRT_SIMD_INLINE inline
#endif

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
  static type fma(const type& a, const type& b, const type& c) {
    // xsimd 8.1 has fma kernels for fma3<sse/avx> only: for avx512f and fma3<avx2> (the avx512
    // and avx2 units, and AVX-512's half-width tiles) it falls back to the generic x*y + z, fused
    // only where GCC contracts it (at -O2, not at the sanitizer builds' -O1). Called explicitly,
    // so that the bits do not depend on the optimisation level: the half-width tiles must equal
    // the zmm GEMM path's (tests/test_ukernels_stream.cpp) in every build.
#if XSIMD_WITH_AVX512F
    if constexpr (std::is_same_v<Arch, xsimd::avx512f> && std::is_same_v<T, float>) return _mm512_fmadd_ps(a, b, c);
    if constexpr (std::is_same_v<Arch, xsimd::avx512f> && std::is_same_v<T, double>) return _mm512_fmadd_pd(a, b, c);
#endif
#if XSIMD_WITH_FMA3_AVX2
    using F3 = xsimd::fma3<xsimd::avx2>;
    if constexpr (std::is_same_v<Arch, F3> && std::is_same_v<T, float>) return _mm256_fmadd_ps(a, b, c);
    if constexpr (std::is_same_v<Arch, F3> && std::is_same_v<T, double>) return _mm256_fmadd_pd(a, b, c);
#endif
    return xsimd::fma(a, b, c);
  }
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

// Software prefetch of the line at address p into L2 (prefetcht1 on x86), not L1: for data a later
// pass reads (an address, never dereferenced: it may lie past the end of a buffer).
template <class Arch>
inline void prefetch_line_l2(uintptr_t p) {
#if defined(__GNUC__) && !defined(__wasm__)
  __builtin_prefetch(reinterpret_cast<const void*>(p), 0, 2);
#else
  (void)p;
#endif
}

constexpr int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
constexpr int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

// Floor division and modulo for possibly negative a, positive b.
constexpr int64_t floordiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
constexpr int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// Relu / Relu6 (TF: features = x -> activations = y), elementwise over p.n elements: one pass,
// spans of the flat array split across threads (each element written by one span, so any cut
// gives the same bits).
#pragma once

#include "../ukernels/relu.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Span length for the elementwise relu kernels: a few spans per thread, at least 8192 elements
// (a span is then a few us, far above a pool hand-off), a multiple of 64 elements so that two
// threads never write the same cache line.
inline int64_t relu_grain(const Exec& exec, int64_t n) {
  const int64_t g = imax(8192, balance_grain(exec, n, 2));
  return (g + 63) / 64 * 64;
}

template <class T, class Arch>
void relu(const Exec& exec, const ReluParams& p, const T* x, T* y) {
  par(exec, p.n, relu_grain(exec, p.n), [&](int64_t i0, int64_t i1) {
    if (p.six) relu_span<T, Arch, true>(i1 - i0, x + i0, y + i0);
    else relu_span<T, Arch, false>(i1 - i0, x + i0, y + i0);
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// Relu-family micro-kernels over a span of elements (core/ops/relu.cpp, relu_grad.cpp): whole
// vectors, then a scalar tail through the same lane rule (Vec<T, scalar_arch>), so the tail
// cannot drift from the body. Every buffer an argument.
#pragma once

#include <type_traits>

#include "vec.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// m ? a : b per lane: m is a bool for the scalar Vec, an xsimd batch_bool otherwise. The batch
// case finds xsimd::select by argument-dependent lookup when instantiated: a unit without a SIMD
// arch (the scalar one under Emscripten) has no xsimd::select to name.
template <class M, class B>
inline B lane_select(const M& m, const B& a, const B& b) {
  if constexpr (std::is_same_v<M, bool>) return m ? a : b;
  else return select(m, a, b);
}

// Relu (Relu6 with Six) of one vector: x <= 0 (-0 included) gives +0; a NaN compares false
// everywhere and passes through with its bits.
template <class V, bool Six, class B>
inline B relu_lanes(const B& x) {
  const B zero = V::zero();
  if constexpr (Six) {
    const B six = V::set1(6);
    return lane_select(x <= zero, zero, lane_select(x > six, six, x));
  } else {
    return lane_select(x <= zero, zero, x);
  }
}

// ReluGrad (Relu6Grad with Six) of one vector: dy times 1 inside (0, inf) / (0, 6), else times 0
// (a product, as TF's: a NaN or infinite dy outside gives NaN).
template <class V, bool Six, class B>
inline B relu_grad_lanes(const B& dy, const B& x) {
  const B zero = V::zero(), one = V::set1(1);
  if constexpr (Six) return dy * lane_select((x > zero) && (x < V::set1(6)), one, zero);
  else return dy * lane_select(x > zero, one, zero);
}

template <class T, class Arch, bool Six>
GRADRT_SIMD_NOINLINE void relu_span(int64_t n, const T* x, T* y) {
  using V = Vec<T, Arch>;
  using S = Vec<T, scalar_arch>;
  int64_t i = 0;
  for (; i + V::width <= n; i += V::width) V::store(y + i, relu_lanes<V, Six>(V::load(x + i)));
  for (; i < n; ++i) y[i] = relu_lanes<S, Six>(x[i]);
}

template <class T, class Arch, bool Six>
GRADRT_SIMD_NOINLINE void relu_grad_span(int64_t n, const T* dy, const T* x, T* dx) {
  using V = Vec<T, Arch>;
  using S = Vec<T, scalar_arch>;
  int64_t i = 0;
  for (; i + V::width <= n; i += V::width) V::store(dx + i, relu_grad_lanes<V, Six>(V::load(dy + i), V::load(x + i)));
  for (; i < n; ++i) dx[i] = relu_grad_lanes<S, Six>(dy[i], x[i]);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

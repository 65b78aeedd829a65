// ReluGrad / Relu6Grad (TF: gradients = dy, features = x -> backprops = dx), elementwise over
// p.n elements: one pass reading dy and x, spans split across threads as relu.h does.
#pragma once

#include "relu.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
void relu_grad(const Exec& exec, const ReluParams& p, const T* dy, const T* x, T* dx) {
  par(exec, p.n, relu_grain(exec, p.n), [&](int64_t i0, int64_t i1) {
    if (p.six) relu_grad_span<T, Arch, true>(i1 - i0, dy + i0, x + i0, dx + i0);
    else relu_grad_span<T, Arch, false>(i1 - i0, dy + i0, x + i0, dx + i0);
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// MaxPoolGrad (TF: orig_input = x, grad = dy, output = dx), NHWC, in two passes so that
// threads never write the same dx cell and the result is bit-identical for any thread count
// (and to TF's CPU kernel):
//   1. per output row: each window's argmax (TF's rule, params.h) as its cell_index, into
//      scratch shaped like y;
//   2. per input row: each dx cell gathers the dy of the windows containing it whose argmax
//      it is, in (oy, ox) order, the order in which TF's scatter adds them.
// The index is stored as T: exact below 2^24 cells per window for float; a larger window
// (a hostile ksize over a huge input) runs the reference kernel, which sums the same way.
#pragma once

#include "../ukernels/max_pool.h"
#include "common.h"
#include "reference/reference.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Scratch: each window's argmax (y's size).
template <class T, class Arch>
size_t max_pool_grad_workspace(int, const ConvTuning&, const PoolParams& p) {
  return ScratchSize{}.add(line_bytes<T>(p.y_elements())).shared;
}

template <class T, class Arch>
void max_pool_grad(const Exec& exec, const PoolParams& p, const T* x, const T* dy, T* dx) {
  const int64_t cells = imin(p.window_h, p.in_h) * imin(p.window_w, p.in_w);
  constexpr int64_t kExact = std::is_same_v<T, float> ? (int64_t{1} << 24) : (int64_t{1} << 53);
  if (cells > kExact) {
    ref::max_pool_grad<T>(p, x, dy, dx);
    return;
  }
  Arena scratch(exec);
  T* idx = scratch.take<T>(p.y_elements());
  par_each(exec, p.batch * p.out_h, [&](int64_t q) { max_pool_row<T, Arch>(p, q, x, true, idx); });
  par_each(exec, p.batch * p.in_h, [&](int64_t q) { max_pool_grad_row<T, Arch>(p, q, idx, dy, dx); });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

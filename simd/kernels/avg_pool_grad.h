// AvgPoolGrad (TF: grad = dy, output = dx), NHWC, as a gather: each dx cell sums the terms
// of the windows containing it (params.h out_row_begin/end), so rows split across threads
// without conflicts and results do not depend on the thread count.
#pragma once

#include "../ukernels/avg_pool.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
void avg_pool_grad(const Exec& exec, const PoolParams& p, const T* dy, T* dx) {
  par_each(exec, p.batch * p.in_h, [&](int64_t q) { avg_pool_grad_row<T, Arch>(p, q, dy, dx); });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// MaxPool forward (TF: input = x, output = y), NHWC: one output row (n, oy) per work item,
// channels in the lanes (ukernels/max_pool.h).
#pragma once

#include "../ukernels/max_pool.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
void max_pool(const Exec& exec, const PoolParams& p, const T* x, T* y) {
  par_each(exec, p.batch * p.out_h, [&](int64_t q) { max_pool_row<T, Arch>(p, q, x, false, y); });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// AvgPool forward (TF: value = x, output = y), NHWC: one output row (n, oy) per work item.
#pragma once

#include "../ukernels/avg_pool.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
void avg_pool(const Exec& exec, const PoolParams& p, const T* x, T* y) {
  par_each(exec, p.batch * p.out_h, [&](int64_t q) { avg_pool_row<T, Arch>(p, q, x, y); });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

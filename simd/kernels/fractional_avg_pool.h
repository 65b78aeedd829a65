// FractionalAvgPool forward (TF: value = x, output = y), NHWC. Cell (r, c) covers rows
// [row_start(r), row_end(r)] and columns [col_start(c), col_end(c)] (params.h applies the
// overlapping rule and the clamp); y = (sum over the cell, in T) / count, count =
// rows * cols of the cell (an empty cell gives 0). One output row (n, r) per work item, channels in the lanes.
#pragma once

#include "../ukernels/fractional_avg_pool.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
void fractional_avg_pool(const Exec& exec, const FracPoolParams& p, const T* x, T* y) {
  const int64_t C = p.channels, rows = p.batch * p.out_h;
  if (rows == 0 || p.out_w == 0 || C == 0) return;
  par_guided(exec, rows, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) frac_pool_row<T, Arch>(p, q, x, y);
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

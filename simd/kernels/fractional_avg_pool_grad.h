// FractionalAvgPoolGrad (TF: out_backprop = dy, output = dx), NHWC:
//   dx[n,i,j,ch] = sum over cells (r, c) that cover (i, j) of dy[n,r,c,ch] / count(r, c)
// TF scatters into a zeroed double buffer in (r, c) order; here each dx pixel gathers the
// same terms in the same (r, c) order, so rows split across threads without conflicts.
// Cell starts and ends are both non-decreasing in r, so the cells covering row i form a
// contiguous range [r_lo(i), r_hi(i)) (empty for rows no cell covers: dx = 0 there).
#pragma once

#include "../ukernels/fractional_avg_pool.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Scratch: the cover ranges of every input row and column.
template <class T, class Arch>
size_t fractional_avg_pool_grad_workspace(int, const ConvTuning&, const FracPoolParams& p) {
  return ScratchSize{}.add(line_bytes<int64_t>(2 * (p.in_h + p.in_w))).shared;
}

template <class T, class Arch>
void fractional_avg_pool_grad(const Exec& exec, const FracPoolParams& p, const T* dy, T* dx) {
  const int64_t C = p.channels, rows = p.batch * p.in_h;
  if (rows == 0 || p.in_w == 0 || C == 0) return;
  // Cover ranges: rr[2*i], rr[2*i+1] for rows, cr[...] for columns.
  Arena scratch(exec);
  int64_t* rr = scratch.take<int64_t>(2 * (p.in_h + p.in_w));
  int64_t* cr = rr + 2 * p.in_h;
  for (int64_t i = 0, r = 0; i < p.in_h; ++i) {
    while (r < p.out_h && p.row_end(r) < i) ++r;  // first cell ending at or after i
    int64_t e = r;
    while (e < p.out_h && p.row_start(e) <= i) ++e;
    rr[2 * i] = r;
    rr[2 * i + 1] = e;
  }
  for (int64_t j = 0, c = 0; j < p.in_w; ++j) {
    while (c < p.out_w && p.col_end(c) < j) ++c;
    int64_t e = c;
    while (e < p.out_w && p.col_start(e) <= j) ++e;
    cr[2 * j] = c;
    cr[2 * j + 1] = e;
  }
  par_guided(exec, rows, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) frac_pool_grad_row<T, Arch>(p, q, rr, cr, dy, dx);
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

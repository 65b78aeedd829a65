// FractionalAvgPool forward (TF: value = x, output = y), NHWC. Cell (r, c) covers rows
// [row_start(r), row_end(r)] and columns [col_start(c), col_end(c)] (params.h applies the
// overlapping rule and the clamp); y = (sum over the cell, in T) / count, count =
// rows * cols of the cell (an empty cell gives 0). One output row (n, r) per work item, channels in the lanes.
#pragma once

#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
void fractional_avg_pool(const Exec& exec, const FracPoolParams& p, const T* x, T* y) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t C = p.channels, rows = p.batch * p.out_h;
  if (rows == 0 || p.out_w == 0 || C == 0) return;
  par_guided(exec, rows, 1, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / p.out_h, r = q % p.out_h;
      const int64_t rs = p.row_start(r), re = p.row_end(r);
      for (int64_t oc = 0; oc < p.out_w; ++oc) {
        const int64_t cs = p.col_start(oc), ce = p.col_end(oc);
        const int64_t cnt = (re - rs + 1) * (ce - cs + 1);
        T* out = y + (q * p.out_w + oc) * C;
        if (cnt <= 0) {  // an empty cell (repeated sequence entries): 0, as the reference
          for (int64_t c = 0; c < C; ++c) out[c] = T(0);
          continue;
        }
        const T count = T(cnt);
        int64_t c = 0;
        for (; c + L <= C; c += L) {
          auto s = V::zero();
          for (int64_t i = rs; i <= re; ++i)
            for (int64_t j = cs; j <= ce; ++j) s = s + V::load(x + ((n * p.in_h + i) * p.in_w + j) * C + c);
          V::store(out + c, s / V::set1(count));
        }
        for (; c < C; ++c) {
          T s = T(0);
          for (int64_t i = rs; i <= re; ++i)
            for (int64_t j = cs; j <= ce; ++j) s += x[((n * p.in_h + i) * p.in_w + j) * C + c];
          out[c] = s / count;
        }
      }
    }
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

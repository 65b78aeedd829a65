// MaxPool and MaxPoolGrad in TF's CPU semantics (params.h PoolParams): the forward starts at
// lowest() and keeps y unless y < x; the gradient recomputes each window's argmax from x
// (first real cell, replaced only by a later cell that compares greater) and sums dy into it.
// The gradient sums in T, in TF's (oy, ox) order, not in double: which cell wins and the
// order of its additions are the semantics here, and T keeps the result bit-identical to TF.
#include <limits>

#include "reference.h"

namespace gradrt::ref {

template <class T>
void max_pool(const PoolParams& p, const T* x, T* y) {
  for_each_4d(p.batch, p.out_h, p.out_w, p.channels, [&](int64_t n, int64_t oy, int64_t ox, int64_t c) {
    T m = std::numeric_limits<T>::lowest();
    for (int64_t iy = p.row_begin(oy); iy < p.row_end(oy); ++iy)
      for (int64_t ix = p.col_begin(ox); ix < p.col_end(ox); ++ix) {
        const T v = x[((n * p.in_h + iy) * p.in_w + ix) * p.channels + c];
        if (m < v) m = v;
      }
    y[((n * p.out_h + oy) * p.out_w + ox) * p.channels + c] = m;
  });
}

template <class T>
void max_pool_grad(const PoolParams& p, const T* x, const T* dy, T* dx) {
  for (int64_t i = 0; i < p.x_elements(); ++i) dx[i] = T(0);
  // TF's output order (n, oy, ox, c): each dy element added to its window's argmax.
  for_each_4d(p.batch, p.out_h, p.out_w, p.channels, [&](int64_t n, int64_t oy, int64_t ox, int64_t c) {
    int64_t best = -1;
    T m = T(0);
    for (int64_t iy = p.row_begin(oy); iy < p.row_end(oy); ++iy)
      for (int64_t ix = p.col_begin(ox); ix < p.col_end(ox); ++ix) {
        const int64_t at = ((n * p.in_h + iy) * p.in_w + ix) * p.channels + c;
        if (best < 0 || m < x[at]) {
          m = x[at];
          best = at;
        }
      }
    dx[best] += dy[((n * p.out_h + oy) * p.out_w + ox) * p.channels + c];
  });
}

template void max_pool<float>(const PoolParams&, const float*, float*);
template void max_pool<double>(const PoolParams&, const double*, double*);
template void max_pool_grad<float>(const PoolParams&, const float*, const float*, float*);
template void max_pool_grad<double>(const PoolParams&, const double*, const double*, double*);

}  // namespace gradrt::ref

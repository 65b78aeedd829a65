// AvgPool and AvgPoolGrad over the real cells of each window (params.h PoolParams), in double.
#include <cstddef>
#include <vector>

#include "reference.h"

namespace gradrt::ref {

namespace {
int64_t real_cells(const PoolParams& p, int64_t oy, int64_t ox) {
  return (p.row_end(oy) - p.row_begin(oy)) * (p.col_end(ox) - p.col_begin(ox));
}
}  // namespace

template <class T>
void avg_pool(const PoolParams& p, const T* x, T* y) {
  for_each_4d(p.batch, p.out_h, p.out_w, p.channels, [&](int64_t n, int64_t oy, int64_t ox, int64_t c) {
    double s = 0;
    for (int64_t iy = p.row_begin(oy); iy < p.row_end(oy); ++iy)
      for (int64_t ix = p.col_begin(ox); ix < p.col_end(ox); ++ix) s += x[((n * p.in_h + iy) * p.in_w + ix) * p.channels + c];
    y[((n * p.out_h + oy) * p.out_w + ox) * p.channels + c] = T(s / double(real_cells(p, oy, ox)));
  });
}

template <class T>
void avg_pool_grad(const PoolParams& p, const T* dy, T* dx) {
  std::vector<double> acc(static_cast<std::size_t>(p.x_elements()), 0.0);
  for_each_4d(p.batch, p.out_h, p.out_w, p.channels, [&](int64_t n, int64_t oy, int64_t ox, int64_t c) {
    const double g = double(dy[((n * p.out_h + oy) * p.out_w + ox) * p.channels + c]) / double(real_cells(p, oy, ox));
    for (int64_t iy = p.row_begin(oy); iy < p.row_end(oy); ++iy)
      for (int64_t ix = p.col_begin(ox); ix < p.col_end(ox); ++ix) acc[((n * p.in_h + iy) * p.in_w + ix) * p.channels + c] += g;
  });
  for (std::size_t i = 0; i < acc.size(); ++i) dx[i] = T(acc[i]);
}

template void avg_pool<float>(const PoolParams&, const float*, float*);
template void avg_pool<double>(const PoolParams&, const double*, double*);
template void avg_pool_grad<float>(const PoolParams&, const float*, float*);
template void avg_pool_grad<double>(const PoolParams&, const double*, double*);

}  // namespace gradrt::ref

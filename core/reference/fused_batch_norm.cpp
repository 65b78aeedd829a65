// FusedBatchNorm forward pieces over x viewed as [rows, channels] (ops.md §6.4):
// two-pass mean and biased variance, then y = (x - mean) * rsqrt(var + eps) * scale + offset.
#include <cmath>

#include "reference.h"

namespace gradrt::ref {

template <class T>
void batch_norm_stats(const BatchNormParams& p, const T* x, T* mean, T* variance) {
  for (int64_t c = 0; c < p.channels; ++c) {
    double sum = 0;
    for (int64_t r = 0; r < p.rows; ++r) sum += double(x[r * p.channels + c]);
    const double mu = sum / double(p.rows);
    double sq = 0;
    for (int64_t r = 0; r < p.rows; ++r) {
      const double d = double(x[r * p.channels + c]) - mu;
      sq += d * d;
    }
    mean[c] = T(mu);
    variance[c] = T(sq / double(p.rows));
  }
}

template <class T>
void batch_norm_apply(const BatchNormParams& p, const T* x, const T* scale, const T* offset, const T* mean,
                      const T* variance, T* y) {
  for (int64_t c = 0; c < p.channels; ++c) {
    const double inv = 1.0 / std::sqrt(double(variance[c]) + double(p.epsilon));
    for (int64_t r = 0; r < p.rows; ++r)
      y[r * p.channels + c] = T((double(x[r * p.channels + c]) - double(mean[c])) * inv * double(scale[c]) +
                                double(offset[c]));
  }
}

template void batch_norm_stats<float>(const BatchNormParams&, const float*, float*, float*);
template void batch_norm_stats<double>(const BatchNormParams&, const double*, double*, double*);
template void batch_norm_apply<float>(const BatchNormParams&, const float*, const float*, const float*, const float*,
                                      const float*, float*);
template void batch_norm_apply<double>(const BatchNormParams&, const double*, const double*, const double*,
                                       const double*, const double*, double*);

}  // namespace gradrt::ref

// FusedBatchNormGrad (ops.md §6.10), with mu = mean[c], inv = rsqrt(variance[c] + eps), xc = x - mu:
//   training:  doffset = sum dy;  dscale = sum(dy*xc) * inv;
//              dx = scale*inv * (dy - sum(dy)/R - xc * inv^2 * sum(dy*xc)/R)
//   inference: doffset = sum dy;  dscale = sum(dy*xc) * inv;  dx = dy * scale * inv
#include <cmath>

#include "reference.h"

namespace gradrt::ref {

template <class T>
void fused_batch_norm_grad(const BatchNormParams& p, const T* dy, const T* x, const T* scale, const T* mean,
                           const T* variance, T* dx, T* dscale, T* doffset) {
  const double R = double(p.rows);
  for (int64_t c = 0; c < p.channels; ++c) {
    const double mu = double(mean[c]);
    const double inv = 1.0 / std::sqrt(double(variance[c]) + double(p.epsilon));
    double sum_dy = 0, sum_dy_xc = 0;
    for (int64_t r = 0; r < p.rows; ++r) {
      const double g = double(dy[r * p.channels + c]);
      sum_dy += g;
      sum_dy_xc += g * (double(x[r * p.channels + c]) - mu);
    }
    doffset[c] = T(sum_dy);
    dscale[c] = T(sum_dy_xc * inv);
    const double k = double(scale[c]) * inv;
    for (int64_t r = 0; r < p.rows; ++r) {
      const double g = double(dy[r * p.channels + c]);
      const double xc = double(x[r * p.channels + c]) - mu;
      dx[r * p.channels + c] =
          p.is_training ? T(k * (g - sum_dy / R - xc * inv * inv * sum_dy_xc / R)) : T(g * k);
    }
  }
}

template void fused_batch_norm_grad<float>(const BatchNormParams&, const float*, const float*, const float*,
                                           const float*, const float*, float*, float*, float*);
template void fused_batch_norm_grad<double>(const BatchNormParams&, const double*, const double*, const double*,
                                            const double*, const double*, double*, double*, double*);

}  // namespace gradrt::ref

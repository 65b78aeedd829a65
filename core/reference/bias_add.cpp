// BiasAdd over [rows, channels]: y[r, c] = x[r, c] + bias[c] (core/ops/bias_add.cpp).
#include "reference.h"

namespace gradrt::ref {

template <class T>
void bias_add(const BiasParams& p, const T* x, const T* bias, T* y) {
  for (int64_t r = 0; r < p.rows; ++r)
    for (int64_t c = 0; c < p.channels; ++c) y[r * p.channels + c] = x[r * p.channels + c] + bias[c];
}

template void bias_add<float>(const BiasParams&, const float*, const float*, float*);
template void bias_add<double>(const BiasParams&, const double*, const double*, double*);

}  // namespace gradrt::ref

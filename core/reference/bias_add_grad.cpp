// BiasAddGrad over [rows, channels]: dbias[c] = sum over r of dy[r, c], each channel summed in
// double and rounded once (core/ops/bias_add_grad.cpp).
#include "reference.h"

namespace gradrt::ref {

template <class T>
void bias_add_grad(const BiasParams& p, const T* dy, T* dbias) {
  for (int64_t c = 0; c < p.channels; ++c) {
    double sum = 0;
    for (int64_t r = 0; r < p.rows; ++r) sum += double(dy[r * p.channels + c]);
    dbias[c] = T(sum);
  }
}

template void bias_add_grad<float>(const BiasParams&, const float*, float*);
template void bias_add_grad<double>(const BiasParams&, const double*, double*);

}  // namespace gradrt::ref

// Relu / Relu6 as TF's functor states it (core/ops/relu.cpp): max(x, 0), then min(., 6) for
// Relu6, a NaN passed through; written as comparisons so that -0 gives +0.
#include <cmath>

#include "reference.h"

namespace gradrt::ref {

template <class T>
void relu(const ReluParams& p, const T* x, T* y) {
  for (int64_t i = 0; i < p.n; ++i) {
    const T v = x[i];
    if (std::isnan(v)) y[i] = v;
    else if (!(v > T(0))) y[i] = T(0);
    else if (p.six && v > T(6)) y[i] = T(6);
    else y[i] = v;
  }
}

template void relu<float>(const ReluParams&, const float*, float*);
template void relu<double>(const ReluParams&, const double*, double*);

}  // namespace gradrt::ref

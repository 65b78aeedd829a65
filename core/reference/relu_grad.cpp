// ReluGrad / Relu6Grad as TF's functor states it (core/ops/relu_grad.cpp): the gradient times
// 1 where the feature is inside (0, inf) (Relu6: (0, 6)), times 0 elsewhere and for NaN.
#include "reference.h"

namespace gradrt::ref {

template <class T>
void relu_grad(const ReluParams& p, const T* dy, const T* x, T* dx) {
  for (int64_t i = 0; i < p.n; ++i) {
    const bool inside = x[i] > T(0) && (!p.six || x[i] < T(6));
    dx[i] = dy[i] * (inside ? T(1) : T(0));
  }
}

template void relu_grad<float>(const ReluParams&, const float*, const float*, float*);
template void relu_grad<double>(const ReluParams&, const double*, const double*, double*);

}  // namespace gradrt::ref

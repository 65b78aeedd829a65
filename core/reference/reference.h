// The reference backend: the oracle every other backend is tested against.
// Plain loops in the formulas' own shape (ops.md §1.5, 2.4, 3.3, 4.3, 5.5, 5.10, 6.4, 6.10),
// each output gathered with a double accumulator; single-threaded; no cleverness.
#pragma once

#include <cstdint>

#include "kernels.h"

namespace gradrt::ref {

// One function template per kernel of the list (kernels.h), without the Exec: single-threaded.
// fractional_avg_pool(_grad) are also instantiated for int32_t and int64_t (TF's integer
// pooling: sum in T, truncating divide).
#define GRADRT_REF_DECLARE(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  template <class T>                                              \
  void STEM(const P& p, GRADRT_UNPACK ARGS);
GRADRT_KERNELS(GRADRT_REF_DECLARE, T)
#undef GRADRT_REF_DECLARE

// Calls f(i, j, k, l) for every index of the box [0,a) x [0,b) x [0,c) x [0,d), l fastest.
template <class F>
void for_each_4d(int64_t a, int64_t b, int64_t c, int64_t d, F f) {
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < c; ++k)
        for (int64_t l = 0; l < d; ++l) f(i, j, k, l);
}

// The float and double instances of a conv kernel STEM(p, a, b, out).
#define GRADRT_REF_INSTANTIATE_CONV(STEM)                                          \
  template void STEM<float>(const ConvParams&, const float*, const float*, float*); \
  template void STEM<double>(const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::ref

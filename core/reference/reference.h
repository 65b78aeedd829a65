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

}  // namespace gradrt::ref

// Every kernel of the cpu backend, and make_table<Arch>() that instantiates them for one
// arch. Included only by simd/arch/<isa>.cpp, after GRADRT_SIMD_NS / _MR / _NRV are defined.
#pragma once

#include "conv2d.h"
#include "conv2d_backprop_filter.h"
#include "conv2d_backprop_input.h"
#include "depthwise_conv2d_native.h"
#include "depthwise_conv2d_native_backprop_filter.h"
#include "depthwise_conv2d_native_backprop_input.h"
#include "fractional_avg_pool.h"
#include "fractional_avg_pool_grad.h"
#include "fused_batch_norm.h"
#include "fused_batch_norm_grad.h"
// The relu family and the bias ops (issue 20).
#include "bias_add.h"
#include "bias_add_grad.h"
#include "relu.h"
#include "relu_grad.h"
#include "table.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
KernelsT<T> make_kernels() {
  KernelsT<T> k;
#define GRADRT_CPU_FILL(STEM, ...) k.STEM = &STEM<T, Arch>;
  GRADRT_KERNELS(GRADRT_CPU_FILL, T)
#undef GRADRT_CPU_FILL
  return k;
}

template <class Arch>
KernelTable make_table() {
  return KernelTable{make_kernels<float, Arch>(), make_kernels<double, Arch>()};
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

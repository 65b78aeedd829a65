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
#include "table.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

template <class T, class Arch>
KernelsT<T> make_kernels() {
  KernelsT<T> k;
  k.conv2d = &conv2d<T, Arch>;
  k.conv2d_backprop_input = &conv2d_backprop_input<T, Arch>;
  k.conv2d_backprop_filter = &conv2d_backprop_filter<T, Arch>;
  k.depthwise_conv2d_native = &depthwise_conv2d_native<T, Arch>;
  k.depthwise_conv2d_native_backprop_input = &depthwise_conv2d_native_backprop_input<T, Arch>;
  k.depthwise_conv2d_native_backprop_filter = &depthwise_conv2d_native_backprop_filter<T, Arch>;
  k.batch_norm_stats = &batch_norm_stats<T, Arch>;
  k.batch_norm_apply = &batch_norm_apply<T, Arch>;
  k.fused_batch_norm_grad = &fused_batch_norm_grad<T, Arch>;
  k.fractional_avg_pool = &fractional_avg_pool<T, Arch>;
  k.fractional_avg_pool_grad = &fractional_avg_pool_grad<T, Arch>;
  return k;
}

template <class Arch>
KernelTable make_table() {
  return KernelTable{make_kernels<float, Arch>(), make_kernels<double, Arch>()};
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

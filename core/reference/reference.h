// The reference backend: the oracle every other backend is tested against.
// Plain loops in the formulas' own shape (ops.md §1.5, 2.4, 3.3, 4.3, 5.5, 5.10, 6.4, 6.10),
// each output gathered with a double accumulator; single-threaded; no cleverness.
#pragma once

#include <cstdint>

#include "params.h"

namespace gradrt::ref {

template <class T> void conv2d(const ConvParams& p, const T* x, const T* w, T* y);
template <class T> void conv2d_backprop_input(const ConvParams& p, const T* w, const T* dy, T* dx);
template <class T> void conv2d_backprop_filter(const ConvParams& p, const T* x, const T* dy, T* dw);
template <class T> void depthwise_conv2d_native(const ConvParams& p, const T* x, const T* w, T* y);
template <class T> void depthwise_conv2d_native_backprop_input(const ConvParams& p, const T* w, const T* dy, T* dx);
template <class T> void depthwise_conv2d_native_backprop_filter(const ConvParams& p, const T* x, const T* dy, T* dw);
template <class T> void batch_norm_stats(const BatchNormParams& p, const T* x, T* mean, T* variance);
template <class T>
void batch_norm_apply(const BatchNormParams& p, const T* x, const T* scale, const T* offset, const T* mean,
                      const T* variance, T* y);
template <class T>
void fused_batch_norm_grad(const BatchNormParams& p, const T* dy, const T* x, const T* scale, const T* mean,
                           const T* variance, T* dx, T* dscale, T* doffset);
// Also instantiated for int32_t and int64_t (TF's integer pooling: sum in T, truncating divide).
template <class T> void fractional_avg_pool(const FracPoolParams& p, const T* x, T* y);
template <class T> void fractional_avg_pool_grad(const FracPoolParams& p, const T* dy, T* dx);

}  // namespace gradrt::ref

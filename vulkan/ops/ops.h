// The Vulkan kernels, one file per op stem (vulkan/ops/<stem>.cpp, vulkan/shaders/<stem>.comp).
// Same contract as core/backend.h: params already validated, outputs allocated; these upload,
// dispatch and read back, and can fail only with a driver/limit Status. T is float or double
// (double needs shaderFloat64: Unimplemented otherwise); both are instantiated in the op files.
#pragma once

#include "../context.h"
#include "params.h"

namespace gradrt::vk {

template <class T>
Status conv2d(Context& ctx, const ConvParams& p, const T* x, const T* w, T* y);
template <class T>
Status conv2d_backprop_input(Context& ctx, const ConvParams& p, const T* w, const T* dy, T* dx);
template <class T>
Status conv2d_backprop_filter(Context& ctx, const ConvParams& p, const T* x, const T* dy, T* dw);
template <class T>
Status depthwise_conv2d_native(Context& ctx, const ConvParams& p, const T* x, const T* w, T* y);
template <class T>
Status depthwise_conv2d_native_backprop_input(Context& ctx, const ConvParams& p, const T* w,
                                              const T* dy, T* dx);
template <class T>
Status depthwise_conv2d_native_backprop_filter(Context& ctx, const ConvParams& p, const T* x,
                                               const T* dy, T* dw);
template <class T>
Status batch_norm_stats(Context& ctx, const BatchNormParams& p, const T* x, T* mean, T* variance);
template <class T>
Status batch_norm_apply(Context& ctx, const BatchNormParams& p, const T* x, const T* scale,
                        const T* offset, const T* mean, const T* variance, T* y);
template <class T>
Status fused_batch_norm_grad(Context& ctx, const BatchNormParams& p, const T* dy, const T* x,
                             const T* scale, const T* mean, const T* variance, T* dx,
                             T* dscale, T* doffset);
template <class T>
Status fractional_avg_pool(Context& ctx, const FracPoolParams& p, const T* x, T* y);
template <class T>
Status fractional_avg_pool_grad(Context& ctx, const FracPoolParams& p, const T* dy, T* dx);

}  // namespace gradrt::vk

// The kernel table one ISA's translation unit fills (simd/arch/<isa>.cpp) and
// cpu_backend.cpp calls through. Plain function pointers: no arch-dependent type crosses
// the boundary.
#pragma once

#include "backend.h"
#include "params.h"

namespace gradrt::simd {

template <class T>
struct KernelsT {
  void (*conv2d)(const Exec&, const ConvParams&, const T* x, const T* w, T* y);
  void (*conv2d_backprop_input)(const Exec&, const ConvParams&, const T* w, const T* dy, T* dx);
  void (*conv2d_backprop_filter)(const Exec&, const ConvParams&, const T* x, const T* dy, T* dw);
  void (*depthwise_conv2d_native)(const Exec&, const ConvParams&, const T* x, const T* w, T* y);
  void (*depthwise_conv2d_native_backprop_input)(const Exec&, const ConvParams&, const T* w,
                                                 const T* dy, T* dx);
  void (*depthwise_conv2d_native_backprop_filter)(const Exec&, const ConvParams&, const T* x,
                                                  const T* dy, T* dw);
  void (*batch_norm_stats)(const Exec&, const BatchNormParams&, const T* x, T* mean, T* variance);
  void (*batch_norm_apply)(const Exec&, const BatchNormParams&, const T* x, const T* scale,
                           const T* offset, const T* mean, const T* variance, T* y);
  void (*fused_batch_norm_grad)(const Exec&, const BatchNormParams&, const T* dy, const T* x,
                                const T* scale, const T* mean, const T* variance, T* dx,
                                T* dscale, T* doffset);
  void (*fractional_avg_pool)(const Exec&, const FracPoolParams&, const T* x, T* y);
  void (*fractional_avg_pool_grad)(const Exec&, const FracPoolParams&, const T* dy, T* dx);
};

struct KernelTable {
  KernelsT<float> f32;
  KernelsT<double> f64;
};

// One per ISA unit built into this binary (see simd/CMakeLists.txt).
const KernelTable* table_scalar();
const KernelTable* table_sse4_2();
const KernelTable* table_avx2();
const KernelTable* table_avx512();
const KernelTable* table_neon();

}  // namespace gradrt::simd

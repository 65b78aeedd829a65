// A backend is a table of kernels over resolved params (core/params.h) and host pointers.
// Core has validated every argument and allocated every output before a kernel runs;
// a CPU kernel cannot fail. A device backend (Vulkan) may: driver errors come back as
// a Status. A kernel a backend does not have returns Unimplemented (the default here).
//
// Kernel names are the snake_case stems of the ops; math names: x input, w filter,
// y output, dy out_backprop, dx/dw gradients. All tensors NHWC, filters HWIO.
#pragma once

#include <string>

#include "gradrt/gradrt.h"
#include "params.h"

namespace gradrt {

struct Exec {
  int threads = 1;  // worker count for parallel_for; results never depend on it
};

#define GRADRT_BACKEND_KERNELS(T)                                                                  \
  virtual Status conv2d(const Exec&, const ConvParams&, const T* x, const T* w, T* y);            \
  virtual Status conv2d_backprop_input(const Exec&, const ConvParams&, const T* w, const T* dy,   \
                                       T* dx);                                                      \
  virtual Status conv2d_backprop_filter(const Exec&, const ConvParams&, const T* x, const T* dy,  \
                                        T* dw);                                                     \
  virtual Status depthwise_conv2d_native(const Exec&, const ConvParams&, const T* x, const T* w,  \
                                         T* y);                                                     \
  virtual Status depthwise_conv2d_native_backprop_input(const Exec&, const ConvParams&,            \
                                                        const T* w, const T* dy, T* dx);           \
  virtual Status depthwise_conv2d_native_backprop_filter(const Exec&, const ConvParams&,           \
                                                         const T* x, const T* dy, T* dw);          \
  /* Per-channel batch mean and biased variance (two-pass) of x [rows, channels]. */               \
  virtual Status batch_norm_stats(const Exec&, const BatchNormParams&, const T* x, T* mean,       \
                                  T* variance);                                                     \
  /* y = (x - mean) * (rsqrt(variance + eps) * scale) + offset */                                  \
  virtual Status batch_norm_apply(const Exec&, const BatchNormParams&, const T* x,                \
                                  const T* scale, const T* offset, const T* mean,                  \
                                  const T* variance, T* y);                                         \
  /* TF's FusedBatchNormGrad math (ops.md 6.10), training or inference per params. */              \
  virtual Status fused_batch_norm_grad(const Exec&, const BatchNormParams&, const T* dy,          \
                                       const T* x, const T* scale, const T* mean,                  \
                                       const T* variance, T* dx, T* dscale, T* doffset);            \
  virtual Status fractional_avg_pool(const Exec&, const FracPoolParams&, const T* x, T* y);       \
  virtual Status fractional_avg_pool_grad(const Exec&, const FracPoolParams&, const T* dy, T* dx);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // OK when the backend can run here; Unavailable with the reason otherwise.
  virtual Status available() { return Status::OK(); }
  // What `gradrt devices` prints: ISA in use, device names and limits.
  virtual std::string detail() { return ""; }
  // Whether `auto` should prefer this backend for the op at this size (device backends
  // decline small work where the transfer costs more than the kernel).
  virtual bool preferred_for(const char* /*op_stem*/, int64_t /*work*/) { return false; }

  GRADRT_BACKEND_KERNELS(float)
  GRADRT_BACKEND_KERNELS(double)
};

// The registered backends, created on first use: reference, cpu, and vulkan when built.
Backend* find_backend(std::string_view name);  // nullptr if unknown
std::vector<Backend*> all_backends();

Backend* reference_backend();
Backend* cpu_backend();
Backend* vulkan_backend();  // nullptr when gradrt was built without Vulkan

}  // namespace gradrt

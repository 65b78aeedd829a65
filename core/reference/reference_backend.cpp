// The `reference` backend: the kernels of reference.h behind the Backend interface.
#include "backend.h"
#include "reference.h"

namespace gradrt {
namespace {

class ReferenceBackend final : public Backend {
 public:
  const char* name() const override { return "reference"; }
  std::string detail() override { return "plain loops, double accumulation (the test oracle)"; }

#define GRADRT_REF_KERNELS(T)                                                                                 \
  Status conv2d(const Exec&, const ConvParams& p, const T* x, const T* w, T* y) override {                     \
    ref::conv2d(p, x, w, y);                                                                                   \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status conv2d_backprop_input(const Exec&, const ConvParams& p, const T* w, const T* dy, T* dx) override {    \
    ref::conv2d_backprop_input(p, w, dy, dx);                                                                  \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status conv2d_backprop_filter(const Exec&, const ConvParams& p, const T* x, const T* dy, T* dw) override {   \
    ref::conv2d_backprop_filter(p, x, dy, dw);                                                                 \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status depthwise_conv2d_native(const Exec&, const ConvParams& p, const T* x, const T* w, T* y) override {    \
    ref::depthwise_conv2d_native(p, x, w, y);                                                                  \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status depthwise_conv2d_native_backprop_input(const Exec&, const ConvParams& p, const T* w, const T* dy,    \
                                                T* dx) override {                                              \
    ref::depthwise_conv2d_native_backprop_input(p, w, dy, dx);                                                 \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status depthwise_conv2d_native_backprop_filter(const Exec&, const ConvParams& p, const T* x, const T* dy,   \
                                                 T* dw) override {                                             \
    ref::depthwise_conv2d_native_backprop_filter(p, x, dy, dw);                                                \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status batch_norm_stats(const Exec&, const BatchNormParams& p, const T* x, T* mean, T* variance) override {  \
    ref::batch_norm_stats(p, x, mean, variance);                                                               \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status batch_norm_apply(const Exec&, const BatchNormParams& p, const T* x, const T* scale, const T* offset,  \
                          const T* mean, const T* variance, T* y) override {                                   \
    ref::batch_norm_apply(p, x, scale, offset, mean, variance, y);                                             \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status fused_batch_norm_grad(const Exec&, const BatchNormParams& p, const T* dy, const T* x, const T* scale, \
                               const T* mean, const T* variance, T* dx, T* dscale, T* doffset) override {      \
    ref::fused_batch_norm_grad(p, dy, x, scale, mean, variance, dx, dscale, doffset);                          \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status fractional_avg_pool(const Exec&, const FracPoolParams& p, const T* x, T* y) override {                \
    ref::fractional_avg_pool(p, x, y);                                                                         \
    return Status::OK();                                                                                       \
  }                                                                                                            \
  Status fractional_avg_pool_grad(const Exec&, const FracPoolParams& p, const T* dy, T* dx) override {         \
    ref::fractional_avg_pool_grad(p, dy, dx);                                                                  \
    return Status::OK();                                                                                       \
  }
  GRADRT_REF_KERNELS(float)
  GRADRT_REF_KERNELS(double)
#undef GRADRT_REF_KERNELS
};

}  // namespace

Backend* reference_backend() {
  static ReferenceBackend backend;
  return &backend;
}

}  // namespace gradrt

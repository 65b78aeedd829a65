#include "backend.h"

namespace gradrt {

namespace {
Status missing_kernel(const char* kernel) {
  return Status(Code::Unimplemented, std::string("kernel ") + kernel + " is not implemented by this backend for this dtype");
}
}  // namespace

#define GRADRT_DEFAULT_KERNELS(T)                                                                               \
  Status Backend::conv2d(const Exec&, const ConvParams&, const T*, const T*, T*) { return missing_kernel("conv2d"); } \
  Status Backend::conv2d_backprop_input(const Exec&, const ConvParams&, const T*, const T*, T*) {               \
    return missing_kernel("conv2d_backprop_input");                                                              \
  }                                                                                                              \
  Status Backend::conv2d_backprop_filter(const Exec&, const ConvParams&, const T*, const T*, T*) {              \
    return missing_kernel("conv2d_backprop_filter");                                                             \
  }                                                                                                              \
  Status Backend::depthwise_conv2d_native(const Exec&, const ConvParams&, const T*, const T*, T*) {             \
    return missing_kernel("depthwise_conv2d_native");                                                            \
  }                                                                                                              \
  Status Backend::depthwise_conv2d_native_backprop_input(const Exec&, const ConvParams&, const T*, const T*, T*) { \
    return missing_kernel("depthwise_conv2d_native_backprop_input");                                             \
  }                                                                                                              \
  Status Backend::depthwise_conv2d_native_backprop_filter(const Exec&, const ConvParams&, const T*, const T*, T*) { \
    return missing_kernel("depthwise_conv2d_native_backprop_filter");                                            \
  }                                                                                                              \
  Status Backend::batch_norm_stats(const Exec&, const BatchNormParams&, const T*, T*, T*) {                     \
    return missing_kernel("batch_norm_stats");                                                                   \
  }                                                                                                              \
  Status Backend::batch_norm_apply(const Exec&, const BatchNormParams&, const T*, const T*, const T*, const T*, \
                                   const T*, T*) {                                                               \
    return missing_kernel("batch_norm_apply");                                                                   \
  }                                                                                                              \
  Status Backend::fused_batch_norm_grad(const Exec&, const BatchNormParams&, const T*, const T*, const T*,      \
                                        const T*, const T*, T*, T*, T*) {                                        \
    return missing_kernel("fused_batch_norm_grad");                                                              \
  }                                                                                                              \
  Status Backend::fractional_avg_pool(const Exec&, const FracPoolParams&, const T*, T*) {                       \
    return missing_kernel("fractional_avg_pool");                                                                \
  }                                                                                                              \
  Status Backend::fractional_avg_pool_grad(const Exec&, const FracPoolParams&, const T*, T*) {                  \
    return missing_kernel("fractional_avg_pool_grad");                                                           \
  }
GRADRT_DEFAULT_KERNELS(float)
GRADRT_DEFAULT_KERNELS(double)
#undef GRADRT_DEFAULT_KERNELS

#ifdef GRADRT_NO_VULKAN
Backend* vulkan_backend() { return nullptr; }
#endif

std::vector<Backend*> all_backends() {
  std::vector<Backend*> list = {reference_backend(), cpu_backend()};
  if (Backend* vk = vulkan_backend()) list.push_back(vk);
  return list;
}

Backend* find_backend(std::string_view name) {
  for (Backend* b : all_backends())
    if (name == b->name()) return b;
  return nullptr;
}

}  // namespace gradrt

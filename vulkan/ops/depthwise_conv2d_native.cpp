// DepthwiseConv2dNative forward on Vulkan: shaders/depthwise_conv2d_native.comp, one invocation
// per output element.
#include <cstring>

#include "common.h"
#include "depthwise_conv2d_native.spv.h"
#include "depthwise_conv2d_native_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status depthwise_conv2d_native(Context& ctx, const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t n_y = p.y_elements();
  if (n_y == 0) return Status::OK();
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push("depthwise_conv2d_native", p, &push));
  const uint32_t threads = elementwise_threads(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, depthwise_conv2d_native, 3, ConvPush), {threads}, &k));
  return run_one_dispatch(ctx, *k, push, {x, sizeof(T) * p.x_elements()}, {w, sizeof(T) * p.dw_w_elements()},
                          {y, sizeof(T) * n_y}, group_count(ctx, n_y, threads, 0));
}

template Status depthwise_conv2d_native<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status depthwise_conv2d_native<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

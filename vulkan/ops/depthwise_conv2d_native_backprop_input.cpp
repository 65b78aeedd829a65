// DepthwiseConv2dNativeBackpropInput on Vulkan: shaders/depthwise_conv2d_native_backprop_input.comp,
// one invocation per dx element gathering its covering output window.

#include "common.h"
#include "depthwise_conv2d_native_backprop_input.spv.h"
#include "depthwise_conv2d_native_backprop_input_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status depthwise_conv2d_native_backprop_input(Context& ctx, const ConvParams& p, const T* w, const T* dy,
                                              T* dx) {
  const int64_t n_dx = p.x_elements();
  if (n_dx == 0) return Status::OK();
  const uint32_t threads = elementwise_threads(ctx);
  return run_conv_dispatch(ctx, "depthwise_conv2d_native_backprop_input",
                           GRADRT_VK_SHADER(T, depthwise_conv2d_native_backprop_input, 3, ConvPush), {threads}, p,
                           {w, sizeof(T) * p.dw_w_elements()}, {dy, sizeof(T) * p.y_elements()},
                           {dx, sizeof(T) * n_dx}, group_count(ctx, n_dx, threads, 0));
}

template Status depthwise_conv2d_native_backprop_input<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status depthwise_conv2d_native_backprop_input<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

// DepthwiseConv2dNative forward on Vulkan: shaders/depthwise_conv2d_native_v4.comp (4 output
// columns x 4 channels per invocation) when vec4_shaders() takes the shape, otherwise
// shaders/depthwise_conv2d_native.comp, one invocation per output element.

#include "common.h"
#include "depthwise_conv2d_native.spv.h"
#include "depthwise_conv2d_native_f64.spv.h"
#include "depthwise_conv2d_native_v4.spv.h"
#include "depthwise_conv2d_native_v4_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status depthwise_conv2d_native(Context& ctx, const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t n_y = p.y_elements();
  if (n_y == 0) return Status::OK();
  if (vec4_shaders(p.in_c, p.depth_multiplier))  // positions (n, oy, group of the shader's OX = 4 columns)
    return run_quad_dispatch(ctx, "depthwise_conv2d_native", GRADRT_VK_SHADER(T, depthwise_conv2d_native_v4, 3, ConvPush),
                             p, {x, sizeof(T) * p.x_elements()}, {w, sizeof(T) * p.dw_w_elements()},
                             {y, sizeof(T) * n_y}, p.out_h, p.out_w, 4);
  const uint32_t threads = elementwise_threads(ctx);
  return run_conv_dispatch(ctx, "depthwise_conv2d_native", GRADRT_VK_SHADER(T, depthwise_conv2d_native, 3, ConvPush),
                           {threads}, p, {x, sizeof(T) * p.x_elements()}, {w, sizeof(T) * p.dw_w_elements()},
                           {y, sizeof(T) * n_y}, group_count(ctx, n_y, threads, 0));
}

template Status depthwise_conv2d_native<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status depthwise_conv2d_native<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

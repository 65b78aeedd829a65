// DepthwiseConv2dNativeBackpropInput on Vulkan: shaders/depthwise_conv2d_native_backprop_input_v4.comp
// (2 dx columns x 4 channels per invocation) when vec4_shaders() takes the shape; otherwise
// shaders/depthwise_conv2d_native_backprop_input.comp,
// one invocation per dx element gathering its covering output window, on a (channel, column,
// image row) grid of workgroups of l.cols channels x l.lanes columns.
// T: float, double, or uint16_t (float16 storage: the shaders' _f16 variants, float32 compute).

#include "common.h"
#include "depthwise_conv2d_native_backprop_input.spv.h"
#include "depthwise_conv2d_native_backprop_input_f16.spv.h"
#include "depthwise_conv2d_native_backprop_input_f64.spv.h"
#include "depthwise_conv2d_native_backprop_input_v4.spv.h"
#include "depthwise_conv2d_native_backprop_input_v4_f16.spv.h"
#include "depthwise_conv2d_native_backprop_input_v4_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status depthwise_conv2d_native_backprop_input(Context& ctx, const ConvParams& p, const T* w, const T* dy,
                                              T* dx) {
  const int64_t n_dx = p.x_elements();
  if (n_dx == 0) return Status::OK();
  if (vec4_shaders(p.in_c, p.depth_multiplier))  // positions (n, iy, group of the shader's IX = 2 columns)
    return run_quad_dispatch(ctx, "depthwise_conv2d_native_backprop_input",
                             GRADRT_VK_SHADER3(T, depthwise_conv2d_native_backprop_input_v4, 3, ConvPush), p,
                             {w, sizeof(T) * p.dw_w_elements()}, {dy, sizeof(T) * p.y_elements()},
                             {dx, sizeof(T) * n_dx}, p.in_h, p.in_w, 2);
  const Lanes l = lanes(ctx);
  return run_conv_dispatch(ctx, "depthwise_conv2d_native_backprop_input",
                           GRADRT_VK_SHADER3(T, depthwise_conv2d_native_backprop_input, 3, ConvPush), l.spec(), p,
                           {w, sizeof(T) * p.dw_w_elements()}, {dy, sizeof(T) * p.y_elements()},
                           {dx, sizeof(T) * n_dx}, group_count(ctx, p.in_c, l.cols, 0),
                           group_count(ctx, p.in_w, l.lanes, 1), group_count(ctx, p.batch * p.in_h, 1, 2));
}

template Status depthwise_conv2d_native_backprop_input<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status depthwise_conv2d_native_backprop_input<double>(Context&, const ConvParams&, const double*, const double*, double*);
template Status depthwise_conv2d_native_backprop_input<uint16_t>(Context&, const ConvParams&, const uint16_t*, const uint16_t*, uint16_t*);

}  // namespace gradrt::vk

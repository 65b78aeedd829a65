// DepthwiseConv2dNativeBackpropFilter on Vulkan: shaders/depthwise_conv2d_native_backprop_filter.comp
// (or its _v4 form, four channels per column, when vec4_shaders() takes the shape) writes one
// partial dw per chunk of (n, oy, ox); shaders/sum_partials.comp adds them in order. With
// GRADRT_VULKAN_SHADERS=v5 the vec4 shapes run the _v5 partial pass instead: the same geometry
// and order (same bits), the nine tap sums in named registers (see the shader's header).
// T = uint16_t (float16 storage, only with the v5 set: ops/common.h f16_storage): the scalar and
// _v5 shaders' _f16 variants, float partials (sized as float32's: the same splits and bits).
#include <algorithm>

#include "common.h"
#include "depthwise_conv2d_native_backprop_filter.spv.h"
#include "depthwise_conv2d_native_backprop_filter_f16.spv.h"
#include "depthwise_conv2d_native_backprop_filter_f64.spv.h"
#include "depthwise_conv2d_native_backprop_filter_v4.spv.h"
#include "depthwise_conv2d_native_backprop_filter_v4_f64.spv.h"
#include "depthwise_conv2d_native_backprop_filter_v5.spv.h"
#include "depthwise_conv2d_native_backprop_filter_v5_f16.spv.h"
#include "depthwise_conv2d_native_backprop_filter_v5_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status depthwise_conv2d_native_backprop_filter(Context& ctx, const ConvParams& p, const T* x, const T* dy,
                                               T* dw) {
  const int64_t n_dw = p.dw_w_elements();  // = filter_h * filter_w * out_c
  if (Status s; answered_on_host(ctx, dw, n_dw, p.x_elements() == 0 || p.y_elements() == 0, &s)) return s;
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push("depthwise_conv2d_native_backprop_filter", p, &push));
  const int64_t K = p.batch * p.out_h * p.out_w;
  // Workgroups of l.cols output channels (v4: channel quads) x 9 taps (the shader's TAPS) x
  // l.lanes position lanes; positions split so that ~1024 workgroups run, bounded by the partial
  // buffer.
  const bool v4 = vec4_shaders(p.out_c, p.depth_multiplier);
  const Lanes l = v4 ? quad_lanes(ctx, p.out_c / 4) : lanes(ctx);
  const uint32_t gx = group_count(ctx, v4 ? p.out_c / 4 : p.out_c, l.cols, 0);
  const uint32_t gz = group_count(ctx, p.filter_h * p.filter_w, 9, 2);
  const int64_t wanted = std::min(lane_splits(K, int64_t{gx} * gz, l), max_filter_splits(ctx, n_dw, sizeof(Compute<T>)));
  const Split split = split_reduction(K, std::max<int64_t>(wanted, 1), 1);
  push.k_chunk = static_cast<int32_t>(split.chunk);
  push.splits = static_cast<int32_t>(split.splits);

  const Kernel* k = nullptr;
  ShaderCode code{};
  if constexpr (std::is_same_v<T, uint16_t>)
    code = v4 ? GRADRT_VK_SHADER_F16(depthwise_conv2d_native_backprop_filter_v5, 3, ConvPush)
              : GRADRT_VK_SHADER_F16(depthwise_conv2d_native_backprop_filter, 3, ConvPush);
  else
    code = !v4                ? GRADRT_VK_SHADER(T, depthwise_conv2d_native_backprop_filter, 3, ConvPush)
           : shader_set() >= 5 ? GRADRT_VK_SHADER(T, depthwise_conv2d_native_backprop_filter_v5, 3, ConvPush)
                               : GRADRT_VK_SHADER(T, depthwise_conv2d_native_backprop_filter_v4, 3, ConvPush);
  GRADRT_RETURN_IF_ERROR(ctx.kernel(code, l.spec(), &k));
  return run_split_reduction(ctx, *k, {x, sizeof(T) * p.x_elements()}, {dy, sizeof(T) * p.y_elements()}, dw, n_dw,
                             push, gx, group_count(ctx, split.splits, 1, 1), gz);
}

template Status depthwise_conv2d_native_backprop_filter<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status depthwise_conv2d_native_backprop_filter<double>(Context&, const ConvParams&, const double*, const double*, double*);
template Status depthwise_conv2d_native_backprop_filter<uint16_t>(Context&, const ConvParams&, const uint16_t*, const uint16_t*, uint16_t*);

}  // namespace gradrt::vk

// DepthwiseConv2dNativeBackpropFilter on Vulkan: shaders/depthwise_conv2d_native_backprop_filter.comp
// writes one partial dw per chunk of (n, oy, ox); shaders/sum_partials.comp adds them in order.
#include <algorithm>

#include "common.h"
#include "depthwise_conv2d_native_backprop_filter.spv.h"
#include "depthwise_conv2d_native_backprop_filter_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status depthwise_conv2d_native_backprop_filter(Context& ctx, const ConvParams& p, const T* x, const T* dy,
                                               T* dw) {
  const int64_t n_dw = p.dw_w_elements();  // = filter_h * filter_w * out_c
  if (answered_on_host(dw, n_dw, p.x_elements() == 0 || p.y_elements() == 0)) return Status::OK();
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push("depthwise_conv2d_native_backprop_filter", p, &push));
  const int64_t K = p.batch * p.out_h * p.out_w;
  // About 2^20 invocations in all, each summing at least 16 positions; bounded by the
  // partial buffer.
  int64_t wanted = std::min(((int64_t{1} << 20) + n_dw - 1) / n_dw, (K + 15) / 16);
  wanted = std::min(wanted, max_filter_splits(ctx, n_dw, sizeof(T)));
  const Split split = split_reduction(K, std::max<int64_t>(wanted, 1), 1);
  push.k_chunk = static_cast<int32_t>(split.chunk);
  push.splits = static_cast<int32_t>(split.splits);

  const uint32_t threads = elementwise_threads(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, depthwise_conv2d_native_backprop_filter, 3, ConvPush),
      {threads}, &k));
  return run_filter_gradient(ctx, *k, p, x, dy, dw, n_dw, push, group_count(ctx, n_dw, threads, 0),
                             group_count(ctx, split.splits, 1, 1), 1);
}

template Status depthwise_conv2d_native_backprop_filter<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status depthwise_conv2d_native_backprop_filter<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

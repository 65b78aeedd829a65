// Conv2DBackpropInput on Vulkan: shaders/conv2d_backprop_input.comp, an implicit GEMM over
// (n, iy, ix) x (input channel of the group) with k = (ky, kx, output channel of the group).
#include <cstring>

#include "common.h"
#include "conv2d_backprop_input.spv.h"
#include "conv2d_backprop_input_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status conv2d_backprop_input(Context& ctx, const ConvParams& p, const T* w, const T* dy, T* dx) {
  const int64_t n_dx = p.x_elements();
  if (n_dx == 0) return Status::OK();
  if (p.groups <= 0 || p.y_elements() == 0 || p.w_elements() == 0) {  // nothing flows back
    std::memset(dx, 0, sizeof(T) * n_dx);
    return Status::OK();
  }
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push("conv2d_backprop_input", p, &push));
  const int64_t M = p.batch * p.in_h * p.in_w, N = p.filter_in_c;
  const GemmTiles t = gemm_tiles(ctx, N, sizeof(T));
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, conv2d_backprop_input, 3, ConvPush), t.spec(), &k));
  return run_one_dispatch(ctx, *k, push, {w, sizeof(T) * p.w_elements()}, {dy, sizeof(T) * p.y_elements()},
                          {dx, sizeof(T) * n_dx}, group_count(ctx, N, t.bn, 0), group_count(ctx, M, t.bm, 1),
                          static_cast<uint32_t>(p.groups));
}

template Status conv2d_backprop_input<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status conv2d_backprop_input<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

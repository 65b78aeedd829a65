// Conv2DBackpropInput on Vulkan: shaders/conv2d_backprop_input.comp, an implicit GEMM over
// (n, iy, ix) x (input channel of the group) with k = (ky, kx, output channel of the group).

#include "common.h"
#include "conv2d_backprop_input.spv.h"
#include "conv2d_backprop_input_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status conv2d_backprop_input(Context& ctx, const ConvParams& p, const T* w, const T* dy, T* dx) {
  const int64_t n_dx = p.x_elements();
  // nothing flows back: zeros
  if (Status s; answered_on_host(ctx, dx, n_dx, p.groups <= 0 || p.y_elements() == 0 || p.w_elements() == 0, &s))
    return s;
  const int64_t M = p.batch * p.in_h * p.in_w, N = p.filter_in_c;
  // (A tile as wide as N for 16 < N < 64 was tried in session 11: 0.81x at 8x56x56x24 on an H100.)
  const GemmTiles t = gemm_tiles(ctx, M, N, sizeof(T));
  return run_conv_dispatch(ctx, "conv2d_backprop_input", GRADRT_VK_SHADER(T, conv2d_backprop_input, 3, ConvPush),
                           t.spec(), p, {w, sizeof(T) * p.w_elements()}, {dy, sizeof(T) * p.y_elements()},
                           {dx, sizeof(T) * n_dx}, group_count(ctx, N, t.bn, 0), group_count(ctx, M, t.bm, 1),
                           static_cast<uint32_t>(p.groups));
}

template Status conv2d_backprop_input<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status conv2d_backprop_input<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

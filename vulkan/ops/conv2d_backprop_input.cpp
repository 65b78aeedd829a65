// Conv2DBackpropInput on Vulkan: shaders/conv2d_backprop_input.comp, an implicit GEMM over
// (n, iy, ix) x (input channel of the group) with k = (ky, kx, output channel of the group).
// T = uint16_t (float16 storage): the _f16 variant, with float32's tiles (the shared-memory tiles
// hold floats): dx is the float32 kernel's result rounded once (tests/test_vulkan_f16.cpp).

#include "common.h"
#include "conv2d_backprop_input.spv.h"
#include "conv2d_backprop_input_f16.spv.h"
#include "conv2d_backprop_input_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status conv2d_backprop_input(Context& ctx, const ConvParams& p, const T* w, const T* dy, T* dx) {
  // nothing flows back (no dy or no filter): zeros
  if (Status s; empty_conv_sum(ctx, p, dx, p.x_elements(), p.w_elements(), p.y_elements(), &s)) return s;
  const int64_t n_dx = p.x_elements();
  const int64_t M = p.batch * p.in_h * p.in_w, N = p.filter_in_c;
  // (A tile as wide as N for 16 < N < 64 was tried in session 11: 0.81x at 8x56x56x24 on an H100.)
  const GemmTiles t = gemm_tiles(ctx, M, N, sizeof(Compute<T>));
  return run_conv_dispatch(ctx, "conv2d_backprop_input", GRADRT_VK_SHADER3(T, conv2d_backprop_input, 3, ConvPush),
                           t.spec(), p, {w, sizeof(T) * p.w_elements()}, {dy, sizeof(T) * p.y_elements()},
                           {dx, sizeof(T) * n_dx}, group_count(ctx, N, t.bn, 0), group_count(ctx, M, t.bm, 1),
                           static_cast<uint32_t>(p.groups));
}

template Status conv2d_backprop_input<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status conv2d_backprop_input<double>(Context&, const ConvParams&, const double*, const double*, double*);
template Status conv2d_backprop_input<uint16_t>(Context&, const ConvParams&, const uint16_t*, const uint16_t*, uint16_t*);

}  // namespace gradrt::vk

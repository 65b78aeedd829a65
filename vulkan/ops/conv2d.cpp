// Conv2D forward on Vulkan: shaders/conv2d.comp, one implicit GEMM per group (workgroup z).

#include "common.h"
#include "conv2d.spv.h"
#include "conv2d_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status conv2d(Context& ctx, const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t n_y = p.y_elements();
  if (Status s; answered_on_host(ctx, y, n_y, p.groups <= 0 || p.filter_h * p.filter_w * p.filter_in_c == 0, &s))
    return s;
  const int64_t M = p.batch * p.out_h * p.out_w, N = p.out_c / p.groups;
  const GemmTiles t = gemm_tiles(ctx, M, N, sizeof(T));
  return run_conv_dispatch(ctx, "conv2d", GRADRT_VK_SHADER(T, conv2d, 3, ConvPush), t.spec(), p,
                           {x, sizeof(T) * p.x_elements()}, {w, sizeof(T) * p.w_elements()}, {y, sizeof(T) * n_y},
                           group_count(ctx, N, t.bn, 0), group_count(ctx, M, t.bm, 1), static_cast<uint32_t>(p.groups));
}

template Status conv2d<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status conv2d<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

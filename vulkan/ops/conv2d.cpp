// Conv2D forward on Vulkan: shaders/conv2d.comp, one implicit GEMM per group (workgroup z).
#include <cstring>

#include "common.h"
#include "conv2d.spv.h"
#include "conv2d_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status conv2d(Context& ctx, const ConvParams& p, const T* x, const T* w, T* y) {
  const int64_t n_y = p.y_elements();
  if (n_y == 0) return Status::OK();
  if (p.groups <= 0 || p.filter_h * p.filter_w * p.filter_in_c == 0) {  // empty sum
    std::memset(y, 0, sizeof(T) * n_y);
    return Status::OK();
  }
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push("conv2d", p, &push));
  const int64_t M = p.batch * p.out_h * p.out_w, N = p.out_c / p.groups;
  const GemmTiles t = gemm_tiles(ctx, N, sizeof(T));
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, conv2d, 3, ConvPush), t.spec(), &k));
  return run_one_dispatch(ctx, *k, push, {x, sizeof(T) * p.x_elements()}, {w, sizeof(T) * p.w_elements()},
                          {y, sizeof(T) * n_y}, group_count(ctx, N, t.bn, 0), group_count(ctx, M, t.bm, 1),
                          static_cast<uint32_t>(p.groups));
}

template Status conv2d<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status conv2d<double>(Context&, const ConvParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

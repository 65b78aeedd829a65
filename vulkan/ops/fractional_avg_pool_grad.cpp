// FractionalAvgPoolGrad on Vulkan: shaders/fractional_avg_pool_grad.comp gathers, for each input
// element, dy / count of every cell that holds it (no scatter, so no atomics).
#include <vector>

#include "common.h"
#include "fractional_avg_pool_grad.spv.h"
#include "fractional_avg_pool_grad_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

std::vector<int32_t> pool_cells(const FracPoolParams& p, bool with_cover);  // fractional_avg_pool.cpp
PoolPush pool_push(const FracPoolParams& p);

template <class T>
Status fractional_avg_pool_grad(Context& ctx, const FracPoolParams& p, const T* dy, T* dx) {
  const int64_t n_dx = p.batch * p.in_h * p.in_w * p.channels, n_dy = p.batch * p.out_h * p.out_w * p.channels;
  if (Status s; answered_on_host(ctx, dx, n_dx, n_dy == 0, &s)) return s;
  GRADRT_RETURN_IF_ERROR(check_int32("fractional_avg_pool_grad", {n_dx, n_dy, 2 * (p.out_h + p.out_w + p.in_h + p.in_w)}));
  const std::vector<int32_t> cells = pool_cells(p, true);
  const uint32_t threads = elementwise_threads(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, fractional_avg_pool_grad, 3, PoolPush), {threads}, &k));
  return run_one_dispatch(ctx, *k, pool_push(p), {dy, sizeof(T) * n_dy},
                          {cells.data(), sizeof(int32_t) * cells.size()}, {dx, sizeof(T) * n_dx},
                          group_count(ctx, n_dx, threads, 0));
}

template Status fractional_avg_pool_grad<float>(Context&, const FracPoolParams&, const float*, float*);
template Status fractional_avg_pool_grad<double>(Context&, const FracPoolParams&, const double*, double*);

}  // namespace gradrt::vk

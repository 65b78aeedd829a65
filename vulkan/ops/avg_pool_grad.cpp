// AvgPoolGrad on Vulkan: shaders/avg_pool_grad.comp gathers per dx element.
#include <cstdint>

#include "avg_pool_grad.spv.h"
#include "avg_pool_grad_f64.spv.h"
#include "ops.h"
#include "window_pool.h"

namespace gradrt::vk {

template <class T>
Status avg_pool_grad(Context& ctx, const PoolParams& p, const T* dy, T* dx) {
  if (answered_on_host(dx, p.x_elements(), p.y_elements() == 0)) return Status::OK();
  return run_window_pool(ctx, "avg_pool_grad", GRADRT_VK_SHADER(T, avg_pool_grad, 3, PoolPush), p,
                         {{dy, sizeof(T) * p.y_elements()}}, dx, p.x_elements());
}

template Status avg_pool_grad<float>(Context&, const PoolParams&, const float*, float*);
template Status avg_pool_grad<double>(Context&, const PoolParams&, const double*, double*);

}  // namespace gradrt::vk

// MaxPoolGrad on Vulkan: shaders/max_pool_grad.comp gathers per dx element (no scatter, no
// atomics), recomputing each containing window's argmax by TF's rule.
#include <cstdint>

#include "max_pool_grad.spv.h"
#include "max_pool_grad_f64.spv.h"
#include "ops.h"
#include "window_pool.h"

namespace gradrt::vk {

template <class T>
Status max_pool_grad(Context& ctx, const PoolParams& p, const T* x, const T* dy, T* dx) {
  if (answered_on_host(dx, p.x_elements(), p.y_elements() == 0)) return Status::OK();
  return run_window_pool(ctx, "max_pool_grad", GRADRT_VK_SHADER(T, max_pool_grad, 4, PoolPush), p,
                         {{x, sizeof(T) * p.x_elements()}, {dy, sizeof(T) * p.y_elements()}}, dx, p.x_elements());
}

template Status max_pool_grad<float>(Context&, const PoolParams&, const float*, const float*, float*);
template Status max_pool_grad<double>(Context&, const PoolParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

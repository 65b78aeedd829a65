// AvgPool on Vulkan: shaders/avg_pool.comp, one invocation per y element.
#include <cstdint>

#include "avg_pool.spv.h"
#include "avg_pool_f64.spv.h"
#include "ops.h"
#include "window_pool.h"

namespace gradrt::vk {

template <class T>
Status avg_pool(Context& ctx, const PoolParams& p, const T* x, T* y) {
  if (p.y_elements() == 0) return Status::OK();
  return run_window_pool(ctx, "avg_pool", GRADRT_VK_SHADER(T, avg_pool, 3, PoolPush), p,
                         {{x, sizeof(T) * p.x_elements()}}, y, p.y_elements());
}

template Status avg_pool<float>(Context&, const PoolParams&, const float*, float*);
template Status avg_pool<double>(Context&, const PoolParams&, const double*, double*);

}  // namespace gradrt::vk

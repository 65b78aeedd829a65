// MaxPool on Vulkan: shaders/max_pool.comp, one invocation per y element.
#include <cstdint>

#include "max_pool.spv.h"
#include "max_pool_f64.spv.h"
#include "ops.h"
#include "window_pool.h"

namespace gradrt::vk {

template <class T>
Status max_pool(Context& ctx, const PoolParams& p, const T* x, T* y) {
  if (p.y_elements() == 0) return Status::OK();
  return run_window_pool(ctx, "max_pool", GRADRT_VK_SHADER(T, max_pool, 3, PoolPush), p,
                         {{x, sizeof(T) * p.x_elements()}}, y, p.y_elements());
}

template Status max_pool<float>(Context&, const PoolParams&, const float*, float*);
template Status max_pool<double>(Context&, const PoolParams&, const double*, double*);

}  // namespace gradrt::vk

// BiasAdd on Vulkan: shaders/bias_add.comp, one invocation per element of [rows, channels].
#include <cstdint>  // before the generated SPIR-V headers, which use uint32_t

#include "bias_add.spv.h"
#include "bias_add_f64.spv.h"
#include "common.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status bias_add(Context& ctx, const BiasParams& p, const T* x, const T* bias, T* y) {
  const int64_t n = p.rows * p.channels;
  if (n == 0) return Status::OK();
  GRADRT_RETURN_IF_ERROR(check_int32("bias_add", {n}));
  const uint32_t threads = elementwise_threads(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, bias_add, 3, EltwisePush), {threads}, &k));
  EltwisePush push{};
  push.n = static_cast<int32_t>(n);
  push.rows = static_cast<int32_t>(p.rows);
  push.channels = static_cast<int32_t>(p.channels);
  return run_one_dispatch(ctx, *k, push, {x, sizeof(T) * n}, {bias, sizeof(T) * p.channels}, {y, sizeof(T) * n},
                          group_count(ctx, n, threads, 0));
}

template Status bias_add<float>(Context&, const BiasParams&, const float*, const float*, float*);
template Status bias_add<double>(Context&, const BiasParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

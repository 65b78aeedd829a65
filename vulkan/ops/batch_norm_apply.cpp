// Batch-norm normalisation on Vulkan: shaders/batch_norm_apply.comp, elementwise (its _v4 form,
// four channels per invocation, when vec4_shaders() takes the channel count).
#include <cstdint>  // before the generated SPIR-V header, which uses uint32_t
#include "batch_norm_apply.spv.h"
#include "batch_norm_apply_f64.spv.h"
#include "batch_norm_apply_v4.spv.h"
#include "batch_norm_apply_v4_f64.spv.h"
#include "common.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status batch_norm_apply(Context& ctx, const BatchNormParams& p, const T* x, const T* scale,
                        const T* offset, const T* mean, const T* variance, T* y) {
  const int64_t n = p.rows * p.channels;
  if (n == 0) return Status::OK();
  GRADRT_RETURN_IF_ERROR(check_int32("batch_norm_apply", {n}));
  BatchNormPush push{};
  push.rows = static_cast<int32_t>(p.rows);
  push.channels = static_cast<int32_t>(p.channels);
  push.epsilon = p.epsilon;
  ChannelKernel k;
  GRADRT_RETURN_IF_ERROR(channel_kernel(ctx, p.channels, GRADRT_VK_SHADER(T, batch_norm_apply, 6, BatchNormPush),
                                        GRADRT_VK_SHADER(T, batch_norm_apply_v4, 6, BatchNormPush), &k));
  Job job(ctx);
  const size_t cb = sizeof(T) * p.channels;
  int bx, bscale, boffset, bmean, bvar, by;
  GRADRT_RETURN_IF_ERROR(job.input(x, sizeof(T) * n, &bx));
  GRADRT_RETURN_IF_ERROR(job.input(scale, cb, &bscale));
  GRADRT_RETURN_IF_ERROR(job.input(offset, cb, &boffset));
  GRADRT_RETURN_IF_ERROR(job.input(mean, cb, &bmean));
  GRADRT_RETURN_IF_ERROR(job.input(variance, cb, &bvar));
  GRADRT_RETURN_IF_ERROR(job.output(y, sizeof(T) * n, &by));
  GRADRT_RETURN_IF_ERROR(job.dispatch(*k.k, {bx, bscale, boffset, bmean, bvar, by}, push,
                                      group_count(ctx, k.v4 ? n / 4 : n, k.threads, 0)));
  return job.run();
}

template Status batch_norm_apply<float>(Context&, const BatchNormParams&, const float*, const float*, const float*, const float*, const float*, float*);
template Status batch_norm_apply<double>(Context&, const BatchNormParams&, const double*, const double*, const double*, const double*, const double*, double*);

}  // namespace gradrt::vk

// BiasAddGrad on Vulkan, two dispatches in one submission:
//   shaders/bias_add_grad.comp  partial sums of dy per row split and channel
//   shaders/sum_partials.comp   the splits added in order (deterministic, no atomics)
// The row split is batch norm's (the same reduction over [rows, channels]).
#include <cstdint>  // before the generated SPIR-V headers, which use uint32_t

#include "bias_add_grad.spv.h"
#include "bias_add_grad_f64.spv.h"
#include "common.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

Split batch_norm_split(const Context& ctx, const BatchNormParams& p);  // batch_norm_stats.cpp

template <class T>
Status bias_add_grad(Context& ctx, const BiasParams& p, const T* dy, T* dbias) {
  if (p.channels == 0) return Status::OK();
  if (answered_on_host(dbias, p.channels, p.rows == 0)) return Status::OK();
  GRADRT_RETURN_IF_ERROR(check_int32("bias_add_grad", {p.rows * p.channels}));
  BatchNormParams bn;
  bn.rows = p.rows;
  bn.channels = p.channels;
  const Split split = batch_norm_split(ctx, bn);
  EltwisePush push{};
  push.n = static_cast<int32_t>(p.rows * p.channels);
  push.rows = static_cast<int32_t>(p.rows);
  push.channels = static_cast<int32_t>(p.channels);
  push.row_chunk = static_cast<int32_t>(split.chunk);
  push.splits = static_cast<int32_t>(split.splits);
  const uint32_t threads = elementwise_threads(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, bias_add_grad, 2, EltwisePush), {threads}, &k));
  Job job(ctx);
  int bdy, bdbias, bpartial;
  GRADRT_RETURN_IF_ERROR(job.input(dy, sizeof(T) * p.rows * p.channels, &bdy));
  GRADRT_RETURN_IF_ERROR(job.output(dbias, sizeof(T) * p.channels, &bdbias));
  GRADRT_RETURN_IF_ERROR(job.scratch(sizeof(T) * p.channels * split.splits, &bpartial));
  GRADRT_RETURN_IF_ERROR(job.dispatch(*k, {bdy, bpartial}, push, group_count(ctx, p.channels, threads, 0),
                                      group_count(ctx, split.splits, 1, 1)));
  GRADRT_RETURN_IF_ERROR(sum_partials<T>(ctx, job, bpartial, bdbias, p.channels, split.splits, 1.0f));
  return job.run();
}

template Status bias_add_grad<float>(Context&, const BiasParams&, const float*, float*);
template Status bias_add_grad<double>(Context&, const BiasParams&, const double*, double*);

}  // namespace gradrt::vk

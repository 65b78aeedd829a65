// Batch mean and biased variance on Vulkan (ops.md 6.4), four dispatches in one submission:
//   shaders/batch_norm_stats.comp (mode 0: partial sums of x)          -> sum_partials * (1/R) = mean
//   shaders/batch_norm_stats.comp (mode 1: partial sums of (x-mean)^2) -> sum_partials * (1/R) = variance
// (batch_norm_stats_v4.comp, four channels per invocation, when vec4_shaders() takes the channel count.)
#include <cstdint>  // before the generated SPIR-V header, which uses uint32_t
#include <algorithm>
#include <type_traits>

#include "batch_norm_stats.spv.h"
#include "batch_norm_stats_f64.spv.h"
#include "batch_norm_stats_v4.spv.h"
#include "batch_norm_stats_v4_f64.spv.h"
#include "common.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

// Rows split so that there are ~2^18 partial sums in all, each over at least 32 rows.
Split batch_norm_split(const Context& ctx, const BatchNormParams& p) {
  const int64_t c = std::max<int64_t>(p.channels, 1);
  int64_t wanted = std::min(((int64_t{1} << 18) + c - 1) / c, (p.rows + 31) / 32);
  wanted = std::min<int64_t>(wanted, std::min<int64_t>(int64_t{64} << 20, ctx.limits().maxStorageBufferRange) /
                                         (8 * c));
  return split_reduction(p.rows, std::max<int64_t>(wanted, 1), 1);
}

BatchNormPush batch_norm_push(const BatchNormParams& p, const Split& split) {
  BatchNormPush push{};
  push.rows = static_cast<int32_t>(p.rows);
  push.channels = static_cast<int32_t>(p.channels);
  push.row_chunk = static_cast<int32_t>(split.chunk);
  push.splits = static_cast<int32_t>(split.splits);
  push.epsilon = p.epsilon;
  push.inv_rows = 1.0f / static_cast<float>(p.rows);  // TF: sum * (1.0f / R)
  push.is_training = p.is_training ? 1 : 0;
  return push;
}

template <class T>
Status batch_norm_stats(Context& ctx, const BatchNormParams& p, const T* x, T* mean, T* variance) {
  if (p.channels == 0) return Status::OK();
  GRADRT_RETURN_IF_ERROR(check_int32("batch_norm_stats", {p.rows * p.channels}));
  const Split split = batch_norm_split(ctx, p);
  BatchNormPush push = batch_norm_push(p, split);
  ChannelKernel k;
  GRADRT_RETURN_IF_ERROR(channel_kernel(ctx, p.channels, GRADRT_VK_SHADER(T, batch_norm_stats, 3, BatchNormPush),
                                        GRADRT_VK_SHADER(T, batch_norm_stats_v4, 3, BatchNormPush), &k));
  Job job(ctx);
  int bx, bmean, bvar, bpartial;
  GRADRT_RETURN_IF_ERROR(job.input(x, sizeof(T) * p.rows * p.channels, &bx));
  GRADRT_RETURN_IF_ERROR(job.output(mean, sizeof(T) * p.channels, &bmean));
  GRADRT_RETURN_IF_ERROR(job.output(variance, sizeof(T) * p.channels, &bvar));
  GRADRT_RETURN_IF_ERROR(job.scratch(sizeof(T) * p.channels * split.splits, &bpartial));
  const uint32_t gx = group_count(ctx, k.v4 ? p.channels / 4 : p.channels, k.threads, 0);
  const uint32_t gy = group_count(ctx, split.splits, 1, 1);
  // float: sum * float(1/R) as TF does; double: sum / R as the float64 reference does.
  const int64_t divisor = std::is_same_v<T, double> ? p.rows : 0;
  push.mode = 0;
  GRADRT_RETURN_IF_ERROR(job.dispatch(*k.k, {bx, bmean, bpartial}, push, gx, gy));
  GRADRT_RETURN_IF_ERROR(sum_partials<T>(ctx, job, bpartial, bmean, p.channels, split.splits, push.inv_rows, divisor));
  push.mode = 1;
  GRADRT_RETURN_IF_ERROR(job.dispatch(*k.k, {bx, bmean, bpartial}, push, gx, gy));
  GRADRT_RETURN_IF_ERROR(sum_partials<T>(ctx, job, bpartial, bvar, p.channels, split.splits, push.inv_rows, divisor));
  return job.run();
}

template Status batch_norm_stats<float>(Context&, const BatchNormParams&, const float*, float*, float*);
template Status batch_norm_stats<double>(Context&, const BatchNormParams&, const double*, double*, double*);

}  // namespace gradrt::vk

// FusedBatchNormGrad on Vulkan (ops.md 6.10), three dispatches in one submission:
//   shaders/fused_batch_norm_grad_sums.comp  partial sum dy, sum dy*(x-mean) per row split
//   shaders/sum_partials.comp                 fixed-order total of the splits
//   shaders/fused_batch_norm_grad.comp        dx (training or inference formula), dscale, doffset
// The first and last have _v4 forms (four channels per invocation, the same buffer layouts) that
// run when vec4_shaders() takes the channel count.
// Storage T of dy, x, dx: float, double, or uint16_t (float16 storage, the _f16 variants); U of
// scale, mean, variance, dscale, doffset and the sums: Compute<T> (TF's U: float32 for half x).
#include <algorithm>
#include <cstring>

#include "common.h"
#include "fused_batch_norm_grad.spv.h"
#include "fused_batch_norm_grad_f16.spv.h"
#include "fused_batch_norm_grad_f64.spv.h"
#include "fused_batch_norm_grad_sums.spv.h"
#include "fused_batch_norm_grad_sums_f16.spv.h"
#include "fused_batch_norm_grad_sums_f64.spv.h"
#include "fused_batch_norm_grad_sums_v4.spv.h"
#include "fused_batch_norm_grad_sums_v4_f16.spv.h"
#include "fused_batch_norm_grad_sums_v4_f64.spv.h"
#include "fused_batch_norm_grad_v4.spv.h"
#include "fused_batch_norm_grad_v4_f16.spv.h"
#include "fused_batch_norm_grad_v4_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

BatchNormPush batch_norm_push(const BatchNormParams& p, const Split& split);  // batch_norm_stats.cpp

namespace {

template <class T, class U = Compute<T>>
Status batch_norm_grad(Context& ctx, const BatchNormParams& p, const T* dy, const T* x, const U* scale, const U* mean,
                       const U* variance, T* dx, U* dscale, U* doffset) {
  if (p.channels == 0) return Status::OK();
  const int64_t n = p.rows * p.channels;
  GRADRT_RETURN_IF_ERROR(check_int32("fused_batch_norm_grad", {n, 2 * p.channels}));
  // Sums: workgroups of l.cols channels (v4: channel quads) x l.lanes row lanes; rows split so
  // that ~1024 workgroups run, bounded by the partial buffer (64 MiB).
  const bool v4 = vec4_shaders(p.channels);
  const Lanes l = v4 ? quad_lanes(ctx, p.channels / 4) : lanes(ctx);
  const uint32_t gx = group_count(ctx, v4 ? p.channels / 4 : p.channels, l.cols, 0);
  const int64_t max_splits = std::max<int64_t>(1, (int64_t{64} << 20) / (2 * int64_t(sizeof(U)) * p.channels));
  const Split split = split_reduction(p.rows, std::min(lane_splits(p.rows, gx, l), max_splits), 1);
  BatchNormPush push = batch_norm_push(p, split);
  const Kernel *k_sums = nullptr, *k_final = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(v4 ? GRADRT_VK_SHADER3(T, fused_batch_norm_grad_sums_v4, 4, BatchNormPush)
                                       : GRADRT_VK_SHADER3(T, fused_batch_norm_grad_sums, 4, BatchNormPush),
                                    l.spec(), &k_sums));
  GRADRT_RETURN_IF_ERROR(ctx.kernel(v4 ? GRADRT_VK_SHADER3(T, fused_batch_norm_grad_v4, 9, BatchNormPush)
                                       : GRADRT_VK_SHADER3(T, fused_batch_norm_grad, 9, BatchNormPush),
                                    l.spec(), &k_final));
  Job job(ctx);
  const size_t cb = sizeof(U) * p.channels;
  int bdy, bx, bscale, bmean, bvar, bdx, bdscale, bdoffset, bpartial, bsums;
  GRADRT_RETURN_IF_ERROR(job.input(dy, sizeof(T) * n, &bdy));
  GRADRT_RETURN_IF_ERROR(job.input(x, sizeof(T) * n, &bx));
  GRADRT_RETURN_IF_ERROR(job.input(scale, cb, &bscale));
  GRADRT_RETURN_IF_ERROR(job.input(mean, cb, &bmean));
  GRADRT_RETURN_IF_ERROR(job.input(variance, cb, &bvar));
  GRADRT_RETURN_IF_ERROR(job.output(dx, sizeof(T) * n, &bdx));
  GRADRT_RETURN_IF_ERROR(job.output(dscale, cb, &bdscale));
  GRADRT_RETURN_IF_ERROR(job.output(doffset, cb, &bdoffset));
  GRADRT_RETURN_IF_ERROR(job.scratch(2 * cb * split.splits, &bpartial));
  GRADRT_RETURN_IF_ERROR(job.scratch(2 * cb, &bsums));
  GRADRT_RETURN_IF_ERROR(job.dispatch(*k_sums, {bdy, bx, bmean, bpartial}, push, gx,
      group_count(ctx, split.splits, 1, 1)));
  GRADRT_RETURN_IF_ERROR(sum_partials<U>(ctx, job, bpartial, bsums, 2 * p.channels, split.splits, 1.0f));
  // dx: channels x row lanes, each lane ~16 rows (v4: ~8 rows of a quad, twice the scalar
  // lane's bytes, and more workgroups in flight for few channels).
  const int64_t rows_per_lane = v4 ? 8 : 16;
  GRADRT_RETURN_IF_ERROR(job.dispatch(*k_final, {bdy, bx, bscale, bmean, bvar, bsums, bdx, bdscale, bdoffset}, push,
      gx, group_count(ctx, p.rows, rows_per_lane * l.lanes, 1)));
  return job.run();
}

}  // namespace

template <class T>
Status fused_batch_norm_grad(Context& ctx, const BatchNormParams& p, const T* dy, const T* x, const T* scale,
                             const T* mean, const T* variance, T* dx, T* dscale, T* doffset) {
  return batch_norm_grad<T>(ctx, p, dy, x, scale, mean, variance, dx, dscale, doffset);
}

template Status fused_batch_norm_grad<float>(Context&, const BatchNormParams&, const float*, const float*, const float*, const float*, const float*, float*, float*, float*);
template Status fused_batch_norm_grad<double>(Context&, const BatchNormParams&, const double*, const double*, const double*, const double*, const double*, double*, double*, double*);

Status fused_batch_norm_grad(Context& ctx, const BatchNormParams& p, const uint16_t* dy, const uint16_t* x,
                             const float* scale, const float* mean, const float* variance, uint16_t* dx,
                             float* dscale, float* doffset) {
  return batch_norm_grad<uint16_t>(ctx, p, dy, x, scale, mean, variance, dx, dscale, doffset);
}

}  // namespace gradrt::vk

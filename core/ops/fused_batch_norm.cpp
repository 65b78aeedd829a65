// FusedBatchNorm / V2 / V3 forward (ops.md §6.1-6.5): training (batch statistics,
// exponential_avg_factor, Bessel-corrected running variance) and inference.
#include <cmath>
#include <limits>

#include "batch_norm_common.h"
#include "status_macros.h"

namespace gradrt {

namespace {

struct BnInputs {
  const TensorView *x, *scale, *offset, *mean, *variance;
};

template <class T>
Status forward(OpContext& ctx, const BatchNormParams& p, const BatchNormLayout& l, const BnInputs& in,
               Tensor* const out[5]) {
  const int64_t C = l.channels;
  Scratch<T> sx, sscale, soffset, smean, svar, sy;
  const T* x = ctx.load<T>(*in.x, l.rows * C, &sx, l.cf_ptr());
  const T* scale = ctx.load<T>(*in.scale, C, &sscale, nullptr, false);
  const T* offset = ctx.load<T>(*in.offset, C, &soffset, nullptr, false);
  T* y = ctx.output_buffer<T>(out[0], &sy, l.cf_ptr());
  std::vector<T> mean(C), var(C);
  bool need_running = !p.is_training || p.exponential_avg_factor != 1.0f;
  const T* old_mean = need_running ? ctx.load<T>(*in.mean, C, &smean, nullptr, false) : nullptr;
  const T* old_var = need_running ? ctx.load<T>(*in.variance, C, &svar, nullptr, false) : nullptr;

  // Stats and apply on one backend: the choice and thread count follow apply (same cost per
  // element), and so does the workspace (a backend's batch_norm_apply size covers stats too).
  GRADRT_RETURN_IF_ERROR(ctx.run_kernel(Kernel::batch_norm_apply, l.rows * C, &p, [&](Backend* be) {
    if (p.is_training) {
      Status st = be->batch_norm_stats(ctx.exec(), p, x, mean.data(), var.data());
      if (!st.ok()) return st;
      return be->batch_norm_apply(ctx.exec(), p, x, scale, offset, mean.data(), var.data(), y);
    }
    return be->batch_norm_apply(ctx.exec(), p, x, scale, offset, old_mean, old_var, y);
  }));
  ctx.store<T>(y, out[0], l.cf_ptr());

  std::vector<T> batch_mean(C), batch_var(C), rs1(C), rs2(C);
  const double R = double(p.rows), f = p.exponential_avg_factor;
  for (int64_t c = 0; c < C; ++c) {
    if (!p.is_training) {
      batch_mean[c] = rs1[c] = old_mean[c];
      batch_var[c] = rs2[c] = old_var[c];
      continue;
    }
    rs1[c] = mean[c];
    rs2[c] = var[c];
    const T unbiased = T(double(var[c]) * R / std::max(R - 1.0, 1.0));
    batch_mean[c] = f == 1.0 ? mean[c] : T((1 - f) * double(old_mean[c]) + f * double(mean[c]));
    batch_var[c] = f == 1.0 ? unbiased : T((1 - f) * double(old_var[c]) + f * double(unbiased));
  }
  ctx.store<T>(batch_mean.data(), out[1], nullptr, false);
  ctx.store<T>(batch_var.data(), out[2], nullptr, false);
  ctx.store<T>(rs1.data(), out[3], nullptr, false);
  ctx.store<T>(rs2.data(), out[4], nullptr, false);
  return Status::OK();
}

}  // namespace

Status run_fused_batch_norm(OpContext& ctx) {
  const bool v1 = ctx.op() == "FusedBatchNorm", v3 = ctx.op() == "FusedBatchNormV3";
  BnInputs in;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &in.x, &in.scale, &in.offset, &in.mean, &in.variance));
  GRADRT_RETURN_IF_ERROR(v1 ? ctx.resolve_dtype(*in.x, "x", {DType::float32, DType::float64})
      : resolve_float_dtype(ctx, *in.x, "x"));
  const DType U = batch_norm_param_dtype(in.x->dtype);
  for (auto [t, name] : {std::pair{in.scale, "scale"}, {in.offset, "offset"}, {in.mean, "mean"}, {in.variance, "variance"}})
    GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*t, name, U));

  BatchNormParams p;
  double epsilon, factor;
  GRADRT_RETURN_IF_ERROR(ctx.attrs().number("epsilon", &epsilon, 0.0001));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().number("exponential_avg_factor", &factor, 1.0));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().boolean("is_training", &p.is_training, true));
  BatchNormLayout l;
  GRADRT_RETURN_IF_ERROR(batch_norm_layout(ctx, v3, *in.x, "x", &l));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  p.epsilon = static_cast<float>(epsilon);
  p.exponential_avg_factor = static_cast<float>(factor);
  p.rows = l.rows;
  p.channels = l.channels;

  // ops.md §6.3: mean/variance are checked 1-D always, their length only when used.
  if (in.mean->shape.size() != 1) return ctx.error("mean must be 1-dimensional, got shape " + shape_string(in.mean->shape));
  if (in.variance->shape.size() != 1)
    return ctx.error("variance must be 1-dimensional, got shape " + shape_string(in.variance->shape));
  GRADRT_RETURN_IF_ERROR(check_channel_vector(ctx, *in.scale, "scale", l.channels));
  GRADRT_RETURN_IF_ERROR(check_channel_vector(ctx, *in.offset, "offset", l.channels));
  if (!p.is_training || p.exponential_avg_factor != 1.0f) {
    std::string prefix = p.is_training ? "When exponential_avg_factor != 1, " : "When is_training=false, ";
    GRADRT_RETURN_IF_ERROR(check_channel_vector(ctx, *in.mean, "mean", l.channels, prefix));
    GRADRT_RETURN_IF_ERROR(check_channel_vector(ctx, *in.variance, "variance", l.channels, prefix));
  }

  Tensor* out[5];
  const char* names[5] = {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"};
  for (int i = 0; i < 5; ++i)
    GRADRT_RETURN_IF_ERROR(ctx.add_output(names[i], i == 0 ? ctx.dtype() : U, i == 0 ? in.x->shape : std::vector<int64_t>{l.channels},
        &out[i]));
  Tensor* rs3;
  if (v3) GRADRT_RETURN_IF_ERROR(ctx.add_output("reserve_space_3", DType::float32, {0}, &rs3));

  // No deferred tail: a plan runs the whole op (at prepare, the context refuses the data accesses).
  if (l.rows == 0 || l.channels == 0) {
    // ops.md §6.3 step 6: empty x gives an empty y and NaN statistics.
    std::vector<double> nan(l.channels, std::numeric_limits<double>::quiet_NaN());
    for (int i = 1; i < 5; ++i) ctx.store<double>(nan.data(), out[i], nullptr, false);
    return Status::OK();
  }
  return with_compute_type(ctx, [&](auto t) { return forward<decltype(t)>(ctx, p, l, in, out); });
}

}  // namespace gradrt

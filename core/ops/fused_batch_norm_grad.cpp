// FusedBatchNormGrad / V2 / V3 (ops.md §6.7-6.10). reserve_space_1/2 are the forward's
// batch mean and biased variance (training) or the population statistics (inference);
// V3's reserve_space_3 is accepted and ignored. The last two outputs are empty [0].
#include "batch_norm_common.h"
#include "status_macros.h"

namespace gradrt {

namespace {

Status batch_norm_grad_data(OpContext& ctx, const BatchNormParams& p, const BatchNormLayout& l) {
  const TensorView *dy, *x, *scale, *rs1, *rs2;
  GRADRT_RETURN_IF_ERROR(ctx.input("y_backprop", &dy));
  GRADRT_RETURN_IF_ERROR(ctx.input("x", &x));
  GRADRT_RETURN_IF_ERROR(ctx.input("scale", &scale));
  GRADRT_RETURN_IF_ERROR(ctx.input("reserve_space_1", &rs1));
  GRADRT_RETURN_IF_ERROR(ctx.input("reserve_space_2", &rs2));
  Tensor *dx = ctx.output(0), *dscale = ctx.output(1), *doffset = ctx.output(2);
  // float16 x and dy on a backend with float16 storage: the tensors as they are (U = float32).
  bool ran = false;
  Status f16 = ctx.run_f16(Kernel::fused_batch_norm_grad, l.rows * l.channels, &p, !l.channels_first,
                           [&](Backend* be) {
    return be->fused_batch_norm_grad_f16(
        ctx.exec(), p, ctx.input_data<uint16_t>(*dy), ctx.input_data<uint16_t>(*x), ctx.input_data<float>(*scale),
        ctx.input_data<float>(*rs1), ctx.input_data<float>(*rs2), ctx.output_data<uint16_t>(dx),
        ctx.output_data<float>(dscale), ctx.output_data<float>(doffset));
  }, &ran);
  if (ran || !f16.ok()) return f16;
  // Channels-first data as it is when the kernel takes it (p.plane), else transposed around it.
  const ChannelsFirst* cf = p.plane > 0 ? nullptr : l.cf_ptr();
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    const int64_t C = l.channels;
    Scratch<T> sdy, sx, sscale, smean, svar, sdx, sds, sdo;
    const T* g = ctx.load<T>(*dy, l.rows * C, &sdy, cf);
    const T* in = ctx.load<T>(*x, l.rows * C, &sx, cf);
    const T* sc = ctx.load<T>(*scale, C, &sscale, nullptr, false);
    const T* mean = ctx.load<T>(*rs1, C, &smean, nullptr, false);
    const T* var = ctx.load<T>(*rs2, C, &svar, nullptr, false);
    T* out = ctx.output_buffer<T>(dx, &sdx, cf);
    // The sums straight into the outputs when U == T (float32, float64: also a device tensor's
    // key in a Sequence); else into scratch that store() converts (float16/bfloat16 x, U float32).
    T* ds = ctx.output_buffer<T>(dscale, &sds, nullptr, false);
    T* doff = ctx.output_buffer<T>(doffset, &sdo, nullptr, false);
    Status st = ctx.run_kernel(Kernel::fused_batch_norm_grad, l.rows * C, &p, [&](Backend* be) {
      return be->fused_batch_norm_grad(ctx.exec(), p, g, in, sc, mean, var, out, ds, doff);
    });
    if (!st.ok()) return st;
    ctx.store<T>(out, dx, cf);
    ctx.store<T>(ds, dscale, nullptr, false);
    ctx.store<T>(doff, doffset, nullptr, false);
    return Status::OK();
  });
}

}  // namespace

Status run_fused_batch_norm_grad(OpContext& ctx) {
  const bool v1 = ctx.op() == "FusedBatchNormGrad", v3 = ctx.op() == "FusedBatchNormGradV3";
  const TensorView *dy, *x, *scale, *rs1, *rs2, *rs3;
  GRADRT_RETURN_IF_ERROR(ctx.input("y_backprop", &dy));
  GRADRT_RETURN_IF_ERROR(ctx.input("x", &x));
  GRADRT_RETURN_IF_ERROR(ctx.input("scale", &scale));
  GRADRT_RETURN_IF_ERROR(ctx.input("reserve_space_1", &rs1));
  GRADRT_RETURN_IF_ERROR(ctx.input("reserve_space_2", &rs2));
  if (v3) GRADRT_RETURN_IF_ERROR(ctx.input("reserve_space_3", &rs3));
  GRADRT_RETURN_IF_ERROR(v1 ? ctx.resolve_dtype(*x, "x", {DType::float32, DType::float64})
      : resolve_float_dtype(ctx, *x, "x"));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "y_backprop", x->dtype));
  const DType U = batch_norm_param_dtype(x->dtype);
  for (auto [t, name] : {std::pair{scale, "scale"}, {rs1, "reserve_space_1"}, {rs2, "reserve_space_2"}})
    GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*t, name, U));

  BatchNormParams p;
  double epsilon;
  GRADRT_RETURN_IF_ERROR(ctx.attrs().number("epsilon", &epsilon, 0.0001));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().boolean("is_training", &p.is_training, true));
  BatchNormLayout l;
  GRADRT_RETURN_IF_ERROR(batch_norm_layout(ctx, v3, *dy, "y_backprop", &l));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  p.epsilon = static_cast<float>(epsilon);
  p.rows = l.rows;
  p.channels = l.channels;
  if (x->shape != dy->shape)
    return ctx.error("x and y_backprop must have same shape, but x has shape " + shape_string(x->shape) +
                     " and y_backprop has shape " + shape_string(dy->shape));
  GRADRT_RETURN_IF_ERROR(check_channel_vector(ctx, *scale, "scale", l.channels));
  GRADRT_RETURN_IF_ERROR(check_channel_vector(ctx, *rs1, "reserve_space_1", l.channels));
  GRADRT_RETURN_IF_ERROR(check_channel_vector(ctx, *rs2, "reserve_space_2", l.channels));

  Tensor *dx, *dscale, *doffset, *e1, *e2;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("x_backprop", ctx.dtype(), x->shape, &dx));
  GRADRT_RETURN_IF_ERROR(ctx.add_output("scale_backprop", U, {l.channels}, &dscale));
  GRADRT_RETURN_IF_ERROR(ctx.add_output("offset_backprop", U, {l.channels}, &doffset));
  GRADRT_RETURN_IF_ERROR(ctx.add_output(v3 ? "reserve_space_4" : "reserve_space_3", DType::float32, {0}, &e1));
  GRADRT_RETURN_IF_ERROR(ctx.add_output(v3 ? "reserve_space_5" : "reserve_space_4", DType::float32, {0}, &e2));
  if (l.rows == 0 || l.channels == 0) return Status::OK();  // empty x: empty dx, zero sums
  // NCHW / NCDHW on the cpu backend: its kernel reads the [N, C, plane] data in place (no
  // transposes of dy and x, none of dx back); other backends get channels last.
  if (l.channels_first && ctx.runs_on_cpu(Kernel::fused_batch_norm_grad, l.rows * l.channels))
    p.plane = l.cf.inner;

  // The data phase (a plan's run): inputs and outputs fetched again, p and l by value.
  const KernelQuery q{Kernel::fused_batch_norm_grad, ctx.compute_double() ? DType::float64 : DType::float32, &p,
                      l.rows * l.channels, l.rows * l.channels};
  return ctx.defer(q, [p, l](OpContext& c) { return batch_norm_grad_data(c, p, l); });
}

}  // namespace gradrt

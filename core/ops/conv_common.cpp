#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status read_sizes(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out) {
  GRADRT_RETURN_IF_ERROR(ctx.int_vector(t, name, out));
  for (size_t i = 0; i < out->size(); ++i)
    if ((*out)[i] < 0)
      return ctx.error("Dimension " + std::to_string(i) + " of " + name + " must be >= 0, got " +
                       std::to_string((*out)[i]));
  int64_t n;
  return checked_num_elements(*out, ctx.op() + ": " + name, &n);
}

Status run_conv_forward(OpContext& ctx, bool depthwise) {
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), depthwise ? ConvOpKind::kDepthwise : ConvOpKind::kConv2D, !depthwise, &spec));
  const TensorView *x, *w;
  GRADRT_RETURN_IF_ERROR(ctx.input("input", &x));
  GRADRT_RETURN_IF_ERROR(ctx.input("filter", &w));
  GRADRT_RETURN_IF_ERROR(ctx.resolve_dtype(*x, "input", {DType::float16, DType::bfloat16, DType::float32, DType::float64}));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*w, "filter", x->dtype));
  ConvParams p;
  std::vector<int64_t> y_shape;
  GRADRT_RETURN_IF_ERROR(depthwise ? resolve_depthwise(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape)
      : resolve_conv(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  Tensor* y;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), y_shape, &y));
  const ConvOperands operands{.spec = spec, .p = p, .depthwise = depthwise, .a = {*x, ConvRole::kX},
                              .b = {*w, ConvRole::kW}, .out = {y, ConvRole::kDy}};
  return run_conv_kernel(ctx, depthwise ? Kernel::depthwise_conv2d_native : Kernel::conv2d, operands,
                         [&](Backend* be, auto* in, auto* f, auto* out) {
                           return depthwise ? be->depthwise_conv2d_native(ctx.exec(), p, in, f, out)
                                            : be->conv2d(ctx.exec(), p, in, f, out);
                         });
}

}  // namespace gradrt

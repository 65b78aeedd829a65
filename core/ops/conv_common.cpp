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

Status read_sizes4(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out) {
  GRADRT_RETURN_IF_ERROR(read_sizes(ctx, t, name, out));
  if (out->size() != 4) return ctx.error(std::string(name) + " must contain 4 values, got " + std::to_string(out->size()));
  return Status::OK();
}

Status run_conv_forward(OpContext& ctx, bool depthwise) {
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), depthwise ? ConvOpKind::kDepthwise : ConvOpKind::kConv2D, !depthwise, &spec));
  const TensorView *x, *w;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &x, &w));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *x, "input"));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*w, "filter", x->dtype));
  ConvParams p;
  std::vector<int64_t> y_shape;
  GRADRT_RETURN_IF_ERROR(depthwise ? resolve_depthwise(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape)
      : resolve_conv(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape));
  return finish_conv(ctx, depthwise ? Kernel::depthwise_conv2d_native : Kernel::conv2d,
                     {.spec = spec, .p = p, .depthwise = depthwise, .a = {*x, ConvRole::kX}, .b = {*w, ConvRole::kW},
                      .out = {nullptr, ConvRole::kDy}}, y_shape);
}

}  // namespace gradrt

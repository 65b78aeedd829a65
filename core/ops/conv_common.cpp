#include "ops.h"

namespace gradrt {

Status read_sizes(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out) {
  Status s = ctx.int_vector(t, name, out);
  if (!s.ok()) return s;
  for (size_t i = 0; i < out->size(); ++i)
    if ((*out)[i] < 0)
      return ctx.error("Dimension " + std::to_string(i) + " of " + name + " must be >= 0, got " +
                       std::to_string((*out)[i]));
  int64_t n;
  return checked_num_elements(*out, ctx.op() + ": " + name, &n);
}

Status run_conv_forward(OpContext& ctx, bool depthwise) {
  ConvSpec spec;
  Status s = decode_conv_spec(ctx.attrs(), depthwise ? ConvOpKind::kDepthwise : ConvOpKind::kConv2D, !depthwise, &spec);
  if (!s.ok()) return s;
  const TensorView *x, *w;
  if (!(s = ctx.input("input", &x)).ok()) return s;
  if (!(s = ctx.input("filter", &w)).ok()) return s;
  if (!(s = ctx.resolve_dtype(*x, "input", {DType::float16, DType::bfloat16, DType::float32, DType::float64})).ok())
    return s;
  if (!(s = ctx.expect_dtype(*w, "filter", x->dtype)).ok()) return s;
  ConvParams p;
  std::vector<int64_t> y_shape;
  s = depthwise ? resolve_depthwise(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape)
                : resolve_conv(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape);
  if (!s.ok()) return s;
  if (!(s = ctx.attrs().check_unknown()).ok()) return s;
  Tensor* y;
  if (!(s = ctx.add_output("output", ctx.dtype(), y_shape, &y)).ok()) return s;
  return run_conv_kernel(ctx, depthwise ? "depthwise_conv2d_native" : "conv2d", spec, p, depthwise, *x, ConvRole::kX, *w,
                         ConvRole::kW, y, ConvRole::kDy, [&](Backend* be, auto* in, auto* f, auto* out) {
                           return depthwise ? be->depthwise_conv2d_native(ctx.exec(), p, in, f, out)
                                            : be->conv2d(ctx.exec(), p, in, f, out);
                         });
}

}  // namespace gradrt

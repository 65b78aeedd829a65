// Conv2DBackpropFilter / Conv2DBackpropFilterV2 (ops.md §3; policy 1-4): dw = x^T * dy.
#include "ops.h"

namespace gradrt {

Status run_conv2d_backprop_filter(OpContext& ctx) {
  const bool v2 = ctx.op() == "Conv2DBackpropFilterV2";
  ConvSpec spec;
  Status s = decode_conv_spec(ctx.attrs(), ConvOpKind::kBackpropFilter, true, &spec);
  if (!s.ok()) return s;
  const TensorView *x, *sizes, *dy;
  if (!(s = ctx.input("input", &x)).ok()) return s;
  if (!(s = ctx.input(v2 ? "filter" : "filter_sizes", &sizes)).ok()) return s;
  if (!(s = ctx.input("out_backprop", &dy)).ok()) return s;
  if (!(s = ctx.resolve_dtype(*x, "input", {DType::float16, DType::bfloat16, DType::float32, DType::float64})).ok())
    return s;
  if (!(s = ctx.expect_dtype(*dy, "out_backprop", x->dtype)).ok()) return s;
  std::vector<int64_t> filter_shape;
  if (v2) {
    if (!(s = ctx.expect_dtype(*sizes, "filter", x->dtype)).ok()) return s;
    filter_shape = sizes->shape;
  } else if (!(s = read_sizes(ctx, *sizes, "filter_sizes", &filter_shape)).ok()) {
    return s;
  }
  if (filter_shape.size() != 4)
    return ctx.error(std::string(v2 ? "filter" : "filter_sizes") + " must describe a 4-dimensional filter, got " +
                     shape_string(filter_shape));

  ConvParams p;
  if (!(s = resolve_conv(ctx.op(), spec, x->shape, filter_shape, &dy->shape, &p, nullptr)).ok()) return s;
  if (!(s = ctx.attrs().check_unknown()).ok()) return s;
  Tensor* dw;
  if (!(s = ctx.add_output("output", ctx.dtype(), filter_shape, &dw)).ok()) return s;
  return run_conv_kernel(ctx, "conv2d_backprop_filter", spec, p, false, *x, ConvRole::kX, *dy, ConvRole::kDy, dw,
                         ConvRole::kW, [&](Backend* be, auto* in, auto* g, auto* out) {
                           return be->conv2d_backprop_filter(ctx.exec(), p, in, g, out);
                         });
}

}  // namespace gradrt

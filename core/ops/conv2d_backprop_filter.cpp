// Conv2DBackpropFilter / Conv2DBackpropFilterV2 (ops.md §3; policy 1-4): dw = x^T * dy.
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_conv2d_backprop_filter(OpContext& ctx) {
  const bool v2 = ctx.op() == "Conv2DBackpropFilterV2";
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), ConvOpKind::kBackpropFilter, true, &spec));
  const TensorView *x, *sizes, *dy;
  GRADRT_RETURN_IF_ERROR(ctx.input("input", &x));
  GRADRT_RETURN_IF_ERROR(ctx.input(v2 ? "filter" : "filter_sizes", &sizes));
  GRADRT_RETURN_IF_ERROR(ctx.input("out_backprop", &dy));
  GRADRT_RETURN_IF_ERROR(ctx.resolve_dtype(*x, "input", {DType::float16, DType::bfloat16, DType::float32, DType::float64}));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "out_backprop", x->dtype));
  std::vector<int64_t> filter_shape;
  if (v2) {
    GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*sizes, "filter", x->dtype));
    filter_shape = sizes->shape;
  } else {
    GRADRT_RETURN_IF_ERROR(read_sizes(ctx, *sizes, "filter_sizes", &filter_shape));
  }
  if (filter_shape.size() != 4)
    return ctx.error(std::string(v2 ? "filter" : "filter_sizes") + " must describe a 4-dimensional filter, got " +
                     shape_string(filter_shape));

  ConvParams p;
  GRADRT_RETURN_IF_ERROR(resolve_conv(ctx.op(), spec, x->shape, filter_shape, &dy->shape, &p, nullptr));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  Tensor* dw;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), filter_shape, &dw));
  const ConvOperands operands{.spec = spec, .p = p, .a = {*x, ConvRole::kX}, .b = {*dy, ConvRole::kDy},
                              .out = {dw, ConvRole::kW}};
  return run_conv_kernel(ctx, Kernel::conv2d_backprop_filter, operands, [&](Backend* be, auto* in, auto* g, auto* out) {
    return be->conv2d_backprop_filter(ctx.exec(), p, in, g, out);
  });
}

}  // namespace gradrt

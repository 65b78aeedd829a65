// DepthwiseConv2dNativeBackpropInput (ops.md §4.3; policy 1 and 8.5).
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_depthwise_conv2d_native_backprop_input(OpContext& ctx) {
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), ConvOpKind::kDepthwise, false, &spec));
  const TensorView *sizes, *w, *dy;
  GRADRT_RETURN_IF_ERROR(ctx.input("input_sizes", &sizes));
  GRADRT_RETURN_IF_ERROR(ctx.input("filter", &w));
  GRADRT_RETURN_IF_ERROR(ctx.input("out_backprop", &dy));
  GRADRT_RETURN_IF_ERROR(ctx.resolve_dtype(*w, "filter", {DType::float16, DType::bfloat16, DType::float32, DType::float64}));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "out_backprop", w->dtype));
  std::vector<int64_t> input_shape;
  GRADRT_RETURN_IF_ERROR(read_sizes(ctx, *sizes, "input_sizes", &input_shape));
  if (input_shape.size() != 4)
    return ctx.error("input_sizes must contain 4 values, got " + std::to_string(input_shape.size()));
  ConvParams p;
  GRADRT_RETURN_IF_ERROR(resolve_depthwise(ctx.op(), spec, input_shape, w->shape, &dy->shape, &p, nullptr));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  Tensor* dx;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), input_shape, &dx));
  const ConvOperands operands{.spec = spec, .p = p, .depthwise = true, .a = {*w, ConvRole::kW}, .b = {*dy, ConvRole::kDy},
                              .out = {dx, ConvRole::kX}};
  return run_conv_kernel(ctx, Kernel::depthwise_conv2d_native_backprop_input, operands, [&](Backend* be, auto* f, auto* g, auto* out) {
    return be->depthwise_conv2d_native_backprop_input(ctx.exec(), p, f, g, out);
  });
}

}  // namespace gradrt

// DepthwiseConv2dNativeBackpropFilter (ops.md §4.3; policy 1 and 8.5: empty out_backprop
// gives zeros, never uninitialised memory).
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_depthwise_conv2d_native_backprop_filter(OpContext& ctx) {
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), ConvOpKind::kDepthwise, false, &spec));
  const TensorView *x, *sizes, *dy;
  GRADRT_RETURN_IF_ERROR(ctx.input("input", &x));
  GRADRT_RETURN_IF_ERROR(ctx.input("filter_sizes", &sizes));
  GRADRT_RETURN_IF_ERROR(ctx.input("out_backprop", &dy));
  GRADRT_RETURN_IF_ERROR(ctx.resolve_dtype(*x, "input", {DType::float16, DType::bfloat16, DType::float32, DType::float64}));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "out_backprop", x->dtype));
  std::vector<int64_t> filter_shape;
  GRADRT_RETURN_IF_ERROR(read_sizes(ctx, *sizes, "filter_sizes", &filter_shape));
  if (filter_shape.size() != 4)
    return ctx.error("filter_sizes must contain 4 values, got " + std::to_string(filter_shape.size()));
  ConvParams p;
  GRADRT_RETURN_IF_ERROR(resolve_depthwise(ctx.op(), spec, x->shape, filter_shape, &dy->shape, &p, nullptr));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  Tensor* dw;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), filter_shape, &dw));
  const ConvOperands operands{.spec = spec, .p = p, .depthwise = true, .a = {*x, ConvRole::kX}, .b = {*dy, ConvRole::kDy},
                              .out = {dw, ConvRole::kW}};
  return run_conv_kernel(ctx, Kernel::depthwise_conv2d_native_backprop_filter, operands, [&](Backend* be, auto* in, auto* g, auto* out) {
    return be->depthwise_conv2d_native_backprop_filter(ctx.exec(), p, in, g, out);
  });
}

}  // namespace gradrt

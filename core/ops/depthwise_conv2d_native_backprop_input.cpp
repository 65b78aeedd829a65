// DepthwiseConv2dNativeBackpropInput (ops.md §4.3; policy 1 and 8.5).
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_depthwise_conv2d_native_backprop_input(OpContext& ctx) {
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), ConvOpKind::kDepthwise, false, &spec));
  const TensorView *sizes, *w, *dy;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &sizes, &w, &dy));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *w, "filter"));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "out_backprop", w->dtype));
  std::vector<int64_t> input_shape;
  GRADRT_RETURN_IF_ERROR(read_sizes4(ctx, *sizes, "input_sizes", &input_shape));
  ConvParams p;
  GRADRT_RETURN_IF_ERROR(resolve_depthwise(ctx.op(), spec, input_shape, w->shape, &dy->shape, &p, nullptr));
  return finish_conv(ctx, Kernel::depthwise_conv2d_native_backprop_input,
                     {.spec = spec, .p = p, .depthwise = true, .a = {*w, ConvRole::kW}, .b = {*dy, ConvRole::kDy},
                      .out = {nullptr, ConvRole::kX}}, input_shape);
}

}  // namespace gradrt

// DepthwiseConv2dNativeBackpropFilter (ops.md §4.3; policy 1 and 8.5: empty out_backprop
// gives zeros, never uninitialised memory).
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_depthwise_conv2d_native_backprop_filter(OpContext& ctx) {
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), ConvOpKind::kDepthwise, false, &spec));
  const TensorView *x, *sizes, *dy;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &x, &sizes, &dy));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *x, "input"));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "out_backprop", x->dtype));
  std::vector<int64_t> filter_shape;
  GRADRT_RETURN_IF_ERROR(read_sizes4(ctx, *sizes, "filter_sizes", &filter_shape));
  ConvParams p;
  GRADRT_RETURN_IF_ERROR(resolve_depthwise(ctx.op(), spec, x->shape, filter_shape, &dy->shape, &p, nullptr));
  return finish_conv(ctx, Kernel::depthwise_conv2d_native_backprop_filter,
                     {.spec = spec, .p = p, .depthwise = true, .a = {*x, ConvRole::kX}, .b = {*dy, ConvRole::kDy},
                      .out = {nullptr, ConvRole::kW}}, filter_shape);
}

}  // namespace gradrt

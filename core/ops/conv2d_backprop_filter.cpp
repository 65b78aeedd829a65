// Conv2DBackpropFilter / Conv2DBackpropFilterV2 (ops.md §3; policy 1-4): dw = x^T * dy.
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_conv2d_backprop_filter(OpContext& ctx) {
  const bool v2 = ctx.op() == "Conv2DBackpropFilterV2";
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), ConvOpKind::kBackpropFilter, true, &spec));
  const TensorView *x, *sizes, *dy;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &x, &sizes, &dy));  // sizes: V2's filter tensor
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *x, "input"));
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
  return finish_conv(ctx, Kernel::conv2d_backprop_filter,
                     {.spec = spec, .p = p, .a = {*x, ConvRole::kX}, .b = {*dy, ConvRole::kDy},
                      .out = {nullptr, ConvRole::kW}}, filter_shape);
}

}  // namespace gradrt

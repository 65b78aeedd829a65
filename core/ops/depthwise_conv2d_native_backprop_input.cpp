// DepthwiseConv2dNativeBackpropInput (ops.md §4.3; policy 1 and 8.5).
#include "ops.h"

namespace gradrt {

Status run_depthwise_conv2d_native_backprop_input(OpContext& ctx) {
  ConvSpec spec;
  Status s = decode_conv_spec(ctx.attrs(), ConvOpKind::kDepthwise, false, &spec);
  if (!s.ok()) return s;
  const TensorView *sizes, *w, *dy;
  if (!(s = ctx.input("input_sizes", &sizes)).ok()) return s;
  if (!(s = ctx.input("filter", &w)).ok()) return s;
  if (!(s = ctx.input("out_backprop", &dy)).ok()) return s;
  if (!(s = ctx.resolve_dtype(*w, "filter", {DType::float16, DType::bfloat16, DType::float32, DType::float64})).ok())
    return s;
  if (!(s = ctx.expect_dtype(*dy, "out_backprop", w->dtype)).ok()) return s;
  std::vector<int64_t> input_shape;
  if (!(s = read_sizes(ctx, *sizes, "input_sizes", &input_shape)).ok()) return s;
  if (input_shape.size() != 4)
    return ctx.error("input_sizes must contain 4 values, got " + std::to_string(input_shape.size()));
  ConvParams p;
  if (!(s = resolve_depthwise(ctx.op(), spec, input_shape, w->shape, &dy->shape, &p, nullptr)).ok()) return s;
  if (!(s = ctx.attrs().check_unknown()).ok()) return s;
  Tensor* dx;
  if (!(s = ctx.add_output("output", ctx.dtype(), input_shape, &dx)).ok()) return s;
  return run_conv_kernel(ctx, "depthwise_conv2d_native_backprop_input", spec, p, true, *w, ConvRole::kW, *dy,
                         ConvRole::kDy, dx, ConvRole::kX, [&](Backend* be, auto* f, auto* g, auto* out) {
                           return be->depthwise_conv2d_native_backprop_input(ctx.exec(), p, f, g, out);
                         });
}

}  // namespace gradrt

// DepthwiseConv2dNativeBackpropFilter (ops.md §4.3; policy 1 and 8.5: empty out_backprop
// gives zeros, never uninitialised memory).
#include "ops.h"

namespace gradrt {

Status run_depthwise_conv2d_native_backprop_filter(OpContext& ctx) {
  ConvSpec spec;
  Status s = decode_conv_spec(ctx.attrs(), ConvOpKind::kDepthwise, false, &spec);
  if (!s.ok()) return s;
  const TensorView *x, *sizes, *dy;
  if (!(s = ctx.input("input", &x)).ok()) return s;
  if (!(s = ctx.input("filter_sizes", &sizes)).ok()) return s;
  if (!(s = ctx.input("out_backprop", &dy)).ok()) return s;
  if (!(s = ctx.resolve_dtype(*x, "input", {DType::float16, DType::bfloat16, DType::float32, DType::float64})).ok())
    return s;
  if (!(s = ctx.expect_dtype(*dy, "out_backprop", x->dtype)).ok()) return s;
  std::vector<int64_t> filter_shape;
  if (!(s = read_sizes(ctx, *sizes, "filter_sizes", &filter_shape)).ok()) return s;
  if (filter_shape.size() != 4)
    return ctx.error("filter_sizes must contain 4 values, got " + std::to_string(filter_shape.size()));
  ConvParams p;
  if (!(s = resolve_depthwise(ctx.op(), spec, x->shape, filter_shape, &dy->shape, &p, nullptr)).ok()) return s;
  if (!(s = ctx.attrs().check_unknown()).ok()) return s;
  Tensor* dw;
  if (!(s = ctx.add_output("output", ctx.dtype(), filter_shape, &dw)).ok()) return s;
  return run_conv_kernel(ctx, "depthwise_conv2d_native_backprop_filter", spec, p, true, *x, ConvRole::kX, *dy,
                         ConvRole::kDy, dw, ConvRole::kW, [&](Backend* be, auto* in, auto* g, auto* out) {
                           return be->depthwise_conv2d_native_backprop_filter(ctx.exec(), p, in, g, out);
                         });
}

}  // namespace gradrt

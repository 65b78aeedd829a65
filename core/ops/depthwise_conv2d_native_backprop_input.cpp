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
  if (dx->num_elements() == 0 || p.dw_w_elements() == 0 || p.y_elements() == 0) return Status::OK();

  ChannelsFirst cf_dy = nchw_of(p.batch, p.out_c, p.out_h, p.out_w), cf_dx = nchw_of(p.batch, p.in_c, p.in_h, p.in_w);
  int64_t work = p.y_elements() * p.filter_h * p.filter_w;
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    return run_binary<T>(ctx, "depthwise_conv2d_native_backprop_input", work, *w, p.dw_w_elements(), nullptr, *dy,
                         p.y_elements(), spec.nchw ? &cf_dy : nullptr, dx, spec.nchw ? &cf_dx : nullptr,
                         [&](Backend* be, const T* f, const T* g, T* out) {
                           return be->depthwise_conv2d_native_backprop_input(ctx.exec(), p, f, g, out);
                         });
  });
}

}  // namespace gradrt

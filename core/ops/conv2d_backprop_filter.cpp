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
  // Empty filter: empty result. Empty input or out_backprop: a sum over nothing (zeros).
  if (dw->num_elements() == 0 || p.x_elements() == 0 || p.y_elements() == 0) return Status::OK();

  ChannelsFirst cf_x = nchw_of(p.batch, p.in_c, p.in_h, p.in_w), cf_dy = nchw_of(p.batch, p.out_c, p.out_h, p.out_w);
  const ChannelsFirst* cfx = spec.nchw ? &cf_x : nullptr;
  const ChannelsFirst* cfy = spec.nchw ? &cf_dy : nullptr;
  int64_t work = p.y_elements() * p.filter_h * p.filter_w * p.filter_in_c;
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    return run_binary<T>(ctx, "conv2d_backprop_filter", work, *x, p.x_elements(), cfx, *dy, p.y_elements(), cfy, dw,
                         nullptr, [&](Backend* be, const T* in, const T* g, T* out) {
                           return be->conv2d_backprop_filter(ctx.exec(), p, in, g, out);
                         });
  });
}

}  // namespace gradrt

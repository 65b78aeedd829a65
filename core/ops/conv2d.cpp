// Conv2D, the forward op the conv gradients differentiate (ops.md §1.5).
#include "ops.h"

namespace gradrt {

Status run_conv2d(OpContext& ctx) {
  ConvSpec spec;
  Status s = decode_conv_spec(ctx.attrs(), ConvOpKind::kConv2D, true, &spec);
  if (!s.ok()) return s;
  const TensorView *x, *w;
  if (!(s = ctx.input("input", &x)).ok()) return s;
  if (!(s = ctx.input("filter", &w)).ok()) return s;
  if (!(s = ctx.resolve_dtype(*x, "input", {DType::float16, DType::bfloat16, DType::float32, DType::float64})).ok())
    return s;
  if (!(s = ctx.expect_dtype(*w, "filter", x->dtype)).ok()) return s;
  ConvParams p;
  std::vector<int64_t> y_shape;
  if (!(s = resolve_conv(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape)).ok()) return s;
  if (!(s = ctx.attrs().check_unknown()).ok()) return s;
  Tensor* y;
  if (!(s = ctx.add_output("output", ctx.dtype(), y_shape, &y)).ok()) return s;
  if (y->num_elements() == 0 || p.x_elements() == 0 || p.w_elements() == 0) return Status::OK();

  ChannelsFirst cf_x = nchw_of(p.batch, p.in_c, p.in_h, p.in_w), cf_y = nchw_of(p.batch, p.out_c, p.out_h, p.out_w);
  int64_t work = p.y_elements() * p.filter_h * p.filter_w * p.filter_in_c;
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    return run_binary<T>(ctx, "conv2d", work, *x, p.x_elements(), spec.nchw ? &cf_x : nullptr, *w, p.w_elements(),
                         nullptr, y, spec.nchw ? &cf_y : nullptr,
                         [&](Backend* be, const T* in, const T* f, T* out) { return be->conv2d(ctx.exec(), p, in, f, out); });
  });
}

}  // namespace gradrt

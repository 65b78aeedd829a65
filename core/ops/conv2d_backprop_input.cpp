// Conv2DBackpropInput / Conv2DBackpropInputV2 (ops.md §2; policy 1-4): dx = conv2d^T(w, dy).
#include "ops.h"

namespace gradrt {

namespace {

// ops.md §2.2: input_sizes holds 4 dims (data_format order) or 2 (H, W: N from
// out_backprop, C from the filter). The filter's rank was checked before this reads it.
Status input_shape_from_sizes(OpContext& ctx, const ConvSpec& spec, const TensorView& sizes,
                              const TensorView& filter, const TensorView& dy, std::vector<int64_t>* shape) {
  std::vector<int64_t> v;
  Status s = read_sizes(ctx, sizes, "input_sizes", &v);
  if (!s.ok()) return s;
  if (v.size() == 4) {
    *shape = v;
  } else if (v.size() == 2) {
    *shape = to_format(spec, dy.shape[0], v[0], v[1], filter.shape[2]);
  } else {
    return ctx.error("input_sizes must contain 4 values or 2 values, but got: " + std::to_string(v.size()));
  }
  int64_t n;
  return checked_num_elements(*shape, ctx.op() + ": input_sizes", &n);
}

}  // namespace

Status run_conv2d_backprop_input(OpContext& ctx) {
  const bool v2 = ctx.op() == "Conv2DBackpropInputV2";
  ConvSpec spec;
  Status s = decode_conv_spec(ctx.attrs(), ConvOpKind::kBackpropInput, true, &spec);
  if (!s.ok()) return s;
  const TensorView *sizes, *filter, *dy;
  if (!(s = ctx.input(v2 ? "input" : "input_sizes", &sizes)).ok()) return s;
  if (!(s = ctx.input("filter", &filter)).ok()) return s;
  if (!(s = ctx.input("out_backprop", &dy)).ok()) return s;
  if (filter->dtype == DType::int32) return ctx.unimplemented("int32 is not supported; use a floating dtype");
  if (!(s = ctx.resolve_dtype(*filter, "filter",
                              {DType::float16, DType::bfloat16, DType::float32, DType::float64})).ok())
    return s;
  if (!(s = ctx.expect_dtype(*dy, "out_backprop", filter->dtype)).ok()) return s;
  if (v2 && !(s = ctx.expect_dtype(*sizes, "input", filter->dtype)).ok()) return s;
  // Ranks first: the 2-value input_sizes form reads filter dim 2 and out_backprop dim 0.
  if (dy->shape.size() != 4) return ctx.error("out_backprop must be 4-dimensional, got shape " + shape_string(dy->shape));
  if (filter->shape.size() != 4) return ctx.error("filter must be 4-dimensional, got shape " + shape_string(filter->shape));
  std::vector<int64_t> input_shape;
  if (v2) input_shape = sizes->shape;
  else if (!(s = input_shape_from_sizes(ctx, spec, *sizes, *filter, *dy, &input_shape)).ok()) return s;

  ConvParams p;
  if (!(s = resolve_conv(ctx.op(), spec, input_shape, filter->shape, &dy->shape, &p, nullptr)).ok()) return s;
  if (!(s = ctx.attrs().check_unknown()).ok()) return s;
  Tensor* dx;
  if (!(s = ctx.add_output("output", ctx.dtype(), input_shape, &dx)).ok()) return s;
  return run_conv_kernel(ctx, "conv2d_backprop_input", spec, p, false, *filter, ConvRole::kW, *dy, ConvRole::kDy, dx,
                         ConvRole::kX, [&](Backend* be, auto* w, auto* g, auto* out) {
                           return be->conv2d_backprop_input(ctx.exec(), p, w, g, out);
                         });
}

}  // namespace gradrt

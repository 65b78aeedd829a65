// Conv2DBackpropInput / Conv2DBackpropInputV2 (ops.md §2; policy 1-4): dx = conv2d^T(w, dy).
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

namespace {

// ops.md §2.2: input_sizes holds 4 dims (data_format order) or 2 (H, W: N from
// out_backprop, C from the filter). The filter's rank was checked before this reads it.
Status input_shape_from_sizes(OpContext& ctx, const ConvSpec& spec, const TensorView& sizes,
                              const TensorView& filter, const TensorView& dy, std::vector<int64_t>* shape) {
  std::vector<int64_t> v;
  GRADRT_RETURN_IF_ERROR(read_sizes(ctx, sizes, "input_sizes", &v));
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
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), ConvOpKind::kBackpropInput, true, &spec));
  const TensorView *sizes, *filter, *dy;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &sizes, &filter, &dy));  // sizes: V2's input tensor
  if (filter->dtype == DType::int32) return ctx.unimplemented("int32 is not supported; use a floating dtype");
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *filter, "filter"));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "out_backprop", filter->dtype));
  if (v2) GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*sizes, "input", filter->dtype));
  // Ranks first: the 2-value input_sizes form reads filter dim 2 and out_backprop dim 0.
  if (dy->shape.size() != 4) return ctx.error("out_backprop must be 4-dimensional, got shape " + shape_string(dy->shape));
  if (filter->shape.size() != 4) return ctx.error("filter must be 4-dimensional, got shape " + shape_string(filter->shape));
  std::vector<int64_t> input_shape;
  if (v2) input_shape = sizes->shape;
  else GRADRT_RETURN_IF_ERROR(input_shape_from_sizes(ctx, spec, *sizes, *filter, *dy, &input_shape));

  ConvParams p;
  GRADRT_RETURN_IF_ERROR(resolve_conv(ctx.op(), spec, input_shape, filter->shape, &dy->shape, &p, nullptr));
  return finish_conv(ctx, Kernel::conv2d_backprop_input,
                     {.spec = spec, .p = p, .a = {*filter, ConvRole::kW}, .b = {*dy, ConvRole::kDy},
                      .out = {nullptr, ConvRole::kX}}, input_shape);
}

}  // namespace gradrt

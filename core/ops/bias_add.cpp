// BiasAdd (TF: value, bias -> output; attr data_format NHWC | NCHW), TF's bias_op.cc:
//   output[..., c, ...] = value[..., c, ...] + bias[c], c the channel dimension (bias_layout.h).
// value has rank >= 2 (TF: "Input tensor must be at least 2D"), bias is 1-D (TF: "Biases must be
// 1D") with as many elements as value has channels (TF: "Must provide as many biases as the last
// dimension of the input tensor", also for NCHW's dimension 1). Empty value: empty output.
// One add per element: half types widened, added, rounded once, which equals TF's half
// arithmetic. NaN/inf follow IEEE addition.
#include "bias_layout.h"
#include "status_macros.h"

namespace gradrt {

Status run_bias_add(OpContext& ctx) {
  const TensorView *x, *bias;
  GRADRT_RETURN_IF_ERROR(read_float_pair(ctx, &x, &bias));
  BiasLayout l;
  GRADRT_RETURN_IF_ERROR(bias_layout(ctx, *x, "value", &l));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  if (bias->shape.size() != 1) return ctx.error("bias must be 1-dimensional, got shape " + shape_string(bias->shape));
  if (bias->shape[0] != l.p.channels)
    return ctx.error("bias must have as many elements as the channel dimension of value, got " +
                     shape_string(bias->shape) + " vs. value " + shape_string(x->shape));
  Tensor* y;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), x->shape, &y));
  if (l.elements == 0) return Status::OK();
  const BiasParams p = l.p;
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    return run_binary<T>(ctx, {Kernel::bias_add, l.elements, {x, l.elements, l.cf_ptr()}, {bias, p.channels},
                               {y, l.cf_ptr()}, &p},
                         [&](Backend* be, const T* in, const T* b, T* out) {
                           return be->bias_add(ctx.exec(), p, in, b, out);
                         });
  });
}

}  // namespace gradrt

// ReluGrad and Relu6Grad (TF: gradients = dy, features = x -> backprops = dx), any shape,
// elementwise. TF's relu_op_functor.h computes a product, not a select:
//   ReluGrad:  dx = dy * T(x > 0)           Relu6Grad: dx = dy * T(x > 0 && x < 6)
// so (checked against TF 2.21's CPU kernels, tf/tests/test_relu_bias.py):
//   - at the kinks (x == 0, x == 6) the gradient is 0: features may be Relu's input or output;
//   - x NaN compares false: dx = dy * 0 (+-0, or NaN when dy is NaN or +-inf);
//   - dy NaN or +-inf where the mask is 0 gives NaN (inf * 0), not 0;
//   - the zero keeps dy's sign: dy = -3, x = -1 gives -0.
// gradients and features must have the same shape and dtype (TF: "Inputs to operation ReluGrad
// ... must have the same size and shape"). half types: widened, multiplied by 0 or 1 (exact),
// rounded once, which equals TF's half arithmetic.
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_relu_grad(OpContext& ctx) {
  const TensorView *dy, *x;
  GRADRT_RETURN_IF_ERROR(read_float_pair(ctx, &dy, &x));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  if (dy->shape != x->shape)
    return ctx.error("gradients and features must have the same shape, got " + shape_string(dy->shape) + " and " +
                     shape_string(x->shape));
  Tensor* dx;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("backprops", ctx.dtype(), dy->shape, &dx));
  return run_relu_kernel(ctx, dy, *x, dx, ctx.op() == "Relu6Grad");
}

}  // namespace gradrt

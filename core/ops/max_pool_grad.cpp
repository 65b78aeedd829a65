// MaxPoolGrad (TF's CPU MaxPoolingGradOp): dx = 0 plus each grad element added to its
// window's argmax, recomputed from orig_input by TF's rule (params.h PoolParams). orig_output
// decides nothing; its shape must still be the forward output's, as grad's (TF's checks).
#include "pool_common.h"

namespace gradrt {

Status run_max_pool_grad(OpContext& ctx) {
  PoolSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_pool_spec(ctx, true, &spec));
  const TensorView *x, *y, *dy;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &x, &y, &dy));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *x, "orig_input"));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());  // after resolve_dtype, which reads T
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*y, "orig_output", x->dtype));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*dy, "grad", x->dtype));
  if (y->shape.size() != 4) return ctx.error("orig_output must be 4-dimensional, got shape " + shape_string(y->shape));
  if (dy->shape.size() != 4) return ctx.error("grad must be 4-dimensional, got shape " + shape_string(dy->shape));
  PoolParams p;
  std::vector<int64_t> y_shape;
  GRADRT_RETURN_IF_ERROR(resolve_pool(ctx, spec, x->shape, "orig_input", &p, &y_shape));
  GRADRT_RETURN_IF_ERROR(expect_shape(ctx, *y, "orig_output", y_shape));
  GRADRT_RETURN_IF_ERROR(expect_shape(ctx, *dy, "grad", y_shape));
  Tensor* dx;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), x->shape, &dx));
  return run_pool_kernel(ctx, Kernel::max_pool_grad, spec, p, x, dy, dx, PoolRole::kX);
}

}  // namespace gradrt

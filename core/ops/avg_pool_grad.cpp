// AvgPoolGrad: dx = each grad element spread evenly over its window's real cells
// (dy / count of real cells), the adjoint of AvgPool. TF's Eigen kernel (oneDNN off) counts
// a window that starts in the padding and is larger than the input as the whole input
// (GetBroadcastSize; SAME with ksize > input size); TF's default oneDNN kernel and this one
// count the real cells (tf/DIFFERENCES.md).
#include "pool_common.h"

namespace gradrt {

Status run_avg_pool_grad(OpContext& ctx) {
  PoolSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_pool_spec(ctx, false, &spec));
  const TensorView *shape_t, *dy;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &shape_t, &dy));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *dy, "grad"));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());  // after resolve_dtype, which reads T
  std::vector<int64_t> x_shape;
  GRADRT_RETURN_IF_ERROR(ctx.int_vector(*shape_t, "orig_input_shape", &x_shape));
  if (x_shape.size() != 4)
    return ctx.error("orig_input_shape must be 1-dimensional and 4 elements, got " + std::to_string(x_shape.size()) +
                     " elements");
  for (size_t i = 0; i < 4; ++i)
    if (x_shape[i] < 0)
      return ctx.error("Expected a non-negative size, got " + std::to_string(x_shape[i]) + " in orig_input_shape[" +
                       std::to_string(i) + "]");
  int64_t n;
  GRADRT_RETURN_IF_ERROR(checked_num_elements(x_shape, ctx.op() + ": orig_input_shape", &n));
  if (dy->shape.size() != 4) return ctx.error("grad must be 4-dimensional, got shape " + shape_string(dy->shape));
  PoolParams p;
  std::vector<int64_t> y_shape;
  GRADRT_RETURN_IF_ERROR(resolve_pool(ctx, spec, x_shape, "orig_input_shape", &p, &y_shape));
  GRADRT_RETURN_IF_ERROR(expect_shape(ctx, *dy, "grad", y_shape));
  Tensor* dx;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), x_shape, &dx));
  return run_pool_kernel(ctx, Kernel::avg_pool_grad, spec, p, nullptr, dy, dx, PoolRole::kX);
}

}  // namespace gradrt

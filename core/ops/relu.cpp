// Relu and Relu6 (TF: features -> activations), any shape including scalars, elementwise.
// Semantics read from TF's relu_op_functor.h (Eigen cwiseMax/cwiseMin with PropagateNaN) and
// checked against TF 2.21's CPU kernels (tf/tests/test_relu_bias.py):
//   Relu(x)  = max(x, 0)            Relu6(x) = min(max(x, 0), 6)
//   NaN stays NaN (its own bits), +-inf clamp (Relu(-inf) = 0, Relu6(+inf) = 6).
//   -0: gradrt gives +0. TF is not consistent there: its vectorised float32/float64 body gives
//   +0, its scalar tail and its float16/bfloat16 kernels keep -0 (equal as numbers).
// Dtypes float16, bfloat16, float32, float64 (TF also has integers: not a gradient op's need).
// half types are widened to float32, computed, and rounded once: max/min are exact, so the
// result equals TF's half arithmetic.
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_relu_kernel(OpContext& ctx, const TensorView* dy, const TensorView& x, Tensor* out, bool six) {
  const int64_t n = out->num_elements();
  if (n == 0) return Status::OK();
  const ReluParams p{n, six};
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    const BinaryCall call{dy ? Kernel::relu_grad : Kernel::relu, n, {&x, n}, {dy, dy ? n : 0}, {out}, &p};
    return run_binary<T>(ctx, call, [&](Backend* be, const T* a, const T* g, T* y) {
      return g ? be->relu_grad(ctx.exec(), p, g, a, y) : be->relu(ctx.exec(), p, a, y);
    });
  });
}

Status run_relu(OpContext& ctx) {
  const TensorView* x;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &x));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *x, "features"));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  Tensor* y;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("activations", ctx.dtype(), x->shape, &y));
  return run_relu_kernel(ctx, nullptr, *x, y, ctx.op() == "Relu6");
}

}  // namespace gradrt

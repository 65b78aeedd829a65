// BiasAddGrad (TF: out_backprop -> output; attr data_format NHWC | NCHW), TF's bias_op.cc:
//   output[c] = sum of out_backprop over every dimension but the channels' (bias_layout.h).
// out_backprop has rank >= 2 (TF: "Input tensor must be at least 2D"). output has shape
// [channels]; an empty out_backprop gives zeros (a sum over nothing). Sums run in the compute
// type (float32 for half types, as the contract says: TF's float16 kernel also sums in float32,
// its bfloat16 kernel sums in bfloat16) in a fixed order on every backend, so results do not
// depend on the thread count. TF refuses out_backprop of more than 2^31 - 1 elements ("BiasGrad
// requires tensor size <= int32 max"); gradrt takes up to max_tensor_elements().
#include "bias_layout.h"
#include "status_macros.h"

namespace gradrt {

Status run_bias_add_grad(OpContext& ctx) {
  const TensorView* dy;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &dy));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *dy, "out_backprop"));
  BiasLayout l;
  GRADRT_RETURN_IF_ERROR(bias_layout(ctx, *dy, "out_backprop", &l));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  Tensor* db;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), {l.p.channels}, &db));
  if (l.elements == 0) return Status::OK();  // zeros: finish() fills an output nothing wrote
  const BiasParams p = l.p;
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    const BinaryCall call{Kernel::bias_add_grad, l.elements, {dy, l.elements, l.cf_ptr()}, {nullptr, 0}, {db}, &p};
    return run_binary<T>(ctx, call, [&](Backend* be, const T* g, const T*, T* out) {
      return be->bias_add_grad(ctx.exec(), p, g, out);
    });
  });
}

}  // namespace gradrt

// The op implementations (one per stem in ops.inc) and what they share.
#pragma once

#include "conv_shape.h"
#include "op_context.h"
#include "reference/reference.h"

namespace gradrt {

#define GRADRT_OP(NAME, STEM, INPUTS, OUTPUTS) Status run_##STEM(OpContext& ctx);
#include "gradrt/ops.inc"

// Runs a kernel `out = kernel(backend, a, b, out)` in compute type T: loads both
// operands (channels-first ones transposed), points the kernel at the output (or a
// scratch buffer that is then stored back), records the backend that ran.
template <class T, class K>
Status run_binary(OpContext& ctx, const char* stem, int64_t work, const TensorView& a, int64_t na,
                  const ChannelsFirst* cfa, const TensorView& b, int64_t nb, const ChannelsFirst* cfb, Tensor* out,
                  const ChannelsFirst* cfo, K kernel) {
  std::vector<T> sa, sb, so;
  const T* pa = ctx.load<T>(a, na, &sa, cfa);
  const T* pb = ctx.load<T>(b, nb, &sb, cfb);
  T* po = ctx.output_buffer<T>(out, &so, cfo);
  Status s = ctx.run_kernel(stem, work, [&](Backend* be) { return kernel(be, pa, pb, po); });
  if (s.ok()) ctx.store<T>(po, out, cfo);
  return s;
}

// Calls f(T{}) with T = double for float64 ops, float otherwise.
template <class F>
Status with_compute_type(const OpContext& ctx, F f) {
  if (ctx.compute_double()) return f(double{});
  return f(float{});
}

// FractionalAvgPool(Grad) on int32/int64: TF's integer semantics exist only in the
// reference templates, which run here whatever backend was asked for.
template <class T>
Status run_integer_pool(OpContext& ctx, const FracPoolParams& p, const TensorView& in, Tensor* out, bool grad) {
  const T* src = static_cast<const T*>(in.data);
  if (grad) ref::fractional_avg_pool_grad<T>(p, src, out->data_as<T>());
  else ref::fractional_avg_pool<T>(p, src, out->data_as<T>());
  ctx.mark_written(out);
  ctx.set_ran_on("reference");
  return Status::OK();
}

// Conv-family helpers shared by the six conv ops.
// A shape vector input (input_sizes / filter_sizes): int32/int64, rank 1, entries >= 0.
Status read_sizes(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out);
inline ChannelsFirst nchw_of(int64_t n, int64_t c, int64_t h, int64_t w) { return {n, c, h * w}; }

}  // namespace gradrt

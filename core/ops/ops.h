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

// Conv2D (depthwise = false) and DepthwiseConv2dNative: the same flow, another shape rule and kernel.
Status run_conv_forward(OpContext& ctx, bool depthwise);

// Which tensor of a conv an operand is: it fixes the element count and, under NCHW, the
// transpose (filters are HWIO in both layouts).
enum class ConvRole { kX, kW, kDy };

// The common tail of the six conv ops, after validation and output allocation: an empty
// output, or a sum over an empty operand (zeros, already there), runs nothing; otherwise
// `out = kernel(backend, a, b, out)` in the compute type, NCHW operands transposed around it.
// `kernel` is generic over the element type: [&](Backend* be, auto* a, auto* b, auto* o).
template <class K>
Status run_conv_kernel(OpContext& ctx, const char* stem, const ConvSpec& spec, const ConvParams& p, bool depthwise,
                       const TensorView& a, ConvRole ra, const TensorView& b, ConvRole rb, Tensor* out, ConvRole ro,
                       K kernel) {
  const int64_t w_elements = depthwise ? p.dw_w_elements() : p.w_elements();
  auto count = [&](ConvRole r) { return r == ConvRole::kX ? p.x_elements() : r == ConvRole::kW ? w_elements : p.y_elements(); };
  if (out->num_elements() == 0 || count(ra) == 0 || count(rb) == 0) return Status::OK();
  const ChannelsFirst cf_x{p.batch, p.in_c, p.in_h * p.in_w}, cf_dy{p.batch, p.out_c, p.out_h * p.out_w};
  auto layout = [&](ConvRole r) -> const ChannelsFirst* {
    if (!spec.nchw || r == ConvRole::kW) return nullptr;
    return r == ConvRole::kX ? &cf_x : &cf_dy;
  };
  // Multiply-adds: every dy element takes one per tap and filter input channel.
  const int64_t work = p.y_elements() * p.filter_h * p.filter_w * (depthwise ? 1 : p.filter_in_c);
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    return run_binary<T>(ctx, stem, work, a, count(ra), layout(ra), b, count(rb), layout(rb), out, layout(ro),
                         [&](Backend* be, const T* pa, const T* pb, T* po) { return kernel(be, pa, pb, po); });
  });
}

}  // namespace gradrt

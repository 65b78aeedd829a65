// The op implementations (one per stem in ops.inc) and what they share.
#pragma once

#include <optional>

#include "conv_shape.h"
#include "op_context.h"
#include "reference/reference.h"
#include "status_macros.h"

namespace gradrt {

#define GRADRT_OP(NAME, STEM, INPUTS, OUTPUTS) Status run_##STEM(OpContext& ctx);
#include "gradrt/ops.inc"

// One input of a kernel call: the user's tensor, its element count, and its layout when it
// is channels-first (nullptr: already channels last).
struct KernelInput {
  const TensorView* t;
  int64_t n;
  const ChannelsFirst* cf = nullptr;
  bool weights = false;  // a filter: loaded with load_weights (a plan keeps its conversion)
};
// The output of a kernel call and its layout.
struct KernelOutput {
  Tensor* t;
  const ChannelsFirst* cf = nullptr;
};
// A two-input kernel call: which kernel (for backend choice and the thread cost model),
// its work estimate, its operands and its params. A one-input kernel leaves b as {nullptr, 0}.
struct BinaryCall {
  Kernel kernel;
  int64_t work;
  KernelInput a, b;
  KernelOutput out;
  const void* params;  // the kernel's params struct (sizes its workspace)
};

// Runs a kernel `out = kernel(backend, a, b, out)` in compute type T: loads both
// operands (channels-first ones transposed; an absent b is nullptr), points the kernel at the
// output (or a scratch buffer that is then stored back), records the backend that ran.
template <class T, class K>
Status run_binary(OpContext& ctx, const BinaryCall& c, K kernel) {
  // (While preparing every access below is refused, and run_kernel returns the refusal.)
  Scratch<T> sa, sb, so;
  auto load = [&](const KernelInput& in, Scratch<T>* s) {
    return in.weights ? ctx.load_weights<T>(*in.t, in.n, s) : ctx.load<T>(*in.t, in.n, s, in.cf);
  };
  const T* pa = load(c.a, &sa);
  const T* pb = c.b.t ? load(c.b, &sb) : nullptr;  // an absent second input (BiasAddGrad)
  T* po = ctx.output_buffer<T>(c.out.t, &so, c.out.cf);
  Status s = ctx.run_kernel(c.kernel, c.work, c.params, [&](Backend* be) { return kernel(be, pa, pb, po); });
  if (s.ok()) ctx.store<T>(po, c.out.t, c.out.cf);
  return s;
}

// Reads the op's inputs, in its ops.inc order, into `out...` (one pointer per input).
template <class... Out>
Status read_inputs(OpContext& ctx, Out... out) {
  const std::vector<std::string>& names = ctx.info().inputs;
  if (names.size() != sizeof...(out)) return Status(Code::Internal, ctx.op() + ": input count");
  Status s;
  size_t i = 0;
  ((s.ok() ? (void)(s = ctx.input(names[i++].c_str(), out)) : void()), ...);
  return s;
}

// resolve_dtype over the floating dtypes every float op accepts.
inline Status resolve_float_dtype(OpContext& ctx, const TensorView& t, const char* name) {
  return ctx.resolve_dtype(t, name, {DType::float16, DType::bfloat16, DType::float32, DType::float64});
}

// Reads a two-input op's inputs (ops.inc order): the first fixes the float dtype, the second must
// have the same.
inline Status read_float_pair(OpContext& ctx, const TensorView** a, const TensorView** b) {
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, a, b));
  const std::vector<std::string>& names = ctx.info().inputs;
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, **a, names[0].c_str()));
  return ctx.expect_dtype(**b, names[1].c_str(), (*a)->dtype);
}

// The kernel call of the four relu ops (relu.cpp, relu_grad.cpp), once validated and with `out`
// allocated: kernel relu (dy == nullptr) or relu_grad on x's elements, Relu6's rule with `six`.
Status run_relu_kernel(OpContext& ctx, const TensorView* dy, const TensorView& x, Tensor* out, bool six);

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
  const T* src = ctx.input_data<T>(in);
  T* dst = ctx.output_data<T>(out);
  GRADRT_RETURN_IF_ERROR(ctx.refused());  // (preparing: no data)
  if (grad) ref::fractional_avg_pool_grad<T>(p, src, dst);
  else ref::fractional_avg_pool<T>(p, src, dst);
  ctx.set_ran_on("reference");
  return Status::OK();
}

// Conv-family helpers shared by the six conv ops.
// A shape vector input (input_sizes / filter_sizes): int32/int64, rank 1, entries >= 0.
Status read_sizes(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out);
// read_sizes of a 4-D shape (the depthwise gradients' input_sizes / filter_sizes).
Status read_sizes4(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out);

// Conv2D (depthwise = false) and DepthwiseConv2dNative: the same flow, another shape rule and kernel.
Status run_conv_forward(OpContext& ctx, bool depthwise);

// Which tensor of a conv an operand is: it fixes the element count and, under NCHW, the
// transpose (filters are HWIO in both layouts).
enum class ConvRole { kX, kW, kDy };

// The operands of a conv kernel call: the resolved geometry and the two inputs and the
// output, each with its role. Built with designated initializers at the call site:
//   {.spec = spec, .p = p, .a = {*w, ConvRole::kW}, .b = {*dy, ConvRole::kDy}, .out = {dx, ConvRole::kX}}
struct ConvOperands {
  struct In {
    const TensorView& t;
    ConvRole role;
  };
  struct Out {
    Tensor* t;
    ConvRole role;
  };
  const ConvSpec& spec;
  const ConvParams& p;
  bool depthwise = false;
  In a, b;
  Out out;
};

// Calls conv kernel `which` of backend be: the six conv kernels share one signature
// (exec, params, a, b, out) in the kernel list.
template <class T>
Status call_conv_kernel(Backend* be, Kernel which, const Exec& e, const ConvParams& p, const T* a, const T* b, T* out) {
  switch (which) {
    case Kernel::conv2d: return be->conv2d(e, p, a, b, out);
    case Kernel::conv2d_backprop_input: return be->conv2d_backprop_input(e, p, a, b, out);
    case Kernel::conv2d_backprop_filter: return be->conv2d_backprop_filter(e, p, a, b, out);
    case Kernel::depthwise_conv2d_native: return be->depthwise_conv2d_native(e, p, a, b, out);
    case Kernel::depthwise_conv2d_native_backprop_input:
      return be->depthwise_conv2d_native_backprop_input(e, p, a, b, out);
    case Kernel::depthwise_conv2d_native_backprop_filter:
      return be->depthwise_conv2d_native_backprop_filter(e, p, a, b, out);
    default:
      return Status(Code::Internal, std::string(kKernelInfo[static_cast<int>(which)].stem) + " is not a conv kernel");
  }
}

// A conv kernel's work estimate in multiply-adds: every dy element takes one per tap and
// filter input channel.
inline int64_t conv_work(const ConvParams& p, bool depthwise) {
  return p.y_elements() * p.filter_h * p.filter_w * (depthwise ? 1 : p.filter_in_c);
}

// A conv gradient run as another conv kernel on reinterpreted params (conv_1x1_nchw.cpp):
// NCHW 1x1 stride-1 gradients as per-image GEMMs on the channels-first data, no transposes.
struct ConvRemap {
  Kernel kernel;  // the kernel that runs (conv2d for the input gradient, conv2d_backprop_input for the filter's)
  ConvParams p;   // its params, one image
};
// Images with fewer pixels (H*W) keep core's transposes: per image the GEMMs are short (the
// filter gradient's K is H*W) and each image's packing and dw sum dominate (7x7x512->512
// batch 8: 3-4x the time of the transposes; 16x16 and larger: 0.4-0.8x; Emerald Rapids).
constexpr int64_t kNchw1x1MinPixels = 256;
// The remap of kernel `which` on (spec, p), when it applies: NCHW, 1x1, stride 1, no padding,
// one group, >= kNchw1x1MinPixels pixels, on any backend but "reference" (the oracle).
std::optional<ConvRemap> nchw_1x1_remap(Kernel which, const ConvSpec& spec, const ConvParams& p, bool depthwise,
                                        const std::string& backend);
// Bytes of the op's own scratch (OpContext::op_scratch) the remapped `which` takes beyond its
// kernel's: one image's dw part for a filter gradient of batch > 1, else 0.
size_t nchw_1x1_op_bytes(Kernel which, const ConvParams& p, bool compute_double);
// Runs c through r (r from nchw_1x1_remap of the same call).
Status run_nchw_1x1(OpContext& ctx, Kernel which, const ConvOperands& c, const ConvRemap& r);

// float16 storage (op_context.h run_f16): runs c's kernel on the float16 tensors as they are when
// the backend takes them (sets *ran), else leaves *ran false for the widening path (f16_storage.cpp).
Status run_conv_f16(OpContext& ctx, Kernel which, const ConvOperands& c, bool* ran);

// The common tail of the six conv ops, after validation and output allocation: an empty
// output, or a sum over an empty operand (zeros, already there), runs nothing; otherwise
// conv kernel `which` computes out from (a, b) in the compute type, NCHW operands transposed
// around it.
inline Status run_conv_kernel(OpContext& ctx, Kernel which, const ConvOperands& c) {
  const ConvParams& p = c.p;
  const int64_t w_elements = c.depthwise ? p.dw_w_elements() : p.w_elements();
  auto count = [&](ConvRole r) { return r == ConvRole::kX ? p.x_elements() : r == ConvRole::kW ? w_elements : p.y_elements(); };
  if (c.out.t->num_elements() == 0 || count(c.a.role) == 0 || count(c.b.role) == 0) return Status::OK();
  if (auto r = nchw_1x1_remap(which, c.spec, p, c.depthwise, ctx.backend_option())) return run_nchw_1x1(ctx, which, c, *r);
  if (bool ran = false; ctx.dtype() == DType::float16) {
    Status s = run_conv_f16(ctx, which, c, &ran);
    if (ran || !s.ok()) return s;
  }
  const ChannelsFirst cf_x{p.batch, p.in_c, p.in_h * p.in_w}, cf_dy{p.batch, p.out_c, p.out_h * p.out_w};
  auto layout = [&](ConvRole r) -> const ChannelsFirst* {
    if (!c.spec.nchw || r == ConvRole::kW) return nullptr;
    return r == ConvRole::kX ? &cf_x : &cf_dy;
  };
  const BinaryCall call{which, conv_work(p, c.depthwise),
                        {&c.a.t, count(c.a.role), layout(c.a.role), c.a.role == ConvRole::kW},
                        {&c.b.t, count(c.b.role), layout(c.b.role), c.b.role == ConvRole::kW},
                        {c.out.t, layout(c.out.role)}, &p};
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    return run_binary<T>(ctx, call, [&](Backend* be, const T* pa, const T* pb, T* po) {
      return call_conv_kernel(be, which, ctx.exec(), p, pa, pb, po);
    });
  });
}

// The tail of every conv op once its shapes are resolved: unknown attributes fail, the
// output ("output", out_shape) is added, then run_conv_kernel as the op's deferred data
// phase (c.out.t is not read: the output is the context's first).
Status finish_conv(OpContext& ctx, Kernel which, const ConvOperands& c, const std::vector<int64_t>& out_shape);

}  // namespace gradrt

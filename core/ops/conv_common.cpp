#include <algorithm>

#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status read_sizes(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out) {
  GRADRT_RETURN_IF_ERROR(ctx.int_vector(t, name, out));
  for (size_t i = 0; i < out->size(); ++i)
    if ((*out)[i] < 0)
      return ctx.error("Dimension " + std::to_string(i) + " of " + name + " must be >= 0, got " +
                       std::to_string((*out)[i]));
  int64_t n;
  return checked_num_elements(*out, ctx.op() + ": " + name, &n);
}

Status read_sizes4(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out) {
  GRADRT_RETURN_IF_ERROR(read_sizes(ctx, t, name, out));
  if (out->size() != 4) return ctx.error(std::string(name) + " must contain 4 values, got " + std::to_string(out->size()));
  return Status::OK();
}

Status finish_conv(OpContext& ctx, Kernel which, const ConvOperands& c, const std::vector<int64_t>& out_shape) {
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  Tensor* out;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), out_shape, &out));
  // What the data phase needs, by value: a plan runs it again on each run's tensors.
  struct Step {
    Kernel which;
    ConvSpec spec;
    ConvParams p;
    bool depthwise;
    std::string a, b;  // input names
    ConvRole ra, rb, rout;
  };
  const ConvParams& p = c.p;
  const int64_t w_elements = c.depthwise ? p.dw_w_elements() : p.w_elements();
  // The call as run_conv_kernel will make it: a remapped NCHW 1x1 gradient runs another
  // kernel on per-image params (its workspace and thread count come from those).
  const std::optional<ConvRemap> r = nchw_1x1_remap(which, c.spec, p, c.depthwise, ctx.backend_option());
  const KernelQuery q{r ? r->kernel : which, ctx.compute_double() ? DType::float64 : DType::float32, r ? &r->p : &p,
                      r ? conv_work(r->p, false) : conv_work(p, c.depthwise),
                      std::max({p.x_elements(), w_elements, p.y_elements()})};
  return ctx.defer(q, [s = Step{which, c.spec, p, c.depthwise, ctx.input_name(&c.a.t), ctx.input_name(&c.b.t),
                                c.a.role, c.b.role, c.out.role}](OpContext& ctx) {
    const TensorView *a, *b;
    GRADRT_RETURN_IF_ERROR(ctx.input(s.a.c_str(), &a));
    GRADRT_RETURN_IF_ERROR(ctx.input(s.b.c_str(), &b));
    return run_conv_kernel(ctx, s.which, {.spec = s.spec, .p = s.p, .depthwise = s.depthwise, .a = {*a, s.ra},
                                          .b = {*b, s.rb}, .out = {ctx.output(0), s.rout}});
  }, r ? nchw_1x1_op_bytes(which, p, ctx.compute_double()) : 0);
}

Status run_conv_forward(OpContext& ctx, bool depthwise) {
  ConvSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_conv_spec(ctx.attrs(), depthwise ? ConvOpKind::kDepthwise : ConvOpKind::kConv2D, !depthwise, &spec));
  const TensorView *x, *w;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &x, &w));
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *x, "input"));
  GRADRT_RETURN_IF_ERROR(ctx.expect_dtype(*w, "filter", x->dtype));
  ConvParams p;
  std::vector<int64_t> y_shape;
  GRADRT_RETURN_IF_ERROR(depthwise ? resolve_depthwise(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape)
      : resolve_conv(ctx.op(), spec, x->shape, w->shape, nullptr, &p, &y_shape));
  return finish_conv(ctx, depthwise ? Kernel::depthwise_conv2d_native : Kernel::conv2d,
                     {.spec = spec, .p = p, .depthwise = depthwise, .a = {*x, ConvRole::kX}, .b = {*w, ConvRole::kW},
                      .out = {nullptr, ConvRole::kDy}}, y_shape);
}

}  // namespace gradrt

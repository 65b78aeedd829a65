#include "pool_common.h"

#include <algorithm>
#include <limits>

#include "status_macros.h"

namespace gradrt {

namespace {

// ksize / strides: 4 entries (TF's op defs: min 4), each in (0, 2^31) (TF reads them as int32),
// batch entries 1 (TF: Unimplemented), depth ksize 1 (pooling across channels is TF's
// separate depthwise max pool, not implemented here). TF ignores the depth stride of a
// spatial pool; so does gradrt.
Status check_window_list(OpContext& ctx, const char* name, const std::vector<int64_t>& v) {
  if (v.size() != 4)
    return ctx.error(std::string("Sliding window ") + name + " field must specify 4 dimensions, got " +
                     std::to_string(v.size()) + ": " + shape_string(v));
  for (size_t i = 0; i < 4; ++i) {
    if (v[i] <= 0)
      return ctx.error(std::string(name) + "[" + std::to_string(i) + "] must be > 0, got " + std::to_string(v[i]));
    if (v[i] > std::numeric_limits<int32_t>::max())
      return ctx.error(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(v[i]) +
                       " is out of range for an int32");
  }
  if (v[0] != 1)
    return ctx.unimplemented("Pooling is not yet supported on the batch dimension: " + std::string(name) + " = " +
                             shape_string(v));
  return Status::OK();
}

}  // namespace

Status decode_pool_spec(OpContext& ctx, bool explicit_allowed, PoolSpec* spec) {
  AttrReader& a = ctx.attrs();
  std::string format, padding;
  GRADRT_RETURN_IF_ERROR(a.str("data_format", &format, std::string("NHWC")));
  if (format != "NHWC" && format != "NCHW")
    return ctx.error("data_format must be \"NHWC\" or \"NCHW\", got \"" + format + "\"");
  spec->nchw = format == "NCHW";
  GRADRT_RETURN_IF_ERROR(a.int_list("ksize", &spec->ksize));
  GRADRT_RETURN_IF_ERROR(a.int_list("strides", &spec->strides));
  // Batch first: the NCHW and NHWC orders agree on where N is.
  GRADRT_RETURN_IF_ERROR(check_window_list(ctx, "ksize", spec->ksize));
  GRADRT_RETURN_IF_ERROR(check_window_list(ctx, "strides", spec->strides));
  if (spec->ksize[spec->c_dim()] != 1)
    return ctx.unimplemented("pooling across the depth dimension is not supported, ksize = " + shape_string(spec->ksize));

  GRADRT_RETURN_IF_ERROR(a.str("padding", &padding));
  if (padding == "SAME") spec->padding = Padding::kSame;
  else if (padding == "VALID") spec->padding = Padding::kValid;
  else if (padding == "EXPLICIT" && explicit_allowed) spec->padding = Padding::kExplicit;
  else
    return ctx.error(std::string("padding must be \"SAME\"") + (explicit_allowed ? ", \"VALID\" or \"EXPLICIT\"" : " or \"VALID\"") +
                     ", got \"" + padding + "\"");
  if (!explicit_allowed) return Status::OK();  // explicit_paddings is then an unknown attribute

  std::vector<int64_t>& pads = spec->explicit_paddings;
  GRADRT_RETURN_IF_ERROR(a.int_list("explicit_paddings", &pads, std::vector<int64_t>{}));
  if (spec->padding != Padding::kExplicit) {
    // TF's MaxPool ignores explicit_paddings unless padding is EXPLICIT.
    pads.clear();
    return Status::OK();
  }
  if (pads.size() != 8)
    return ctx.error("explicit_paddings attribute must contain 8 values, but got: " + std::to_string(pads.size()));
  for (int64_t v : pads)
    if (v < 0) return ctx.error("All elements of explicit_paddings must be nonnegative, got " + shape_string(pads));
  const int c = spec->c_dim();
  if (pads[0] || pads[1] || pads[2 * c] || pads[2 * c + 1])
    return ctx.error("Nonzero explicit padding in the batch or depth dimensions is not supported: " + shape_string(pads));
  // TF: every window must hold a real cell, so each pad is smaller than the window.
  const char* side[4] = {"Top", "Bottom", "Left", "Right"};
  for (int i = 0; i < 4; ++i) {
    const int dim = i < 2 ? spec->h_dim() : spec->w_dim();
    const int64_t pad = pads[2 * dim + i % 2], window = spec->ksize[dim];
    if (pad >= window)
      return ctx.error(std::string(side[i]) + " padding " + std::to_string(pad) +
                       " needs to be smaller than the window size " + std::to_string(window) + " (explicit_paddings " +
                       shape_string(pads) + ", ksize " + shape_string(spec->ksize) + ")");
  }
  return Status::OK();
}

Status resolve_pool(OpContext& ctx, const PoolSpec& spec, const std::vector<int64_t>& in_shape, const char* in_name,
                    PoolParams* p, std::vector<int64_t>* out_shape) {
  if (in_shape.size() != 4)
    return ctx.error(std::string(in_name) + " must be 4-dimensional, got shape " + shape_string(in_shape));
  p->batch = in_shape[0];
  p->in_h = in_shape[spec.h_dim()];
  p->in_w = in_shape[spec.w_dim()];
  p->channels = in_shape[spec.c_dim()];
  p->window_h = spec.ksize[spec.h_dim()];
  p->window_w = spec.ksize[spec.w_dim()];
  struct Dim { int index; int64_t in, window, *stride, *out, *pad; };
  Dim dims[2] = {{spec.h_dim(), p->in_h, p->window_h, &p->stride_h, &p->out_h, &p->pad_top},
                 {spec.w_dim(), p->in_w, p->window_w, &p->stride_w, &p->out_w, &p->pad_left}};
  for (Dim& d : dims) {
    *d.stride = spec.strides[d.index];
    int64_t before = 0, after = 0;
    if (spec.padding == Padding::kExplicit) {
      before = spec.explicit_paddings[2 * d.index];
      after = spec.explicit_paddings[2 * d.index + 1];
    }
    GRADRT_RETURN_IF_ERROR(
        windowed_output_size(ctx.op(), d.in, d.window, 1, *d.stride, spec.padding, before, after, d.out, d.pad));
  }
  *out_shape = spec.nchw ? std::vector<int64_t>{p->batch, p->channels, p->out_h, p->out_w}
                         : std::vector<int64_t>{p->batch, p->out_h, p->out_w, p->channels};
  int64_t n;
  return checked_num_elements(*out_shape, ctx.op() + ": output", &n);
}

Status expect_shape(OpContext& ctx, const TensorView& t, const char* name, const std::vector<int64_t>& want) {
  if (t.shape == want) return Status::OK();
  return ctx.error("Expected " + std::string(name) + " shape to be " + shape_string(want) + ", but got " +
                   shape_string(t.shape));
}

Status run_pool_kernel(OpContext& ctx, Kernel which, const PoolSpec& spec, const PoolParams& p, const TensorView* x,
                       const TensorView* dy, Tensor* out, PoolRole out_role) {
  if (p.x_elements() == 0 || p.y_elements() == 0) return Status::OK();  // zeros (finish()) or empty
  const ChannelsFirst cf_x{p.batch, p.channels, p.in_h * p.in_w}, cf_y{p.batch, p.channels, p.out_h * p.out_w};
  const ChannelsFirst* lx = spec.nchw ? &cf_x : nullptr;
  const ChannelsFirst* ly = spec.nchw ? &cf_y : nullptr;
  // Work: window cells visited (each output reads its window; the gradients about as much).
  int64_t work = p.y_elements();
  if (mul_overflows(work, std::min(p.window_h, p.in_h) * std::min(p.window_w, p.in_w), &work))
    work = std::numeric_limits<int64_t>::max();
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    Scratch<T> sx, sdy, so;
    const T* px = x ? ctx.load<T>(*x, p.x_elements(), &sx, lx) : nullptr;
    const T* pdy = dy ? ctx.load<T>(*dy, p.y_elements(), &sdy, ly) : nullptr;
    const ChannelsFirst* lo = out_role == PoolRole::kX ? lx : ly;
    T* po = ctx.output_buffer<T>(out, &so, lo);
    Status s = ctx.run_kernel(which, work, &p, [&](Backend* be) -> Status {
      switch (which) {
        case Kernel::max_pool: return be->max_pool(ctx.exec(), p, px, po);
        case Kernel::max_pool_grad: return be->max_pool_grad(ctx.exec(), p, px, pdy, po);
        case Kernel::avg_pool: return be->avg_pool(ctx.exec(), p, px, po);
        case Kernel::avg_pool_grad: return be->avg_pool_grad(ctx.exec(), p, pdy, po);
        default: return Status(Code::Internal, "run_pool_kernel: not a pooling kernel");
      }
    });
    if (s.ok()) ctx.store<T>(po, out, lo);
    return s;
  });
}

Status run_pool_forward(OpContext& ctx, Kernel which, Tensor** y) {
  PoolSpec spec;
  GRADRT_RETURN_IF_ERROR(decode_pool_spec(ctx, which == Kernel::max_pool, &spec));
  const TensorView* x;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &x));
  const char* name = ctx.info().inputs[0].c_str();  // input (MaxPool) or value (AvgPool)
  GRADRT_RETURN_IF_ERROR(resolve_float_dtype(ctx, *x, name));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());  // after resolve_dtype, which reads T
  PoolParams p;
  std::vector<int64_t> y_shape;
  GRADRT_RETURN_IF_ERROR(resolve_pool(ctx, spec, x->shape, name, &p, &y_shape));
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), y_shape, y));
  return run_pool_kernel(ctx, which, spec, p, x, nullptr, *y, PoolRole::kY);
}

}  // namespace gradrt

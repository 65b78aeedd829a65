// NCHW (channels-first) 1x1 conv gradients without transposes.
//
// With a 1x1 filter, stride 1 and no padding every output pixel is its input pixel, and per
// image n the channels-first tensors are plain matrices: x_n [Ci x P], dy_n [Co x P] (P = H*W
// pixels, row-major), the filter w [Ci x Co] (HWIO with H = W = 1). Then
//   filter gradient  dw   [Ci x Co] = sum_n x_n * dy_n^T   (contracts P, the inner index of both)
//   input gradient   dx_n [Ci x P]  = w * dy_n              (contracts Co)
// Both are existing NHWC 1x1 kernels run on reinterpreted shapes, one call per image, with no
// layout change of any tensor (core's default path transposes x/dy to NHWC and dx back):
//   input gradient = conv2d on "x" = w seen as 1 x Ci pixels of Co channels, "w" = dy_n seen
//     as an HWIO 1x1 filter Co -> P, "y" = dx_n: y[ci][p] = sum_co w[ci][co] dy_n[co][p].
//   filter gradient = conv2d_backprop_input on "w" = dy_n (the same 1x1 filter Co -> P),
//     "dy" = x_n (Ci pixels of P channels), "dx" = dw_n [Ci pixels x Co channels]:
//     dx[ci][co] = sum_p x_n[ci][p] dy_n[co][p]. The images' dw_n are summed in image order
//     (dw = dw_0, then dw += dw_n): the bits depend on neither the backend's thread count nor
//     the split, only on the kernel's own (fixed) order within an image.
// Both calls have the same params (below), so one KernelQuery sizes the plan's workspace.
// The reference backend keeps the transposes (it stays the independent oracle for this path), and so
// does an explicit vulkan backend.
#include "ops.h"

namespace gradrt {

std::optional<ConvRemap> nchw_1x1_remap(Kernel which, const ConvSpec& spec, const ConvParams& p, bool depthwise,
                                        const std::string& backend) {
  // The reference backend stays the oracle; on Vulkan a call per image would be a submission
  // (with its copies) per image, so the transposes stay there too.
  if (!spec.nchw || depthwise || backend == "reference" || backend == "vulkan") return std::nullopt;
  if (which != Kernel::conv2d_backprop_filter && which != Kernel::conv2d_backprop_input) return std::nullopt;
  if (p.filter_h != 1 || p.filter_w != 1 || p.groups != 1 || p.stride_h != 1 || p.stride_w != 1) return std::nullopt;
  // Explicit padding can make out larger than in (padding pixels see only zeros).
  if (p.pad_top != 0 || p.pad_left != 0 || p.out_h != p.in_h || p.out_w != p.in_w) return std::nullopt;
  const int64_t pixels = p.in_h * p.in_w;
  // Few pixels per image: many short per-image GEMMs (and, for the filter gradient, one
  // Ci x Co sum per image) cost more than the transposes of small planes.
  if (pixels < kNchw1x1MinPixels) return std::nullopt;
  ConvParams g;
  g.batch = 1;
  g.in_h = g.out_h = 1;
  g.in_w = g.out_w = p.in_c;  // Ci "pixels"
  g.in_c = g.filter_in_c = p.out_c;  // Co channels in
  g.out_c = pixels;                  // P channels out
  g.filter_h = g.filter_w = 1;
  return ConvRemap{which == Kernel::conv2d_backprop_filter ? Kernel::conv2d_backprop_input : Kernel::conv2d, g};
}

size_t nchw_1x1_op_bytes(Kernel which, const ConvParams& p, bool compute_double) {
  if (which != Kernel::conv2d_backprop_filter || p.batch < 2) return 0;
  return static_cast<size_t>(p.in_c * p.out_c) * (compute_double ? sizeof(double) : sizeof(float));
}

namespace {

template <class T>
Status run_typed(OpContext& ctx, Kernel which, const ConvOperands& c, const ConvRemap& r) {
  const ConvParams& p = c.p;
  const int64_t images = p.batch, pixels = p.in_h * p.in_w, ci = p.in_c, co = p.out_c;
  const bool filter = which == Kernel::conv2d_backprop_filter;
  // Channels-first operands as they are (cf = nullptr: no transpose, only dtype widening).
  auto count = [&](ConvRole role) { return role == ConvRole::kX ? p.x_elements() : role == ConvRole::kW ? p.w_elements() : p.y_elements(); };
  const BinaryCall call{r.kernel, conv_work(r.p, false),
                        {&c.a.t, count(c.a.role), nullptr, c.a.role == ConvRole::kW},
                        {&c.b.t, count(c.b.role), nullptr, c.b.role == ConvRole::kW},
                        {c.out.t, nullptr}, &r.p};
  return run_binary<T>(ctx, call, [&](Backend* be, const T* a, const T* b, T* out) -> Status {
    // The per-image "filter" is data (dy_n), not weights: no packed copy may be kept for it.
    Exec e = ctx.exec();
    e.state = nullptr;
    e.weights_version = 0;
    if (!filter) {  // a = w [Ci x Co], b = dy [N, Co, P], out = dx [N, Ci, P]
      for (int64_t n = 0; n < images; ++n)
        GRADRT_RETURN_IF_ERROR(call_conv_kernel<T>(be, Kernel::conv2d, e, r.p, a, b + n * co * pixels, out + n * ci * pixels));
      return Status::OK();
    }
    // a = x [N, Ci, P], b = dy [N, Co, P], out = dw [Ci x Co].
    GRADRT_RETURN_IF_ERROR(call_conv_kernel<T>(be, Kernel::conv2d_backprop_input, e, r.p, b, a, out));
    if (images == 1) return Status::OK();
    // Each later image's dw_n goes to the op's part of the plan's workspace (sized at prepare:
    // nchw_1x1_op_bytes), then is added in; the kernel's own scratch lies before it.
    Status st;
    T* part = static_cast<T*>(ctx.op_scratch(static_cast<size_t>(ci * co) * sizeof(T), &st));
    if (!part) return st;
    e.workspace = ctx.exec().workspace;  // (op_scratch may have moved a workspace it had to grow)
    for (int64_t n = 1; n < images; ++n) {
      GRADRT_RETURN_IF_ERROR(
          call_conv_kernel<T>(be, Kernel::conv2d_backprop_input, e, r.p, b + n * co * pixels, a + n * ci * pixels, part));
      for (int64_t i = 0; i < ci * co; ++i) out[i] += part[i];
    }
    return Status::OK();
  });
}

}  // namespace

Status run_nchw_1x1(OpContext& ctx, Kernel which, const ConvOperands& c, const ConvRemap& r) {
  return with_compute_type(ctx, [&](auto t) { return run_typed<decltype(t)>(ctx, which, c, r); });
}

}  // namespace gradrt

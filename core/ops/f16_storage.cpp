// The float16-storage calls of the conv kernels (kernels.h GRADRT_F16_KERNELS): the op's float16
// tensors go to the backend's `_f16` kernel as they are (binary16 bits), no widening on the host.
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

Status run_conv_f16(OpContext& ctx, Kernel which, const ConvOperands& c, bool* ran) {
  return ctx.run_f16(which, conv_work(c.p, c.depthwise), &c.p, !c.spec.nchw, [&](Backend* be) {
    const uint16_t* a = ctx.input_data<uint16_t>(c.a.t);
    const uint16_t* b = ctx.input_data<uint16_t>(c.b.t);
    uint16_t* out = ctx.output_data<uint16_t>(c.out.t);
    switch (which) {  // (a, b) as call_conv_kernel passes them: (w, dy) for dx, (x, dy) for dw
      case Kernel::conv2d_backprop_input:
        return be->conv2d_backprop_input_f16(ctx.exec(), c.p, a, b, out);
      case Kernel::conv2d_backprop_filter:
        return be->conv2d_backprop_filter_f16(ctx.exec(), c.p, a, b, out);
      case Kernel::depthwise_conv2d_native_backprop_input:
        return be->depthwise_conv2d_native_backprop_input_f16(ctx.exec(), c.p, a, b, out);
      case Kernel::depthwise_conv2d_native_backprop_filter:
        return be->depthwise_conv2d_native_backprop_filter_f16(ctx.exec(), c.p, a, b, out);
      default:  // (f16_storage is false for the others: not reached)
        return Status(Code::Unimplemented, std::string(kernel_info(which).stem) + " has no float16-storage form");
    }
  }, ran);
}

}  // namespace gradrt

// DepthwiseConv2dNative, the forward op of the depthwise gradients (ops.md §4; policy 1:
// dilations honoured, unequal strides allowed). Filter [FH, FW, C, M], output channel c*M + m.
#include "ops.h"

namespace gradrt {

Status run_depthwise_conv2d_native(OpContext& ctx) { return run_conv_forward(ctx, true); }

}  // namespace gradrt

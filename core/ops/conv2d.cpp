// Conv2D, the forward op the conv gradients differentiate (ops.md §1.5).
#include "ops.h"

namespace gradrt {

Status run_conv2d(OpContext& ctx) { return run_conv_forward(ctx, false); }

}  // namespace gradrt

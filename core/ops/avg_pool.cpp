// AvgPool (TF's CPU kernel, NHWC; NCHW through transposes): y = the mean of each window's
// real cells; padding is not counted.
#include "pool_common.h"

namespace gradrt {

Status run_avg_pool(OpContext& ctx) {
  Tensor* y = nullptr;
  return run_pool_forward(ctx, Kernel::avg_pool, &y);
}

}  // namespace gradrt

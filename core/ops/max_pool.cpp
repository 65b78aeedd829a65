// MaxPool (TF's CPU kernel, NHWC; NCHW through transposes): y = the max of each window's real
// cells, starting from the dtype's lowest value and keeping y unless y < x, so NaN never wins
// and a window of only NaN / -inf gives the dtype's lowest() (what TF 2.21's CPU kernel returns).
#include <cstdint>
#include <cstring>
#include <limits>

#include "pool_common.h"

namespace gradrt {

namespace {

// TF starts each max at its dtype's lowest value; the kernels start at float's or double's, which a
// half type (or T=bfloat16 rounding) turns into -inf. No window yields -inf otherwise (lowest() is
// never replaced by -inf), so every -inf is a window of only NaN / -inf: it gets the dtype's lowest.
void to_dtype_lowest(Tensor* y, void* data) {
  auto replace = [&](auto neg_inf, auto lowest) {
    auto* v = static_cast<decltype(neg_inf)*>(data);
    for (int64_t i = 0; i < y->num_elements(); ++i)
      if (std::memcmp(&v[i], &neg_inf, sizeof(neg_inf)) == 0) v[i] = lowest;
  };
  switch (y->dtype()) {
    case DType::float16: return replace(uint16_t{0xFC00}, uint16_t{0xFBFF});
    case DType::bfloat16: return replace(uint16_t{0xFF80}, uint16_t{0xFF7F});
    case DType::float32: return replace(-std::numeric_limits<float>::infinity(), bfloat16_to_float(0xFF7F));  // T=bfloat16
    default: return;
  }
}

}  // namespace

Status run_max_pool(OpContext& ctx) {
  Tensor* y = nullptr;
  GRADRT_RETURN_IF_ERROR(run_pool_forward(ctx, Kernel::max_pool, &y));
  // float32 without T=bfloat16 (and float64) come out of the kernels right: nothing to replace
  // (a scalar pass over y that took 55-60% of the op at 112x112x64: bench/results_ab_issue22_workspace.txt).
  bool round_bf16 = false;
  ctx.round_state(&round_bf16);
  if (y->dtype() == DType::float32 && !round_bf16) return Status::OK();
  void* data = ctx.output_data<char>(y);  // (null while preparing: the context refuses)
  if (data) to_dtype_lowest(y, data);
  return Status::OK();
}

}  // namespace gradrt

// FractionalAvgPool forward on Vulkan: shaders/fractional_avg_pool.comp. The host resolves the
// pooling cells (FracPoolParams::row_start/row_end: overlapping rule and clamping) into an
// int32 table, so the shader never sees the int64 sequences.
#include <algorithm>
#include <vector>

#include "common.h"
#include "fractional_avg_pool.spv.h"
#include "fractional_avg_pool_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

// Cell table of shaders/fractional_avg_pool_grad.comp: [row cells | col cells | rows covering
// each input row | cols covering each input column], each entry a (first, last) pair.
std::vector<int32_t> pool_cells(const FracPoolParams& p, bool with_cover) {
  std::vector<int32_t> t;
  t.reserve(2 * (p.out_h + p.out_w + (with_cover ? p.in_h + p.in_w : 0)));
  for (int64_t r = 0; r < p.out_h; ++r) t.insert(t.end(), {int32_t(p.row_start(r)), int32_t(p.row_end(r))});
  for (int64_t c = 0; c < p.out_w; ++c) t.insert(t.end(), {int32_t(p.col_start(c)), int32_t(p.col_end(c))});
  if (with_cover) {
    // Output rows whose cell holds input row i: a contiguous range, since cell starts and ends
    // are non-decreasing. Empty: first > last.
    auto cover = [&](int64_t in, int64_t out, auto start, auto end) {
      std::vector<int32_t> c(2 * in);
      for (int64_t i = 0; i < in; ++i) c[2 * i] = int32_t(out), c[2 * i + 1] = -1;
      for (int64_t r = 0; r < out; ++r)
        for (int64_t i = std::max<int64_t>(start(r), 0); i <= std::min<int64_t>(end(r), in - 1); ++i) {
          c[2 * i] = std::min(c[2 * i], int32_t(r));
          c[2 * i + 1] = std::max(c[2 * i + 1], int32_t(r));
        }
      t.insert(t.end(), c.begin(), c.end());
    };
    cover(p.in_h, p.out_h, [&](int64_t r) { return p.row_start(r); }, [&](int64_t r) { return p.row_end(r); });
    cover(p.in_w, p.out_w, [&](int64_t c) { return p.col_start(c); }, [&](int64_t c) { return p.col_end(c); });
  }
  return t;
}

PoolPush pool_push(const FracPoolParams& p) {
  return {int32_t(p.batch), int32_t(p.in_h), int32_t(p.in_w), int32_t(p.channels), int32_t(p.out_h),
          int32_t(p.out_w)};
}

template <class T>
Status fractional_avg_pool(Context& ctx, const FracPoolParams& p, const T* x, T* y) {
  const int64_t n_x = p.batch * p.in_h * p.in_w * p.channels, n_y = p.batch * p.out_h * p.out_w * p.channels;
  if (n_y == 0) return Status::OK();
  GRADRT_RETURN_IF_ERROR(check_int32("fractional_avg_pool", {n_x, n_y, 2 * (p.out_h + p.out_w + p.in_h + p.in_w)}));
  const std::vector<int32_t> cells = pool_cells(p, false);
  const uint32_t threads = elementwise_threads(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER(T, fractional_avg_pool, 3, PoolPush), {threads}, &k));
  return run_one_dispatch(ctx, *k, pool_push(p), {x, sizeof(T) * n_x}, {cells.data(), sizeof(int32_t) * cells.size()},
                          {y, sizeof(T) * n_y}, group_count(ctx, n_y, threads, 0));
}

template Status fractional_avg_pool<float>(Context&, const FracPoolParams&, const float*, float*);
template Status fractional_avg_pool<double>(Context&, const FracPoolParams&, const double*, double*);

}  // namespace gradrt::vk

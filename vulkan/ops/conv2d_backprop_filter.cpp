// Conv2DBackpropFilter on Vulkan: shaders/conv2d_backprop_filter.comp computes an implicit GEMM
// over (ky, kx, f) x (output channel of the group) whose k = (n, oy, ox) is split into chunks;
// each chunk writes its own partial dw and shaders/sum_partials.comp adds them in chunk order.
// T = uint16_t (float16 storage): the _f16 variants; tiles, splits and partials (float) are
// float32's, so dw is the float32 kernel's sums rounded once (tests/test_vulkan_f16.cpp).
#include <algorithm>

#include "common.h"
#include "conv2d_backprop_filter.spv.h"
#include "conv2d_backprop_filter_f16.spv.h"
#include "conv2d_backprop_filter_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

template <class T>
Status conv2d_backprop_filter(Context& ctx, const ConvParams& p, const T* x, const T* dy, T* dw) {
  if (Status s; empty_conv_sum(ctx, p, dw, p.w_elements(), p.x_elements(), p.y_elements(), &s)) return s;
  const int64_t n_dw = p.w_elements();
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push("conv2d_backprop_filter", p, &push));
  const int64_t M = p.filter_h * p.filter_w * p.filter_in_c, N = p.out_c / p.groups;
  const int64_t K = p.batch * p.out_h * p.out_w;
  // GRADRT_VULKAN_SHADERS=v5: tiles fitted to M x N (a GPU A/B decides; see common.h).
  // (Tiles by the compute type: the shared-memory tiles hold Compute<T>.)
  constexpr size_t bytes = sizeof(Compute<T>);
  const GemmTiles t = shader_set() >= 5 ? filter_gemm_tiles(ctx, M, N, bytes) : gemm_tiles(ctx, M, N, bytes);

  // Enough splits to give ~1024 workgroups, each split at least 8 k-steps long (v5: 4, since its
  // fitted tiles are few: 144 x 24 is one tile, so at batch 8 (K = 25088) 8 k-steps would leave
  // 196 workgroups for 132 SMs; 4 gives 392, for 5.4 MB more of partial sums); bounded by the
  // partial buffer and the z group count.
  const int64_t min_steps = shader_set() >= 5 ? 4 : 8;
  const Split split = gemm_k_split(ctx, t, gemm_tile_count(t, M, N, p.groups), K, min_steps, n_dw, bytes, p.groups);
  push.k_chunk = static_cast<int32_t>(split.chunk);
  push.splits = static_cast<int32_t>(split.splits);

  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER3(T, conv2d_backprop_filter, 3, ConvPush), t.spec(), &k));
  return run_split_reduction(ctx, *k, {x, sizeof(T) * p.x_elements()}, {dy, sizeof(T) * p.y_elements()}, dw, n_dw,
                             push, group_count(ctx, N, t.bn, 0),
                             group_count(ctx, M, t.bm, 1), static_cast<uint32_t>(split.splits * p.groups));
}

template Status conv2d_backprop_filter<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status conv2d_backprop_filter<double>(Context&, const ConvParams&, const double*, const double*, double*);
template Status conv2d_backprop_filter<uint16_t>(Context&, const ConvParams&, const uint16_t*, const uint16_t*, uint16_t*);

}  // namespace gradrt::vk

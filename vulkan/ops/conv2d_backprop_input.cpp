// Conv2DBackpropInput on Vulkan: shaders/conv2d_backprop_input.comp, an implicit GEMM over
// (n, iy, ix) x (input channel of the group) with k = (ky, kx, output channel of the group).
// T = uint16_t (float16 storage): the _f16 variant, with float32's tiles (the shared-memory tiles
// hold floats): dx is the float32 kernel's result rounded once (tests/test_vulkan_f16.cpp).
//
// Variants (InputVariant, GRADRT_VULKAN_INPUT; issue 22 item 3, written for a GPU run to pick the
// default per shape: bench/gpu_step.sh step 1i). Tiles never change a sum's order (each output
// adds its k in order 0..K-1), so all but split give base's bits:
//   base   gemm_tiles as before (128x64 8x4 at >= 2^22 outputs, 128x16 for <= 16 channels, else 64x64)
//   pad    base's tiles with shared rows padded by 2 (implicit_gemm.glsl PAD: no bank conflicts
//          when a k-step's 16 loads store down a column of As / Bs)
//   fit    pad, and 16 < N < 64 channels get a 128 x round4(N) tile (N = 24: 96 invocations of
//          8x4, not a 64x64 tile 62% padding; unpadded, this lost in session 11: 0.81x at batch 8)
//   large  pad, 128x64 (8x4) for every N > 16 (base takes it only from 2^22 outputs)
//   big    pad, 128x128 (8x8) for N >= 128, else large
//   split  pad, base's tiles, and K cut into chunks (as the filter gradient does) until there
//          are ~1024 workgroups with >= 8 k-steps each: partial dx's summed by sum_partials.comp
//          in chunk order (deterministic; other bits than base). For few rows M (8x14x14x256:
//          M = 1568, 100 tiles of 64x64 on a 132-SM GPU). float16 storage keeps one chunk.
//   blocked    fit's tile for 16 < N < 64, else large's (N > 16) or base's, each invocation owning
//              8x4 consecutive outputs (implicit_gemm.glsl BLOCKED, PAD 4: 128-bit shared loads)
//   bigblocked blocked, with big's 128x128 (8x8) for N >= 128
//   phase  stride > 1, dilation 1: shaders/conv2d_backprop_input_phase.comp, one GEMM per parity
//          class (iy + pad_top) % stride_h, (ix + pad_left) % stride_w over only the taps that reach
//          it (stride 2: 1/4 of base's k loop, no zero loads); pad's tiles for the class's rows.
//          The same nonzero products in the same order: base's bits. Other strides/dilations: pad.
//   auto   the default, a rule by shape from the H200 run of session 14 (bench/results_gpu_h200.txt,
//          step 1i and the step A/B): phase for stride > 1 with dilation 1 (4.6x base on the s2 row);
//          split where base's tiles are too few to fill the GPU (< 256 workgroups) and K is long
//          (>= 1024; 1.7x and 3.9x on 8x28x28x128 and 8x14x14x256), float32/64 only; blocked for
//          M >= 65536 rows and 16 < N <= 64 channels (1.13-1.16x in the batch-32 steps); else pad
//          (1.01-1.35x, same bits). fit, large, big and bigblocked never won alone.

#include <algorithm>
#include <type_traits>

#include "common.h"
#include "conv2d_backprop_input.spv.h"
#include "conv2d_backprop_input_f16.spv.h"
#include "conv2d_backprop_input_f64.spv.h"
#include "conv2d_backprop_input_phase.spv.h"
#include "conv2d_backprop_input_phase_f16.spv.h"
#include "conv2d_backprop_input_phase_f64.spv.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt::vk {

namespace {

// The tiles of variant v for C = M x N with elements of elem_bytes in the shared tiles.
GemmTiles input_tiles(const Context& ctx, InputVariant v, int64_t M, int64_t N, size_t elem_bytes) {
  GemmTiles t = gemm_tiles(ctx, M, N, elem_bytes);
  if (v == InputVariant::base) return t;
  const bool blocked = v == InputVariant::blocked || v == InputVariant::bigblocked;
  auto padded = [&](GemmTiles c) {
    c.pad = blocked ? 4 : 2;  // blocked: row strides stay multiples of 4 (128-bit loads)
    c.blocked = blocked ? 1 : 0;
    return gemm_tiles_fit(ctx, c, elem_bytes) ? c : t;  // else base's, unpadded
  };
  const GemmTiles large{128, 64, 16, 8, 4}, big{128, 128, 16, 8, 8};
  const GemmTiles fitted{128, static_cast<uint32_t>((N + 3) / 4 * 4), 16, 8, 4};
  const bool narrow_n = N > 16 && N < 64;
  if ((v == InputVariant::fit || blocked) && narrow_n) return padded(fitted);
  if ((v == InputVariant::big || v == InputVariant::bigblocked) && N >= 128) return padded(big);
  if ((v == InputVariant::large || v == InputVariant::big || blocked) && N > 16) return padded(large);
  return padded(t);
}

// Where the phase shader runs: stride > 1, dilation 1, its classes x groups within the z count.
bool phase_applies(const Context& ctx, const ConvParams& p) {
  return (p.stride_h > 1 || p.stride_w > 1) && p.dilation_h == 1 && p.dilation_w == 1 &&
         p.stride_h * p.stride_w * p.groups <= int64_t{ctx.limits().maxComputeWorkGroupCount[2]};
}

// GRADRT_VULKAN_INPUT's variant, or for auto the rule above.
template <class T>
InputVariant resolve_input_variant(const Context& ctx, const ConvParams& p, int64_t M, int64_t N, int64_t K,
                                   size_t bytes) {
  const InputVariant v = input_variant();
  if (v != InputVariant::automatic) return v;
  if (phase_applies(ctx, p)) return InputVariant::phase;
  const int64_t workgroups = gemm_tile_count(gemm_tiles(ctx, M, N, bytes), M, N, p.groups);
  if (!std::is_same_v<T, uint16_t> && workgroups < 256 && K >= 1024) return InputVariant::split;
  if (M >= 65536 && N > 16 && N <= 64) return InputVariant::blocked;
  return InputVariant::pad;
}

}  // namespace

template <class T>
Status conv2d_backprop_input(Context& ctx, const ConvParams& p, const T* w, const T* dy, T* dx) {
  // nothing flows back (no dy or no filter): zeros
  if (Status s; empty_conv_sum(ctx, p, dx, p.x_elements(), p.w_elements(), p.y_elements(), &s)) return s;
  const int64_t n_dx = p.x_elements();
  const int64_t M = p.batch * p.in_h * p.in_w, N = p.filter_in_c;
  const int64_t K = p.filter_h * p.filter_w * (p.out_c / p.groups);
  constexpr size_t bytes = sizeof(Compute<T>);
  const InputVariant v = resolve_input_variant<T>(ctx, p, M, N, K, bytes);
  const GemmTiles t = input_tiles(ctx, v == InputVariant::phase ? InputVariant::pad : v, M, N, bytes);
  const ShaderCode code = GRADRT_VK_SHADER3(T, conv2d_backprop_input, 3, ConvPush);
  const uint32_t gx = group_count(ctx, N, t.bn, 0), gy = group_count(ctx, M, t.bm, 1);

  if (v == InputVariant::phase && phase_applies(ctx, p)) {
    // rows of the largest class: ceil(in / stride) per side
    const int64_t rows = p.batch * ((p.in_h + p.stride_h - 1) / p.stride_h) * ((p.in_w + p.stride_w - 1) / p.stride_w);
    const GemmTiles tp = input_tiles(ctx, InputVariant::pad, rows, N, bytes);
    return run_conv_dispatch(ctx, "conv2d_backprop_input", GRADRT_VK_SHADER3(T, conv2d_backprop_input_phase, 3, ConvPush),
                             tp.spec(), p, {w, sizeof(T) * p.w_elements()}, {dy, sizeof(T) * p.y_elements()},
                             {dx, sizeof(T) * n_dx}, group_count(ctx, N, tp.bn, 0), group_count(ctx, rows, tp.bm, 1),
                             static_cast<uint32_t>(p.stride_h * p.stride_w * p.groups));
  }
  // split: as the filter gradient, chunks of >= 8 k-steps (float16 keeps one chunk).
  const Split split = v == InputVariant::split && !std::is_same_v<T, uint16_t>
                          ? gemm_k_split(ctx, t, gemm_tile_count(t, M, N, p.groups), K, 8, n_dx, bytes, p.groups)
                          : Split{1, K};
  if (split.splits <= 1)
    return run_conv_dispatch(ctx, "conv2d_backprop_input", code, t.spec(), p, {w, sizeof(T) * p.w_elements()},
                             {dy, sizeof(T) * p.y_elements()}, {dx, sizeof(T) * n_dx}, gx, gy,
                             static_cast<uint32_t>(p.groups));
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push("conv2d_backprop_input", p, &push));
  push.k_chunk = static_cast<int32_t>(split.chunk);
  push.splits = static_cast<int32_t>(split.splits);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(code, t.spec(), &k));
  return run_split_reduction(ctx, *k, {w, sizeof(T) * p.w_elements()}, {dy, sizeof(T) * p.y_elements()}, dx, n_dx,
                             push, gx, gy, static_cast<uint32_t>(split.splits * p.groups));
}

template Status conv2d_backprop_input<float>(Context&, const ConvParams&, const float*, const float*, float*);
template Status conv2d_backprop_input<double>(Context&, const ConvParams&, const double*, const double*, double*);
template Status conv2d_backprop_input<uint16_t>(Context&, const ConvParams&, const uint16_t*, const uint16_t*, uint16_t*);

}  // namespace gradrt::vk

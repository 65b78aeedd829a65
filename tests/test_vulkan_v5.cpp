// Session 11's Vulkan shader set (v5, the default; vulkan/ops/common.h: the depthwise filter gradient's
// _v5 partial pass, the conv filter gradient's fitted tiles and shorter splits) at the sizes where they
// have edges, against the reference backend: a reduction length K = n*oy*ox that is no multiple of the
// split's chunk (primes), one position, channel counts that are no multiple of 4 (scalar depthwise
// shader; odd tile sides for the conv filter gradient), batch 32, filters of more than 9 taps, stride 2,
// and the MobileNet 1x1 shapes 144 -> 24 and 24 -> 144 (a single 144 x 24 tile). Dilation:
// test_vulkan_vec4.cpp and the random sweeps; ctest `vulkan_v4` reruns these with session 10's set (and
// the polling fence wait). Every case reruns for the same bits.
#include <doctest/doctest.h>

#include <random>
#include <utility>

#include "harness.h"

TEST_CASE("vulkan: v5 gradients (depthwise filter, conv tiles) at edge sizes vs reference") {
  using test::ConvKernel;
  using test::same_conv_params;
  test::ValidationCheck validation;
  auto variants = test::variants("vulkan");
  if (variants.empty()) return;
  std::mt19937 rng(2211);
  const std::pair<ConvKernel, gradrt::ConvParams> cases[] = {
      // depthwise (out_c = in_c): (batch, h, w, c, c, filter, stride, groups, depthwise)
      {ConvKernel::dw_bwd_filter, same_conv_params(1, 13, 11, 20, 20, 3, 1, 1, true)},    // K = 143 = 11 * 13
      {ConvKernel::dw_bwd_filter, same_conv_params(1, 1, 1, 4, 4, 3, 1, 1, true)},        // K = 1, 8 taps padding
      {ConvKernel::dw_bwd_filter, same_conv_params(3, 7, 5, 36, 36, 3, 2, 1, true)},      // stride 2
      {ConvKernel::dw_bwd_filter, same_conv_params(1, 9, 11, 8, 8, 5, 1, 1, true)},       // 25 taps: 9 + 9 + 7
      {ConvKernel::dw_bwd_filter, same_conv_params(32, 7, 7, 144, 144, 3, 1, 1, true)},   // batch 32, 36 quads
      {ConvKernel::dw_bwd_filter, same_conv_params(32, 5, 5, 12, 12, 3, 2, 1, true)},     // batch 32, stride 2
      {ConvKernel::dw_bwd_filter, same_conv_params(2, 5, 5, 10, 10, 3, 1, 1, true)},      // 10 channels: scalar
      // conv filter gradient: M = taps * in_c rows, N = out_c columns
      {ConvKernel::bwd_filter, same_conv_params(32, 7, 7, 144, 24, 1, 1)},  // one 144 x 24 tile, batch 32
      {ConvKernel::bwd_filter, same_conv_params(32, 7, 7, 24, 144, 1, 1)},  // one 24 x 144 tile
      {ConvKernel::bwd_filter, same_conv_params(1, 13, 11, 6, 10, 3, 1)},   // M = 54, N = 10: 56 x 12, K = 143
      {ConvKernel::bwd_filter, same_conv_params(3, 7, 5, 7, 9, 3, 2)},      // odd channels, stride 2
      {ConvKernel::bwd_filter, same_conv_params(2, 6, 6, 16, 36, 5, 1)},    // 5x5: M = 400, N = 36
      {ConvKernel::bwd_filter, same_conv_params(1, 5, 5, 3, 5, 3, 1)},      // M = 27, N = 5: < 32 invocations
      {ConvKernel::bwd_filter, same_conv_params(2, 4, 4, 520, 8, 1, 1)},    // M = 520 > 512: gemm_tiles
      // conv input gradient: N = in_c columns; 16 < N < 64 gets a tile N (rounded to 4) wide
      {ConvKernel::bwd_input, same_conv_params(32, 7, 7, 24, 144, 1, 1)},   // 168 x 24 tiles, batch 32
      {ConvKernel::bwd_input, same_conv_params(2, 9, 7, 17, 8, 3, 1)},      // N = 17: 20 wide, 3 columns padding
      {ConvKernel::bwd_input, same_conv_params(3, 11, 13, 30, 12, 3, 2)},   // N = 30, stride 2
      {ConvKernel::bwd_input, same_conv_params(1, 5, 5, 63, 5, 3, 1)},      // N = 63: one 64 x 64 tile
  };
  for (const auto& [k, p] : cases) {
    test::conv_case<float>(variants, k, p, rng);
    test::conv_case<double>(variants, k, p, rng);
  }
}

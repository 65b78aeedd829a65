// The session-11 Vulkan variants (GRADRT_VULKAN_SHADERS=v5, vulkan/ops/common.h: the depthwise
// filter gradient's _v5 partial pass, the conv filter gradient's fitted tiles) at the sizes
// where they have edges, against the reference backend: a reduction length K = n*oy*ox that is
// no multiple of the split's chunk (primes), channel counts that are no multiple of 4 (scalar
// depthwise shaders; odd tile sides for the conv filter gradient), batch 32, filters of more
// than 9 taps, stride 2 and dilation, and the MobileNet 1x1 shapes 144 -> 24 and 24 -> 144
// (a single 144 x 24 tile). ctest `vulkan_v5` runs these (and every Vulkan sweep) with v5; the
// plain `vulkan` run checks the default shaders at the same sizes. Every case reruns for the
// same bits.
#include <doctest/doctest.h>

#include <random>

#include "harness.h"

namespace {

using gradrt::ConvParams;
using test::ConvKernel;

// SAME-like padding for odd windows (pad (e-1)/2 with e the dilated window), any stride.
ConvParams params(int64_t n, int64_t h, int64_t w, int64_t c, int64_t oc, int64_t f, int64_t stride,
                  int64_t dilation, bool depthwise) {
  ConvParams p;
  p.batch = n, p.in_h = h, p.in_w = w, p.in_c = c, p.filter_in_c = c;
  p.out_c = depthwise ? c : oc;
  p.filter_h = p.filter_w = f;
  p.stride_h = p.stride_w = stride;
  p.dilation_h = p.dilation_w = dilation;
  const int64_t e = (f - 1) * dilation + 1;
  p.pad_top = p.pad_left = (e - 1) / 2;
  p.out_h = (h + 2 * p.pad_top - e) / stride + 1;
  p.out_w = (w + 2 * p.pad_left - e) / stride + 1;
  return p;
}

}  // namespace

TEST_CASE("vulkan: v5 depthwise filter gradient at edge sizes vs reference") {
  test::ValidationCheck validation;
  auto variants = test::variants("vulkan");
  if (variants.empty()) return;
  std::mt19937 rng(2211);
  const ConvParams cases[] = {
      params(1, 13, 11, 20, 0, 3, 1, 1, true),   // K = 143 = 11 * 13: no multiple of any chunk
      params(1, 1, 1, 4, 0, 3, 1, 1, true),      // K = 1: one position, 8 of 9 taps padding
      params(3, 7, 5, 36, 0, 3, 2, 1, true),     // stride 2, K = 36 (3 x 4 x 3)
      params(2, 9, 9, 24, 0, 3, 1, 2, true),     // dilation 2
      params(1, 9, 11, 8, 0, 5, 1, 1, true),     // 25 taps: TAPS groups of 9, 9, 7
      params(32, 7, 7, 144, 0, 3, 1, 1, true),   // batch 32, 36 quads (MobileNet's 144)
      params(32, 5, 5, 12, 0, 3, 2, 1, true),    // batch 32, stride 2, 3 quads
      params(2, 5, 5, 10, 0, 3, 1, 1, true),     // channels no multiple of 4: the scalar shader
  };
  for (const ConvParams& p : cases) {
    test::conv_case<float>(variants, ConvKernel::dw_bwd_filter, p, rng);
    test::conv_case<double>(variants, ConvKernel::dw_bwd_filter, p, rng);
  }
}

TEST_CASE("vulkan: v5 conv filter gradient tiles at edge sizes vs reference") {
  test::ValidationCheck validation;
  auto variants = test::variants("vulkan");
  if (variants.empty()) return;
  std::mt19937 rng(2212);
  const ConvParams cases[] = {
      params(32, 7, 7, 144, 24, 1, 1, 1, false),  // MobileNet 144 -> 24 at batch 32: one 144 x 24 tile
      params(32, 7, 7, 24, 144, 1, 1, 1, false),  // 24 -> 144: one 24 x 144 tile
      params(1, 13, 11, 6, 10, 3, 1, 1, false),   // M = 54, N = 10 (56 x 12 tile), K = 143
      params(3, 7, 5, 7, 9, 3, 2, 1, false),      // odd channels, stride 2
      params(2, 9, 9, 5, 13, 3, 1, 2, false),     // dilation 2, M = 45, N = 13
      params(2, 6, 6, 16, 36, 5, 1, 1, false),    // 5x5: M = 400, N = 36
      params(1, 5, 5, 3, 5, 3, 1, 1, false),      // M = 27, N = 5: under 32 invocations, gemm_tiles
      params(2, 4, 4, 520, 8, 1, 1, 1, false),    // M = 520 > 512: gemm_tiles
  };
  for (const ConvParams& p : cases) {
    test::conv_case<float>(variants, ConvKernel::bwd_filter, p, rng);
    test::conv_case<double>(variants, ConvKernel::bwd_filter, p, rng);
  }
}

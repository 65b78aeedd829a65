// The vectorised Vulkan shaders (vulkan/shaders/*_v4.comp: depthwise forward and gradients,
// batch-norm statistics and normalisation, the batch-norm gradient's two passes) at the sizes
// where their index math has edges, against the reference backend: channel counts around the vector width (4) and the workgroup's column count
// (8-32 quads), output/input widths that leave a partial column group (the shaders' OX = 4 and
// IX = 2), 1x1 images, filters of more than 9 taps (the filter gradient's TAPS), stride 2,
// dilation, batch 32; channel counts that are not a multiple of 4 and depth multipliers > 1 take
// the scalar shaders and are here as the neighbours. Every case also reruns for the same bits.
// With GRADRT_VULKAN_SHADERS=v1 (ctest `vulkan_v1`) the same cases run the scalar shaders.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "harness.h"

namespace {

using gradrt::BatchNormParams;
using gradrt::ConvParams;
using test::ConvKernel;

// Depthwise geometry: SAME-like padding for odd windows (pad (eh-1)/2), any stride/dilation.
ConvParams dw_params(int64_t n, int64_t h, int64_t w, int64_t c, int64_t m, int64_t f, int64_t stride,
                     int64_t dilation) {
  ConvParams p;
  p.batch = n, p.in_h = h, p.in_w = w, p.in_c = c, p.filter_in_c = c, p.depth_multiplier = m, p.out_c = c * m;
  p.filter_h = p.filter_w = f;
  p.stride_h = p.stride_w = stride;
  p.dilation_h = p.dilation_w = dilation;
  const int64_t e = (f - 1) * dilation + 1;  // the dilated window
  p.pad_top = p.pad_left = (e - 1) / 2;
  p.out_h = (h + 2 * p.pad_top - e) / stride + 1;
  p.out_w = (w + 2 * p.pad_left - e) / stride + 1;
  return p;
}

}  // namespace

TEST_CASE("vulkan: vec4 depthwise shaders at edge sizes vs reference") {
  test::ValidationCheck validation;
  auto variants = test::variants("vulkan");
  if (variants.empty()) return;
  std::mt19937 rng(2201);
  const ConvParams cases[] = {
      dw_params(1, 1, 1, 4, 1, 3, 1, 1),     // one pixel, one quad
      dw_params(1, 1, 1, 4, 1, 1, 1, 1),     // 1x1 filter
      dw_params(2, 3, 5, 8, 1, 3, 1, 1),     // width 5: a partial group of OX and of IX
      dw_params(1, 7, 7, 12, 1, 3, 2, 1),    // stride 2, odd size
      dw_params(3, 6, 9, 24, 1, 3, 1, 2),    // dilation 2
      dw_params(1, 9, 11, 36, 1, 5, 1, 1),   // 25 taps: three TAPS groups in the filter gradient
      dw_params(1, 5, 6, 132, 1, 3, 2, 1),   // 33 quads: several column groups, the last partial
      dw_params(2, 4, 4, 128, 1, 3, 1, 1),   // 32 quads: 32 columns
      dw_params(2, 3, 3, 64, 1, 3, 1, 1),    // 16 quads: 16 columns
      dw_params(32, 7, 7, 96, 1, 3, 1, 1),   // batch 32
      dw_params(32, 14, 14, 32, 1, 3, 2, 1), // batch 32, stride 2
      dw_params(2, 5, 5, 6, 1, 3, 1, 1),     // channels not a multiple of 4: scalar shaders
      dw_params(1, 5, 7, 7, 1, 3, 1, 1),
      dw_params(2, 5, 5, 4, 2, 3, 1, 1),     // depth multiplier 2: scalar shaders
  };
  for (ConvKernel k : {ConvKernel::dw_fwd, ConvKernel::dw_bwd_input, ConvKernel::dw_bwd_filter})
    for (const ConvParams& p : cases) {
      test::conv_case<float>(variants, k, p, rng);
      test::conv_case<double>(variants, k, p, rng);
    }
}

TEST_CASE("vulkan: vec4 batch-norm shaders (statistics, normalisation, gradient) at edge sizes vs reference") {
  test::ValidationCheck validation;
  auto variants = test::variants("vulkan");
  if (variants.empty()) return;
  std::mt19937 rng(2202);
  const struct {
    int64_t rows, channels;
  } shapes[] = {{1, 4}, {3, 8}, {49, 24}, {1568, 24}, {7, 132}, {32 * 49, 96}, {32 * 196, 24},
                {200, 128}, {50, 64}, {5, 6}, {33, 7}};  // the last two: not a multiple of 4 (scalar shaders)
  for (const auto& sh : shapes)
    for (int training = 0; training < 2; ++training) {
      BatchNormParams p;
      p.rows = sh.rows, p.channels = sh.channels, p.epsilon = 0.001f, p.is_training = training == 1;
      CAPTURE(p.rows);
      CAPTURE(p.channels);
      CAPTURE(p.is_training);
      const int64_t n = p.rows * p.channels, C = p.channels;
      const auto x = test::random_vec<float>(rng, n, -2, 3), dy = test::random_vec<float>(rng, n);
      const auto scale = test::random_vec<float>(rng, C, 0.5, 2), offset = test::random_vec<float>(rng, C);
      const auto mean = test::random_vec<float>(rng, C, 0, 1), var = test::random_vec<float>(rng, C, 0.5, 2);
      const double R = double(p.rows);
      test::on_every_variant<float>(
          variants,
          [&](gradrt::Backend* b, int threads, std::vector<std::vector<float>>* out) {
            out->assign(6, {});
            auto& o = *out;
            o[0].assign(C, -7.f), o[1].assign(C, -7.f), o[2].assign(n, -7.f);
            o[3].assign(n, -7.f), o[4].assign(C, -7.f), o[5].assign(C, -7.f);
            const gradrt::Exec e{threads};
            gradrt::Status s = b->batch_norm_stats(e, p, x.data(), o[0].data(), o[1].data());
            if (s.ok())
              s = b->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), mean.data(), var.data(),
                                      o[2].data());
            if (s.ok())
              s = b->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(),
                                           o[3].data(), o[4].data(), o[5].data());
            return s;
          },
          [&](const test::Variant& v, const auto& got, const auto& want) {
            test::check(v, got[0], want[0], {{R, 3}, {R, 3}}, "batch_norm_stats mean");
            test::check(v, got[1], want[1], {{R, 9}, {R, 9}}, "batch_norm_stats variance");
            test::check(v, got[2], want[2], {{4, 8}, {4, 8}}, "batch_norm_apply");
            test::check(v, got[3], want[3], {{R, 8}, {R, 16}}, "x_backprop");
            test::check(v, got[4], want[4], {{R, 4}, {R, 3 * std::sqrt(R)}}, "scale_backprop");
            test::check(v, got[5], want[5], {{R, 1}, {R, std::sqrt(R)}}, "offset_backprop");
          });
    }
}

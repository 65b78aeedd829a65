// Conv2DBackpropInput's GEMM variants on Vulkan (vulkan/ops/conv2d_backprop_input.cpp, InputVariant:
// base pad fit large big split blocked bigblocked phase; GRADRT_VULKAN_INPUT picks one for a
// process), each on the validated backend against the reference backend, at the sizes where their
// tiles have edges: 8 channels (narrow 128x16 tile), 17 and 30 (fit: 20 and 32 wide), 24 <- 144 1x1,
// 130 and 256 (big: 128x128, partial column tiles), groups 2 (split's z = chunk * groups + group),
// few rows (split into several chunks), K = 2700 (a short last chunk), strides 2 and 3 with even
// and odd sides, 1x1 and 5x5 filters (phase: classes without taps), stride 2 with groups. Tiles
// and the owner of each output change no sum's order, and phase skips only zero products, so
// every variant but split must give base's bits; split (other chunk sums) must be deterministic.
// float32 and float64.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "harness.h"
#include "variants.h"

namespace gradrt::vk::testing {
__attribute__((weak)) bool set_input_variant(const std::string& name);
__attribute__((weak)) std::string input_variant_name();
}  // namespace gradrt::vk::testing

namespace {

namespace hooks = gradrt::vk::testing;
const std::string kVariants[] = {"base", "pad",     "fit",        "large", "big",
                                 "split", "blocked", "bigblocked", "phase", "auto"};

struct RestoreVariant {
  std::string saved = hooks::input_variant_name();
  ~RestoreVariant() { hooks::set_input_variant(saved); }
};

template <class T>
void input_variants_case(gradrt::Backend* be, const test::Variant& v, const gradrt::ConvParams& p, std::mt19937& rng) {
  using test::ConvKernel;
  const auto x = test::random_vec<T>(rng, p.x_elements());
  const auto w = test::random_vec<T>(rng, p.w_elements());
  const auto dy = test::random_vec<T>(rng, p.y_elements());
  const std::string what = test::describe(p);
  CAPTURE(what);
  std::vector<T> want, base;
  REQUIRE(test::run_conv(gradrt::reference_backend(), ConvKernel::bwd_input, p, 1, x, w, dy, &want).ok());
  const double red = test::reduction_length(ConvKernel::bwd_input, p);
  for (const std::string& name : kVariants) {
    CAPTURE(name);
    REQUIRE(hooks::set_input_variant(name));
    std::vector<T> got, again;
    const gradrt::Status s = test::run_conv(be, ConvKernel::bwd_input, p, 1, x, w, dy, &got);
    if (test::device_lacks_dtype(s)) return;
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    test::check(v, got, want, {{red, std::sqrt(red)}, {red, std::sqrt(red)}}, what);
    REQUIRE(test::run_conv(be, ConvKernel::bwd_input, p, 1, x, w, dy, &again).ok());
    CHECK_MESSAGE(test::same_bits(again, got), name << ": a rerun changed the bits");
    if (name == "base") base = got;
    else if (name != "split" && name != "auto") CHECK_MESSAGE(test::same_bits(got, base), name << ": other bits than base");
  }
}

}  // namespace

TEST_CASE("vulkan: Conv2DBackpropInput variants (GRADRT_VULKAN_INPUT) vs reference; base's bits but split") {
  test::ValidationCheck validation;
  auto variants = test::variants("vulkan");
  if (variants.empty()) return;
  REQUIRE(hooks::set_input_variant);
  RestoreVariant restore;
  using test::same_conv_params;
  std::mt19937 rng(2214);
  const gradrt::ConvParams cases[] = {
      same_conv_params(2, 5, 5, 8, 16, 3, 1),       // N = 8: the narrow 128x16 tile
      same_conv_params(2, 9, 7, 17, 8, 3, 1),       // N = 17: fit's 20-wide tile
      same_conv_params(3, 11, 13, 30, 12, 3, 2),    // N = 30, stride 2
      same_conv_params(4, 7, 7, 24, 144, 1, 1),     // 1x1 24 <- 144 (K = 144)
      same_conv_params(2, 5, 5, 130, 20, 3, 1),     // N = 130: big's second column tile is 2 wide
      same_conv_params(1, 6, 6, 256, 32, 3, 1),     // N = 256, M = 36 rows: split into 3 chunks of 96
      same_conv_params(2, 6, 6, 32, 48, 3, 1, 2),   // groups 2
      same_conv_params(1, 3, 3, 64, 300, 3, 1),     // K = 2700: split's last chunk shorter
      // phase (stride > 1): classes of rows/columns by (i + pad) % stride, each with its own taps
      same_conv_params(2, 8, 8, 16, 24, 3, 2),      // even side, stride 2: pad 0 on top
      same_conv_params(2, 7, 9, 12, 8, 1, 2),       // 1x1 stride 2: three classes without taps (zeros)
      same_conv_params(1, 10, 11, 8, 8, 5, 3),      // 5x5 stride 3: 9 classes of 1-2 taps per side
      same_conv_params(2, 6, 6, 32, 48, 3, 2, 2),   // stride 2, groups 2: z = class * groups + group
  };
  for (const gradrt::ConvParams& p : cases) {
    input_variants_case<float>(variants[0].backend, variants[0], p, rng);
    input_variants_case<double>(variants[0].backend, variants[0], p, rng);
  }
}

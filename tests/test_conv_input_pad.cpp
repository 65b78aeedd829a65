// Conv2DBackpropInput on a zero-bordered copy of dy (simd/kernels/conv2d_backprop_input.h,
// conv2d_backprop_input_dy_pad): small images, where most GEMM tiles hold an edge pixel, run
// every tile as merged K runs from the padded copy. Checked on every ISA unit and tile against
// the reference (float, double, 1-3 threads), bitwise against the same shapes without the copy
// (GRADRT_CPU_TILES=input_pad=0) and without row tiles (input_rows=0), and the rule (which shapes take it) through the workspace and
// the plan's tiles string. Then strided shapes at batch > 1 (the phase classes' tiles span
// images and class rows) on every ISA unit and tile, against the reference and across threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "backend.h"
#include "cases.h"
#include "harness.h"
#include "simd/cpu_isa.h"
#include "simd/tuning.h"

namespace {

namespace simd = gradrt::simd;

// Which shapes take the copy: the rule estimates the share of tiles with an edge pixel, which
// depends on the tile's rows (12/6 AVX-512, 6 AVX2/SSE, 4 scalar); `either` where it differs.
enum class Pad { on, off, either };
struct Shape {
  gradrt::ConvParams p;
  Pad pad;
};

// 3x3 s1 on 16x16, s2 on 32x32 and 9x8, 5x5 on 7x9, images smaller than the filter, VALID,
// explicit uneven padding, strides 2x3 with vertical dilation, a vertical stride and dilation of
// 2 with odd padding (the odd rows' class has no tap: zeros); then 56x56 3x3 s1 (few edge tiles)
// and 1x1 (no edge).
std::vector<Shape> shapes() {
  using test::same_conv_params;
  std::vector<Shape> v = {{same_conv_params(3, 16, 16, 32, 24, 3, 1), Pad::either},
                          {same_conv_params(2, 32, 32, 32, 40, 3, 2), Pad::off},
                          {same_conv_params(2, 9, 8, 20, 12, 3, 2), Pad::either},
                          {same_conv_params(1, 7, 9, 64, 16, 5, 1), Pad::on},
                          {same_conv_params(4, 3, 3, 8, 8, 3, 1), Pad::on},
                          {same_conv_params(2, 1, 5, 16, 8, 3, 1), Pad::on}};
  gradrt::ConvParams valid = same_conv_params(2, 10, 11, 24, 16, 3, 1);  // VALID
  valid.pad_top = valid.pad_left = 0, valid.out_h = 8, valid.out_w = 9;
  v.push_back({valid, Pad::on});
  gradrt::ConvParams e = same_conv_params(2, 10, 10, 16, 16, 3, 1);  // explicit, more after
  e.pad_top = 2, e.pad_left = 0, e.out_h = 10 + 2 + 1 - 3 + 1, e.out_w = 10 + 0 + 3 - 3 + 1;
  v.push_back({e, Pad::either});
  gradrt::ConvParams d = same_conv_params(2, 11, 13, 16, 24, 3, 1);  // VALID, strides 2x3, dilation 2x1
  d.stride_h = 2, d.stride_w = 3, d.dilation_h = 2, d.pad_top = d.pad_left = 0;
  d.out_h = (d.in_h - 5) / 2 + 1, d.out_w = (d.in_w - 3) / 3 + 1;
  v.push_back({d, Pad::either});
  gradrt::ConvParams z = same_conv_params(2, 10, 9, 16, 16, 3, 1);  // rows: stride 2, dilation 2, pad 2
  z.stride_h = 2, z.dilation_h = 2, z.pad_top = 2, z.out_h = 5;
  v.push_back({z, Pad::either});
  // Row tiles (conv2d_backprop_input_dy_pad `rows`): class rows of 12, 8 and 16 (s2: 8) pixels,
  // which 12-, 8-, 6-, 4- and 2-row tiles divide, batch > 1, two column panels on 12x2 (48).
  v.push_back({same_conv_params(2, 12, 12, 16, 16, 3, 1), Pad::either});
  v.push_back({same_conv_params(3, 8, 8, 48, 32, 3, 1), Pad::on});
  v.push_back({same_conv_params(2, 16, 16, 64, 40, 3, 2), Pad::either});
  v.push_back({same_conv_params(1, 56, 56, 32, 32, 3, 1), Pad::off});
  v.push_back({same_conv_params(2, 8, 8, 32, 32, 1, 1), Pad::off});
  return v;
}

std::string tiles_of(const gradrt::ConvParams& p) {  // PlanInfo::tiles of this shape
  gradrt::KernelQuery q{gradrt::Kernel::conv2d_backprop_input, gradrt::DType::float32, &p, 0, 0, 1};
  return gradrt::cpu_backend()->tiles_for(q);
}

size_t workspace(const gradrt::ConvParams& p, int threads) {
  gradrt::KernelQuery q{gradrt::Kernel::conv2d_backprop_input, gradrt::DType::float32, &p, 0, 0, threads};
  return gradrt::cpu_backend()->workspace_size(q);
}

std::vector<float> run(const gradrt::ConvParams& p, int threads, const std::vector<float>& w,
                       const std::vector<float>& dy) {
  std::vector<float> dx;
  REQUIRE(test::run_conv(gradrt::cpu_backend(), test::ConvKernel::bwd_input, p, threads, {}, w, dy, &dx).ok());
  return dx;
}

// Calls f(isa, tuning, variants) for every ISA of this machine and every GEMM tile of its unit:
// the unit's tuning with that tile as the input-gradient tile (not fitted to dx channels), and
// the cpu test variants of that ISA.
template <class F>
void for_each_input_tile(F&& f) {
  for (simd::Isa isa : simd::supported_isas()) {
    const simd::ConvTuning saved = simd::cpu_tuning(isa);
    REQUIRE(simd::set_cpu_isa(isa));
    for (const simd::GemmTile& tile : simd::unit_tiles(isa).gemm) {
      if (tile.rows == 0) continue;
      CAPTURE(simd::isa_name(isa));
      CAPTURE(tile.rows);
      simd::ConvTuning t = saved;
      t.backprop_input = tile;
      t.input_fit_columns = false;
      std::vector<test::Variant> here;
      for (const test::Variant& v : test::variants("cpu"))
        if (v.isa == isa) here.push_back(v);
      f(isa, t, here);
    }
  }
}

// Checks p against the reference (float and double, the cpu variants' thread counts) and
// draws the filter and dy that the bitwise comparisons then run on.
void against_reference(std::vector<test::Variant>& here, const gradrt::ConvParams& p, std::mt19937& rng,
                       std::vector<float>* w, std::vector<float>* dy) {
  test::conv_case<float>(here, test::ConvKernel::bwd_input, p, rng);
  test::conv_case<double>(here, test::ConvKernel::bwd_input, p, rng);
  *w = test::random_vec<float>(rng, p.w_elements());
  *dy = test::random_vec<float>(rng, p.y_elements());
}

}  // namespace

TEST_CASE("cpu: the input gradient on padded dy, every ISA and tile, against the reference and bitwise") {
  test::IsaGuard guard;
  test::TuningGuard tuning;
  std::mt19937 rng(2112);
  const std::vector<Shape> all = shapes();
  int compared = 0, row_tiles = 0;
  for_each_input_tile([&](simd::Isa isa, const simd::ConvTuning& on_groups, std::vector<test::Variant>& here) {
    // Padded dy itself, without the edge groups that take most of its shapes by default.
    simd::ConvTuning on = on_groups, off, no_rows;
    on.input_edge_groups = false;
    off = on, no_rows = on;
    off.input_pad_dy = false;
    no_rows.input_pad_rows = false;
    REQUIRE(on.input_pad_rows);
    for (size_t i = 0; i < all.size(); ++i) {
      const gradrt::ConvParams& p = all[i].p;
      CAPTURE(test::describe(p));
      // The rule, seen in the workspace: the copy's bytes on top where it is on.
      REQUIRE(simd::set_cpu_tuning(isa, off));
      const size_t ws_off = workspace(p, 2);
      REQUIRE(simd::set_cpu_tuning(isa, on));
      const size_t ws_on = workspace(p, 2);
      if (all[i].pad == Pad::on) CHECK(ws_on > ws_off);
      if (all[i].pad == Pad::off) CHECK(ws_on == ws_off);
      const std::string tiles = tiles_of(p);
      CHECK((tiles.find(", padded dy") != std::string::npos) == (ws_on > ws_off));  // one rule
      const bool rows = tiles.find(", row tiles") != std::string::npos;
      CHECK((!rows || ws_on > ws_off));  // row tiles only on padded dy
      row_tiles += rows;
      // Against the reference; then the same bits with and without the copy, at 1 and 3 threads.
      std::vector<float> w, dy;
      against_reference(here, p, rng, &w, &dy);
      const std::vector<float> a1 = run(p, 1, w, dy), a3 = run(p, 3, w, dy);
      REQUIRE(simd::set_cpu_tuning(isa, off));
      const std::vector<float> b1 = run(p, 1, w, dy);
      REQUIRE(a1.size() == b1.size());
      CHECK(std::memcmp(a1.data(), b1.data(), a1.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(a3.data(), b1.data(), a1.size() * sizeof(float)) == 0);
      // Padded dy without row tiles (GRADRT_CPU_TILES=input_rows=0): the same bits too.
      REQUIRE(simd::set_cpu_tuning(isa, no_rows));
      CHECK(tiles_of(p).find(", row tiles") == std::string::npos);
      const std::vector<float> c2 = run(p, 2, w, dy);
      CHECK(std::memcmp(c2.data(), b1.data(), a1.size() * sizeof(float)) == 0);
      ++compared;
    }
  });
  MESSAGE("padded/unpadded pairs compared: " << compared << ", with row tiles: " << row_tiles);
  CHECK(row_tiles > 0);
}

namespace {

// Strided shapes at batch > 1, with odd sizes, SAME / VALID / explicit
// padding, strides 2 and 3, a 1x1 s2 (classes without taps: zeros), two column panels (48 dx
// channels on 12x2), groups and dilation (per-tap path), and batch 1 (unchanged order).
std::vector<gradrt::ConvParams> strided_shapes() {
  using test::same_conv_params;
  std::vector<gradrt::ConvParams> v = {same_conv_params(3, 17, 15, 24, 40, 3, 2), same_conv_params(3, 9, 9, 8, 16, 1, 2),
                                       same_conv_params(2, 20, 19, 48, 16, 5, 2), same_conv_params(2, 12, 12, 16, 32, 3, 2, 2),
                                       same_conv_params(1, 15, 15, 16, 16, 3, 2), same_conv_params(4, 28, 28, 16, 24, 3, 2)};
  gradrt::ConvParams valid = same_conv_params(2, 13, 14, 16, 24, 3, 3);  // VALID, stride 3
  valid.pad_top = valid.pad_left = 0, valid.out_h = (13 - 3) / 3 + 1, valid.out_w = (14 - 3) / 3 + 1;
  v.push_back(valid);
  gradrt::ConvParams e = same_conv_params(3, 11, 10, 16, 16, 3, 2);  // explicit 2/1 rows, 0/2 columns
  e.pad_top = 2, e.pad_left = 0, e.out_h = (11 + 3 - 3) / 2 + 1, e.out_w = (10 + 2 - 3) / 2 + 1;
  v.push_back(e);
  gradrt::ConvParams d = same_conv_params(2, 11, 13, 16, 24, 3, 1);  // VALID, strides 2x3, dilation 2x1
  d.stride_h = 2, d.stride_w = 3, d.dilation_h = 2, d.pad_top = d.pad_left = 0;
  d.out_h = (d.in_h - 5) / 2 + 1, d.out_w = (d.in_w - 3) / 3 + 1;
  v.push_back(d);
  return v;
}

// Edge groups (conv2d_backprop_input_edge_groups): widths 1..17 (one to three column groups
// per side, a class narrower than the filter, columns with no tap), pads 0..2, strides 1..3,
// dilated rows, 3x3 and 5x5, odd channel counts, batch 1-3 (tiles spanning images).
std::vector<gradrt::ConvParams> edge_group_shapes() {
  std::vector<gradrt::ConvParams> v;
  for (int64_t w = 1; w <= 17; ++w) {
    gradrt::ConvParams p;
    p.batch = 1 + w % 3, p.in_w = w, p.in_h = 1 + (w * 5) % 9;
    p.in_c = p.filter_in_c = 16 + w % 5, p.out_c = 8 + 3 * (w % 4);
    p.filter_h = p.filter_w = w % 4 == 0 ? 5 : 3;
    p.stride_h = 1 + (w + 1) % 3, p.stride_w = 1 + w % 3, p.dilation_h = w % 5 == 0 ? 2 : 1;
    p.pad_top = (w + 1) % 3, p.pad_left = w % 3;
    // Explicit padding, the bottom/right as the top/left: out = (in + 2 pad - window) / s + 1.
    const int64_t wh = (p.filter_h - 1) * p.dilation_h + 1, ww = p.filter_w;
    p.out_h = std::max<int64_t>(0, (p.in_h + 2 * p.pad_top - wh) / p.stride_h + 1);
    p.out_w = std::max<int64_t>(0, (p.in_w + 2 * p.pad_left - ww) / p.stride_w + 1);
    if (p.in_h + 2 * p.pad_top < wh || p.in_w + 2 * p.pad_left < ww) continue;
    v.push_back(p);
  }
  // The Keras rows' geometry: 3x3 s1 16x16 and s2 32x32 / 16x16 (SAME), batch 2.
  v.push_back(test::same_conv_params(2, 16, 16, 32, 32, 3, 1));
  v.push_back(test::same_conv_params(2, 32, 32, 32, 64, 3, 2));
  v.push_back(test::same_conv_params(2, 16, 16, 64, 40, 3, 2));
  return v;
}

}  // namespace

TEST_CASE("cpu: the strided input gradient at batch > 1, every ISA and tile, against the reference and across threads") {
  test::IsaGuard guard;
  test::TuningGuard tuning;
  std::mt19937 rng(2113);
  const std::vector<gradrt::ConvParams> all = strided_shapes();
  int compared = 0;
  for_each_input_tile([&](simd::Isa isa, const simd::ConvTuning& t, std::vector<test::Variant>& here) {
    REQUIRE(simd::set_cpu_tuning(isa, t));
    for (const gradrt::ConvParams& p : all) {
      CAPTURE(test::describe(p));
      std::vector<float> w, dy;
      against_reference(here, p, rng, &w, &dy);
      const std::vector<float> a1 = run(p, 1, w, dy), a2 = run(p, 2, w, dy), a3 = run(p, 3, w, dy);
      REQUIRE(a1.size() == a2.size());
      REQUIRE(a1.size() == a3.size());
      CHECK(std::memcmp(a1.data(), a2.data(), a1.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(a1.data(), a3.data(), a1.size() * sizeof(float)) == 0);
      ++compared;
    }
  });
  MESSAGE("strided shapes compared: " << compared);
}

TEST_CASE("cpu: the input gradient in edge groups, every ISA and tile, against the reference and bitwise") {
  test::IsaGuard guard;
  test::TuningGuard tuning;
  std::mt19937 rng(2114);
  const std::vector<gradrt::ConvParams> all = edge_group_shapes();
  int grouped = 0, compared = 0;
  for_each_input_tile([&](simd::Isa isa, const simd::ConvTuning& tile, std::vector<test::Variant>& here) {
    simd::ConvTuning on = tile, off = tile, per_tap = tile;
    on.input_edge_groups = true;
    off.input_edge_groups = false;                           // padded dy or the per-tap path
    per_tap.input_edge_groups = per_tap.input_pad_dy = false;  // the per-tap path
    for (const gradrt::ConvParams& p : all) {
      CAPTURE(test::describe(p));
      REQUIRE(simd::set_cpu_tuning(isa, on));
      const bool groups = tiles_of(p).find(", edge groups") != std::string::npos;
      grouped += groups;
      // Against the reference; then the same bits as the other paths, at 1 and 3 threads.
      std::vector<float> w, dy;
      against_reference(here, p, rng, &w, &dy);
      const std::vector<float> a1 = run(p, 1, w, dy), a3 = run(p, 3, w, dy);
      REQUIRE(simd::set_cpu_tuning(isa, off));
      CHECK(tiles_of(p).find(", edge groups") == std::string::npos);
      const std::vector<float> b2 = run(p, 2, w, dy);
      REQUIRE(simd::set_cpu_tuning(isa, per_tap));
      const std::vector<float> c1 = run(p, 1, w, dy);
      REQUIRE(a1.size() == b2.size());
      REQUIRE(a1.size() == c1.size());
      CHECK(std::memcmp(a1.data(), b2.data(), a1.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(a3.data(), b2.data(), a1.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(a1.data(), c1.data(), a1.size() * sizeof(float)) == 0);
      ++compared;
    }
  });
  MESSAGE("edge-group shapes compared: " << compared << ", in edge groups: " << grouped);
  CHECK(grouped * 2 > compared);
}

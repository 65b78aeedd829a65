// The backend harness: every kernel of gradrt::Backend on every variant (tests/variants.h: the
// cpu backend at each ISA this machine runs, the vulkan backend with validation) against the
// reference backend, on the shared generated cases (tests/cases.h): random geometries that reach
// every vector tail, padding, stride, dilation and group branch, larger ones (several tiles,
// split reductions), empty operands; float and double. Each variant has its tolerance (eps per
// summed term) and its reruns that must give the same bits (cpu: 2 and 3 threads; vulkan: once).
// Per-backend files keep what only one backend has: test_cpu_backend.cpp (ISA selection, kernel
// fast paths, alignment), test_vulkan_backend.cpp (pipeline cache, loader, limits, threads).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using gradrt::BatchNormParams;
using gradrt::ConvParams;
using gradrt::Exec;
using gradrt::FracPoolParams;
using gradrt::Status;
using test::ConvKernel;
using test::random_vec;
using test::Variant;
using test::check;
using test::conv_case;
using test::on_every_variant;

int64_t rnd(std::mt19937& rng, int64_t lo, int64_t hi) { return test::uniform(rng, lo, hi); }  // inclusive

// Who takes case c of a sweep of `small` small cases and then large ones: the cpu variants
// every small case, the devices the first `device_small` and every large one.
std::function<bool(const Variant&)> share(int c, int small, int device_small) {
  return [=](const Variant& v) { return v.gpu ? (c < device_small || c >= small) : c < small; };
}

// n cases of a sweep: body(variants, rng, c) for c = 0..n-1, the ISA restored and every
// validation message failing the test case afterwards.
template <class Body>
void sweep(int n, uint32_t seed, Body body) {
  test::IsaGuard guard;
  test::ValidationCheck validation;
  auto variants = test::variants();
  std::mt19937 rng(seed);
  for (int c = 0; c < n; ++c) body(variants, rng, c);
}

// `cases` small random geometries (the devices take the first `device_cases`), then `big`
// larger ones for the devices (several tiles, split-K), for k.
template <class T>
void conv_sweep(ConvKernel k, int cases, int device_cases, int big, uint32_t seed) {
  sweep(cases + big, seed, [&](std::vector<Variant>& variants, std::mt19937& rng, int c) {
    const ConvParams p = test::random_conv_params(rng, test::is_depthwise(k), c >= cases, c >= cases ? 3 : 4);
    conv_case<T>(variants, k, p, rng, c < cases || c % 5 == 0, share(c, cases, device_cases));
  });
}

}  // namespace

// The six conv-family kernels, float then double, each with its own seed.
TEST_CASE("backends: conv-family kernels vs reference") {
  const struct {
    ConvKernel kernel;
    const char* op;
    int big;
  } kernels[] = {{ConvKernel::fwd, "Conv2D", 4},
                 {ConvKernel::bwd_input, "Conv2DBackpropInput", 4},
                 {ConvKernel::bwd_filter, "Conv2DBackpropFilter", 4},
                 {ConvKernel::dw_fwd, "DepthwiseConv2dNative", 3},
                 {ConvKernel::dw_bwd_input, "DepthwiseConv2dNativeBackpropInput", 3},
                 {ConvKernel::dw_bwd_filter, "DepthwiseConv2dNativeBackpropFilter", 3}};
  uint32_t seed = 1;
  for (const auto& e : kernels) {
    CAPTURE(e.op);
    conv_sweep<float>(e.kernel, 60, 40, e.big, seed++);
    conv_sweep<double>(e.kernel, 20, 10, 1, seed++);
  }
}

TEST_CASE("backends: conv kernels with empty operands") {
  test::IsaGuard guard;
  test::ValidationCheck validation;
  auto variants = test::variants();
  // Only the filter gradients have outputs: zeros (an empty sum), the same as the reference.
  for (ConvKernel k : {ConvKernel::fwd, ConvKernel::bwd_input, ConvKernel::bwd_filter, ConvKernel::dw_fwd,
                       ConvKernel::dw_bwd_input, ConvKernel::dw_bwd_filter})
    for (const ConvParams& p : test::empty_conv_params(test::is_depthwise(k))) {
      CAPTURE(test::describe(p));
      const std::vector<float> none, w(p.w_elements() + p.dw_w_elements(), 1.f);
      on_every_variant<float>(
          variants,
          [&](gradrt::Backend* b, int threads, std::vector<std::vector<float>>* out) {
            out->resize(1);
            return test::run_conv(b, k, p, threads, none, w, none, &(*out)[0]);
          },
          [&](const Variant&, const auto& got, const auto& want) {
            CHECK(got[0] == want[0]);
            for (float v : want[0]) CHECK(v == 0.f);
          });
    }
}

// ---------------------------------------------------------------- batch norm

namespace {

// [rows, channels] cases: the first with no rows, then `cases` up to 40 and 3000 rows (the
// devices take the first `device_cases`), then `big` from 3000 to big_rows rows for the
// devices (several row splits).
template <class T>
void batch_norm_sweep(int cases, int device_cases, int big, int64_t big_rows, uint32_t seed) {
  sweep(cases + big, seed, [&](std::vector<Variant>& variants, std::mt19937& rng, int c) {
    BatchNormParams p;
    p.rows = c == 0 ? 0 : c < cases ? rnd(rng, 1, c < cases / 2 ? 40 : 3000) : rnd(rng, 3000, big_rows);
    p.channels = rnd(rng, 1, 70);
    p.epsilon = c % 2 ? 0.001f : 1e-5f;
    p.is_training = rnd(rng, 0, 3) != 0;
    const int64_t n = p.rows * p.channels, C = p.channels;
    const auto x = random_vec<T>(rng, n, -2, 3), dy = random_vec<T>(rng, n);
    const auto scale = random_vec<T>(rng, C, 0.5, 2), offset = random_vec<T>(rng, C);
    const auto mean = random_vec<T>(rng, C, 0, 1), var = random_vec<T>(rng, C, 0.5, 2);
    CAPTURE(p.rows);
    CAPTURE(p.channels);
    CAPTURE(p.is_training);
    const double R = double(std::max<int64_t>(p.rows, 1));
    on_every_variant<T>(
        variants,
        [&](gradrt::Backend* b, int threads, std::vector<std::vector<T>>* out) {
          out->assign(6, {});
          auto& o = *out;
          o[0].assign(C, T(-7)), o[1].assign(C, T(-7)), o[2].assign(n, T(-7));
          o[3].assign(n, T(-7)), o[4].assign(C, T(-7)), o[5].assign(C, T(-7));
          const Exec e{threads};
          Status s = b->batch_norm_stats(e, p, x.data(), o[0].data(), o[1].data());
          if (s.ok()) s = b->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), mean.data(), var.data(), o[2].data());
          if (s.ok())
            s = b->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(), o[3].data(),
                                         o[4].data(), o[5].data());
          return s;
        },
        [&](const Variant& v, const auto& got, const auto& want) {
          if (p.rows > 0) {
            check(v, got[0], want[0], {{R, 3}, {R, 3}}, "batch_norm_stats mean");
            check(v, got[1], want[1], {{R, 9}, {R, 9}}, "batch_norm_stats variance");
          }
          check(v, got[2], want[2], {{4, 8}, {4, 8}}, "batch_norm_apply");
          check(v, got[3], want[3], {{R, 8}, {R, 16}}, "fused_batch_norm_grad x_backprop");
          check(v, got[4], want[4], {{R, 4}, {R, 3 * std::sqrt(R)}}, "fused_batch_norm_grad scale_backprop");
          check(v, got[5], want[5], {{R, 1}, {R, std::sqrt(R)}}, "fused_batch_norm_grad offset_backprop");
        },
        true, share(c, cases, device_cases));
  });
}

// FractionalAvgPool and its gradient: `cases` small inputs (dups: empty cells), then `big`
// up to 3 x 23 x 29 x 13.
template <class T>
void frac_pool_sweep(int cases, int big, uint32_t seed) {
  sweep(cases + big, seed, [&](std::vector<Variant>& variants, std::mt19937& rng, int c) {
    const bool large = c >= cases;
    FracPoolParams p;
    p.batch = rnd(rng, 1, large ? 3 : 2);
    p.in_h = rnd(rng, large ? 2 : 1, large ? 23 : 12);
    p.in_w = rnd(rng, large ? 2 : 1, large ? 29 : 12);
    p.channels = rnd(rng, 1, large ? 13 : 37);
    p.out_h = rnd(rng, 1, p.in_h);
    p.out_w = rnd(rng, 1, p.in_w);
    p.overlapping = rnd(rng, 0, 1) == 1;
    const bool dups = rnd(rng, 0, 4) == 0 && !p.overlapping;
    const auto rs = test::random_seq(rng, p.in_h, p.out_h, dups), cs = test::random_seq(rng, p.in_w, p.out_w, dups);
    p.row_seq = rs.data();
    p.col_seq = cs.data();
    const int64_t nx = p.batch * p.in_h * p.in_w * p.channels, ny = p.batch * p.out_h * p.out_w * p.channels;
    const auto x = random_vec<T>(rng, nx), dy = random_vec<T>(rng, ny);
    CAPTURE(p.in_h);
    CAPTURE(p.in_w);
    CAPTURE(p.out_h);
    CAPTURE(p.out_w);
    CAPTURE(p.overlapping);
    on_every_variant<T>(
        variants,
        [&](gradrt::Backend* b, int threads, std::vector<std::vector<T>>* out) {
          out->assign(2, {});
          (*out)[0].assign(ny, T(-7));
          (*out)[1].assign(nx, T(-5));
          Status s = b->fractional_avg_pool(Exec{threads}, p, x.data(), (*out)[0].data());
          if (s.ok()) s = b->fractional_avg_pool_grad(Exec{threads}, p, dy.data(), (*out)[1].data());
          return s;
        },
        [&](const Variant& v, const auto& got, const auto& want) {
          check(v, got[0], want[0], {{double(p.in_h * p.in_w), 1}, {64, 1}}, "fractional_avg_pool");
          check(v, got[1], want[1], {{4, 1}, {8, 1}}, "fractional_avg_pool_grad");
        });
  });
}

}  // namespace

TEST_CASE("backends: FusedBatchNorm and FusedBatchNormGrad vs reference") {
  batch_norm_sweep<float>(40, 25, 5, 20000, 21);
  batch_norm_sweep<double>(15, 6, 2, 9000, 22);
}

TEST_CASE("backends: FractionalAvgPool and FractionalAvgPoolGrad vs reference") {
  frac_pool_sweep<float>(60, 10, 31);
  frac_pool_sweep<double>(20, 2, 32);
}

// ---------------------------------------------------------------- relu family and bias

namespace {

using gradrt::BiasParams;
using gradrt::ReluParams;

// Random values in [-8, 8], one in four replaced by a value on a branch of the relu rules: the
// kinks 0, -0 and 6, just inside and outside them, NaN, +-inf.
template <class T>
std::vector<T> relu_values(std::mt19937& rng, int64_t n) {
  const T special[] = {T(0), T(-0.0), T(6), T(5.9999), T(6.0001), T(1e-30), T(-1e-30),
                       std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                       -std::numeric_limits<T>::infinity()};
  std::vector<T> v = random_vec<T>(rng, n, -8, 8);
  for (auto& e : v)
    if (rnd(rng, 0, 3) == 0) e = special[rnd(rng, 0, 9)];
  return v;
}

// The relu kernels and bias_add round nothing beyond one operation: every variant must give the
// reference's values exactly, the sign of a zero included (NaN where the reference has NaN).
template <class T>
void check_exact(const std::vector<T>& got, const std::vector<T>& want, const std::string& what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same = std::isnan(want[i]) ? std::isnan(got[i])
                                          : got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]);
    if (!same) {
      FAIL_CHECK(what << ": element " << i << " of " << got.size() << ": got " << got[i] << ", want " << want[i]);
      return;
    }
  }
}

// Relu / Relu6 and their gradients: every length 0..tails-1 (every vector tail and a scalar-only
// span), then lengths up to 300 and up to 70000 (several thread spans); the devices take every
// fourth case.
template <class T>
void relu_sweep(int tails, int cases, uint32_t seed) {
  sweep(tails + cases, seed, [&](std::vector<Variant>& variants, std::mt19937& rng, int c) {
    ReluParams p;
    p.n = c < tails ? c : rnd(rng, 1, c % 3 == 0 ? 70000 : 300);
    p.six = c % 2 == 1;
    const auto x = relu_values<T>(rng, p.n), dy = relu_values<T>(rng, p.n);
    CAPTURE(p.n);
    CAPTURE(p.six);
    on_every_variant<T>(
        variants,
        [&](gradrt::Backend* b, int threads, std::vector<std::vector<T>>* out) {
          out->assign(2, std::vector<T>(size_t(p.n), T(-7)));
          Status s = b->relu(Exec{threads}, p, x.data(), (*out)[0].data());
          if (s.ok()) s = b->relu_grad(Exec{threads}, p, dy.data(), x.data(), (*out)[1].data());
          return s;
        },
        [&](const Variant&, const auto& got, const auto& want) {
          check_exact(got[0], want[0], "relu");
          check_exact(got[1], want[1], "relu_grad");
        },
        true, [c](const Variant& v) { return !v.gpu || c % 4 == 0; });
  });
}

// BiasAdd and BiasAddGrad over [rows, channels]: no rows first, then up to 40 and 3000 rows
// (several fixed reduction chunks), channels 1-70 (every tail); the devices take every third case.
template <class T>
void bias_sweep(int cases, uint32_t seed) {
  sweep(cases, seed, [&](std::vector<Variant>& variants, std::mt19937& rng, int c) {
    BiasParams p;
    p.rows = c == 0 ? 0 : rnd(rng, 1, c < cases / 2 ? 40 : 3000);
    p.channels = rnd(rng, 1, 70);
    const int64_t n = p.rows * p.channels;
    const auto x = random_vec<T>(rng, n, -2, 3), bias = random_vec<T>(rng, p.channels), dy = random_vec<T>(rng, n);
    CAPTURE(p.rows);
    CAPTURE(p.channels);
    const double R = double(std::max<int64_t>(p.rows, 1));
    on_every_variant<T>(
        variants,
        [&](gradrt::Backend* b, int threads, std::vector<std::vector<T>>* out) {
          out->assign(2, {});
          (*out)[0].assign(size_t(n), T(-7));
          (*out)[1].assign(size_t(p.channels), T(-7));
          Status s = b->bias_add(Exec{threads}, p, x.data(), bias.data(), (*out)[0].data());
          if (s.ok()) s = b->bias_add_grad(Exec{threads}, p, dy.data(), (*out)[1].data());
          return s;
        },
        [&](const Variant& v, const auto& got, const auto& want) {
          check_exact(got[0], want[0], "bias_add");
          check(v, got[1], want[1], {{R, std::sqrt(R)}, {R, std::sqrt(R)}}, "bias_add_grad");
        },
        true, [c](const Variant& v) { return !v.gpu || c % 3 == 0; });
  });
}

}  // namespace

TEST_CASE("backends: Relu, Relu6 and their gradients vs reference") {
  relu_sweep<float>(70, 30, 41);
  relu_sweep<double>(40, 10, 42);
}

TEST_CASE("backends: BiasAdd and BiasAddGrad vs reference") {
  bias_sweep<float>(40, 51);
  bias_sweep<double>(12, 52);
}

// The vulkan backend (vulkan/) against the reference backend, kernel by kernel through the
// Backend interface, on random parameters: odd sizes, strides 1-3, dilations 1-2, groups,
// depth multipliers, channel counts off multiples of 4, plus shapes big enough for several
// tiles and split-K. The kernels run on a backend instance with the Khronos validation layer
// on (when installed); every validation message recorded fails the test. Without a Vulkan
// device every case is skipped with the reason. Also: the no-loader path, the pipeline cache
// on disk (written, read back, corrupt file ignored), determinism, threads, refused shapes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "backend.h"

// Hooks defined in vulkan/ (vulkan_backend.cpp, testing.cpp). Weak: when gradrt is built
// without Vulkan they are null and the tests that need them are skipped.
namespace gradrt::vk::testing {
__attribute__((weak)) Backend* validated_backend();
__attribute__((weak)) bool validation_enabled();
__attribute__((weak)) std::vector<std::string> validation_messages();
__attribute__((weak)) Status probe(const std::string& library, const std::string& cache_dir);
}  // namespace gradrt::vk::testing

namespace {

using gradrt::Backend;
using gradrt::BatchNormParams;
using gradrt::Code;
using gradrt::ConvParams;
using gradrt::Exec;
using gradrt::FracPoolParams;
using gradrt::Status;
namespace hooks = gradrt::vk::testing;

// The backend under test, or nullptr after printing why the case is skipped.
Backend* vulkan_or_skip() {
  if (!gradrt::vulkan_backend() || !hooks::validated_backend) {
    MESSAGE("skipped: gradrt was built without the Vulkan backend");
    return nullptr;
  }
  Backend* b = hooks::validated_backend();
  Status s = b->available();
  if (!s.ok()) {
    MESSAGE("skipped: " << s.to_string());
    return nullptr;
  }
  static bool once = [] {
    const std::string state = std::string("Khronos validation layer: ") +
                              (hooks::validation_enabled() ? "on" : "off (VK_LAYER_KHRONOS_validation not installed)");
    MESSAGE(state);
    return true;
  }();
  (void)once;
  return b;
}

// Fails on any validation message recorded since the last call.
struct ValidationCheck {
  size_t before = hooks::validation_messages ? hooks::validation_messages().size() : 0;
  ~ValidationCheck() {
    if (!hooks::validation_messages) return;
    const auto all = hooks::validation_messages();
    for (size_t i = before; i < all.size() && i < before + 5; ++i) MESSAGE("validation: " << all[i]);
    CHECK_MESSAGE(all.size() == before, (all.size() - before) << " Vulkan validation messages");
  }
};

template <class T = float>
std::vector<T> random_vec(std::mt19937& rng, int64_t n, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) e = T(d(rng));
  return v;
}

int64_t rnd(std::mt19937& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// |got - want| <= tol, tol growing with the reduction length k and the data's magnitude
// (float accumulation on the device vs double in the reference).
template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double k, double scale,
                 const std::string& what) {
  const double eps = std::is_same_v<T, float> ? 1.2e-7 : 2.3e-16;
  const double tol = 16 * eps * std::max(1.0, k) * std::max(1.0, scale);
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(double(got[i]) - double(want[i]));
    if (!(e <= tol)) {
      if (!bad) first = i;
      ++bad;
      worst = std::max(worst, e);
    }
  }
  INFO(what << ": " << bad << " bad, first index " << first << " got " << (got.empty() ? 0.0 : got[first])
            << " want " << (want.empty() ? 0.0 : want[first]) << " worst " << worst << " tol " << tol);
  CHECK(bad == 0);
}

ConvParams random_conv(std::mt19937& rng, bool depthwise, bool big) {
  for (;;) {
    ConvParams p;
    p.batch = big ? rnd(rng, 2, 3) : rnd(rng, 1, 2);
    p.in_h = big ? rnd(rng, 17, 33) : rnd(rng, 1, 11);
    p.in_w = big ? rnd(rng, 17, 35) : rnd(rng, 1, 13);
    p.filter_h = rnd(rng, 1, 4);
    p.filter_w = rnd(rng, 1, 4);
    p.stride_h = rnd(rng, 1, 3);
    p.stride_w = rnd(rng, 1, 3);
    p.dilation_h = rnd(rng, 1, 2);
    p.dilation_w = rnd(rng, 1, 2);
    if (depthwise) {
      p.in_c = big ? rnd(rng, 30, 70) : rnd(rng, 1, 37);
      p.depth_multiplier = rnd(rng, 0, 2) == 0 ? rnd(rng, 2, 3) : 1;
      p.filter_in_c = p.in_c;
      p.out_c = p.in_c * p.depth_multiplier;
    } else {
      p.groups = rnd(rng, 0, 2) == 0 ? rnd(rng, 2, 3) : 1;
      p.filter_in_c = big ? rnd(rng, 9, 45) : rnd(rng, 1, 41);
      p.in_c = p.filter_in_c * p.groups;
      p.out_c = (big ? rnd(rng, 17, 90) : rnd(rng, 1, 45)) * p.groups;
    }
    const int64_t eh = (p.filter_h - 1) * p.dilation_h + 1, ew = (p.filter_w - 1) * p.dilation_w + 1;
    const int64_t pt = rnd(rng, 0, eh - 1), pb = rnd(rng, 0, eh - 1);
    const int64_t pl = rnd(rng, 0, ew - 1), pr = rnd(rng, 0, ew - 1);
    if (p.in_h + pt + pb < eh || p.in_w + pl + pr < ew) continue;
    p.pad_top = pt;
    p.pad_left = pl;
    p.out_h = (p.in_h + pt + pb - eh) / p.stride_h + 1;
    p.out_w = (p.in_w + pl + pr - ew) / p.stride_w + 1;
    return p;
  }
}

std::string describe(const ConvParams& p) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "n%lld %lldx%lldx%lld -> %lldx%lldx%lld f%lldx%lldx%lld g%lld m%lld s%lld,%lld d%lld,%lld p%lld,%lld",
                (long long)p.batch, (long long)p.in_h, (long long)p.in_w, (long long)p.in_c, (long long)p.out_h,
                (long long)p.out_w, (long long)p.out_c, (long long)p.filter_h, (long long)p.filter_w,
                (long long)p.filter_in_c, (long long)p.groups, (long long)p.depth_multiplier, (long long)p.stride_h,
                (long long)p.stride_w, (long long)p.dilation_h, (long long)p.dilation_w, (long long)p.pad_top,
                (long long)p.pad_left);
  return buf;
}

enum class ConvKernel { fwd, bwd_input, bwd_filter, dw_fwd, dw_bwd_input, dw_bwd_filter };

bool is_depthwise(ConvKernel k) {
  return k == ConvKernel::dw_fwd || k == ConvKernel::dw_bwd_input || k == ConvKernel::dw_bwd_filter;
}

template <class T>
Status run_conv(Backend* b, ConvKernel k, const ConvParams& p, const std::vector<T>& x, const std::vector<T>& w,
                const std::vector<T>& dy, std::vector<T>* out) {
  const Exec e{1};
  switch (k) {
    case ConvKernel::fwd:
      out->assign(p.y_elements(), -7.0f);
      return b->conv2d(e, p, x.data(), w.data(), out->data());
    case ConvKernel::bwd_input:
      out->assign(p.x_elements(), -7.0f);
      return b->conv2d_backprop_input(e, p, w.data(), dy.data(), out->data());
    case ConvKernel::bwd_filter:
      out->assign(p.w_elements(), -7.0f);
      return b->conv2d_backprop_filter(e, p, x.data(), dy.data(), out->data());
    case ConvKernel::dw_fwd:
      out->assign(p.y_elements(), -7.0f);
      return b->depthwise_conv2d_native(e, p, x.data(), w.data(), out->data());
    case ConvKernel::dw_bwd_input:
      out->assign(p.x_elements(), -7.0f);
      return b->depthwise_conv2d_native_backprop_input(e, p, w.data(), dy.data(), out->data());
    case ConvKernel::dw_bwd_filter:
      out->assign(p.dw_w_elements(), -7.0f);
      return b->depthwise_conv2d_native_backprop_filter(e, p, x.data(), dy.data(), out->data());
  }
  return Status(Code::Internal, "unknown kernel");
}

// Unimplemented for float64 on a device without shaderFloat64: the case is skipped.
bool no_f64(const Status& s) {
  if (s.code() != Code::Unimplemented || s.message().find("shaderFloat64") == std::string::npos) return false;
  MESSAGE("float64 skipped: " << s.message());
  return true;
}

template <class T>
void conv_sweep(ConvKernel k, int cases, int big_cases, uint32_t seed) {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  const bool dw = is_depthwise(k);
  std::mt19937 rng(seed);
  for (int c = 0; c < cases + big_cases; ++c) {
    const ConvParams p = random_conv(rng, dw, c >= cases);
    const auto x = random_vec<T>(rng, p.x_elements());
    const auto w = random_vec<T>(rng, dw ? p.dw_w_elements() : p.w_elements());
    const auto dy = random_vec<T>(rng, p.y_elements());
    double red = 0;  // reduction length of one output
    switch (k) {
      case ConvKernel::fwd: red = double(p.filter_h * p.filter_w * p.filter_in_c); break;
      case ConvKernel::bwd_input: red = double(p.filter_h * p.filter_w * (p.out_c / p.groups)); break;
      case ConvKernel::bwd_filter:
      case ConvKernel::dw_bwd_filter: red = double(p.batch * p.out_h * p.out_w); break;
      case ConvKernel::dw_fwd: red = double(p.filter_h * p.filter_w); break;
      case ConvKernel::dw_bwd_input: red = double(p.filter_h * p.filter_w * p.depth_multiplier); break;
    }
    const std::string what = describe(p);
    CAPTURE(what);
    std::vector<T> want, got, again;
    REQUIRE(run_conv(gradrt::reference_backend(), k, p, x, w, dy, &want).ok());
    const Status s = run_conv(vk, k, p, x, w, dy, &got);
    if (no_f64(s)) return;
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(got, want, red, std::sqrt(red), what);
    if (c % 5 == 0) {  // same inputs, same bits (no atomics, fixed reduction order)
      REQUIRE(run_conv(vk, k, p, x, w, dy, &again).ok());
      CHECK(std::memcmp(got.data(), again.data(), got.size() * sizeof(T)) == 0);
    }
  }
}

}  // namespace

TEST_CASE("vulkan: Conv2D forward vs reference") {
  conv_sweep<float>(ConvKernel::fwd, 40, 4, 101);
  conv_sweep<double>(ConvKernel::fwd, 10, 1, 101 + 1000);
}
TEST_CASE("vulkan: Conv2DBackpropInput vs reference") {
  conv_sweep<float>(ConvKernel::bwd_input, 40, 4, 102);
  conv_sweep<double>(ConvKernel::bwd_input, 10, 1, 102 + 1000);
}
TEST_CASE("vulkan: Conv2DBackpropFilter vs reference") {
  conv_sweep<float>(ConvKernel::bwd_filter, 40, 4, 103);
  conv_sweep<double>(ConvKernel::bwd_filter, 10, 1, 103 + 1000);
}
TEST_CASE("vulkan: DepthwiseConv2dNative forward vs reference") {
  conv_sweep<float>(ConvKernel::dw_fwd, 40, 3, 104);
  conv_sweep<double>(ConvKernel::dw_fwd, 10, 1, 104 + 1000);
}
TEST_CASE("vulkan: DepthwiseConv2dNativeBackpropInput vs reference") {
  conv_sweep<float>(ConvKernel::dw_bwd_input, 40, 3, 105);
  conv_sweep<double>(ConvKernel::dw_bwd_input, 10, 1, 105 + 1000);
}
TEST_CASE("vulkan: DepthwiseConv2dNativeBackpropFilter vs reference") {
  conv_sweep<float>(ConvKernel::dw_bwd_filter, 40, 3, 106);
  conv_sweep<double>(ConvKernel::dw_bwd_filter, 10, 1, 106 + 1000);
}

TEST_CASE("vulkan: FusedBatchNorm stats and apply vs reference") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  std::mt19937 rng(107);
  const Exec e{1};
  for (int c = 0; c < 30; ++c) {
    BatchNormParams p;
    p.rows = c < 25 ? rnd(rng, 1, 300) : rnd(rng, 3000, 20000);
    p.channels = rnd(rng, 1, 70);
    p.epsilon = c % 2 ? 0.001f : 1e-5f;
    CAPTURE(p.rows);
    CAPTURE(p.channels);
    const auto x = random_vec(rng, p.rows * p.channels, -2, 3);
    const auto scale = random_vec(rng, p.channels, 0.5, 2), offset = random_vec(rng, p.channels);
    std::vector<float> m0(p.channels), v0(p.channels), m1(p.channels, -7), v1(p.channels, -7);
    REQUIRE(gradrt::reference_backend()->batch_norm_stats(e, p, x.data(), m0.data(), v0.data()).ok());
    Status s = vk->batch_norm_stats(e, p, x.data(), m1.data(), v1.data());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(m1, m0, double(p.rows), 3, "mean");
    check_close(v1, v0, double(p.rows), 9, "variance");
    std::vector<float> y0(x.size()), y1(x.size(), -7);
    REQUIRE(gradrt::reference_backend()
                ->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), m0.data(), v0.data(), y0.data())
                .ok());
    s = vk->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), m0.data(), v0.data(), y1.data());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(y1, y0, 4, 8, "y");
  }
}

TEST_CASE("vulkan: FusedBatchNormGrad vs reference") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  std::mt19937 rng(108);
  const Exec e{1};
  for (int c = 0; c < 30; ++c) {
    BatchNormParams p;
    p.rows = c < 24 ? rnd(rng, 1, 300) : rnd(rng, 3000, 20000);
    p.channels = rnd(rng, 1, 70);
    p.is_training = c % 2 == 0;
    p.epsilon = 0.001f;
    CAPTURE(p.rows);
    CAPTURE(p.channels);
    CAPTURE(p.is_training);
    const auto dy = random_vec(rng, p.rows * p.channels), x = random_vec(rng, p.rows * p.channels, -2, 3);
    const auto scale = random_vec(rng, p.channels, 0.5, 2), mean = random_vec(rng, p.channels, 0, 1);
    const auto var = random_vec(rng, p.channels, 0.5, 3);
    const size_t n = x.size(), ch = size_t(p.channels);
    std::vector<float> dx0(n), ds0(ch), do0(ch), dx1(n, -7), ds1(ch, -7), do1(ch, -7);
    REQUIRE(gradrt::reference_backend()
                ->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(),
                                        dx0.data(), ds0.data(), do0.data())
                .ok());
    Status s = vk->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(),
                                         dx1.data(), ds1.data(), do1.data());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    const double r = double(p.rows);
    check_close(do1, do0, r, std::sqrt(r), "offset_backprop");
    check_close(ds1, ds0, r, 3 * std::sqrt(r), "scale_backprop");
    check_close(dx1, dx0, 8, 16, "x_backprop");
  }
}

namespace {
// A sequence of out+1 entries from 0 to in, non-decreasing; strictly increasing cells mostly.
std::vector<int64_t> random_seq(std::mt19937& rng, int64_t in, int64_t out) {
  std::vector<int64_t> cuts;
  for (int64_t i = 1; i < in; ++i) cuts.push_back(i);
  std::shuffle(cuts.begin(), cuts.end(), rng);
  cuts.resize(static_cast<size_t>(out - 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<int64_t> seq = {0};
  seq.insert(seq.end(), cuts.begin(), cuts.end());
  seq.push_back(in);
  return seq;
}
}  // namespace

TEST_CASE("vulkan: FractionalAvgPool and FractionalAvgPoolGrad vs reference") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  std::mt19937 rng(109);
  const Exec e{1};
  for (int c = 0; c < 40; ++c) {
    FracPoolParams p;
    p.batch = rnd(rng, 1, 3);
    p.in_h = rnd(rng, 2, 23);
    p.in_w = rnd(rng, 2, 29);
    p.channels = rnd(rng, 1, 13);
    p.out_h = rnd(rng, 1, p.in_h);
    p.out_w = rnd(rng, 1, p.in_w);
    p.overlapping = c % 2 == 1;
    const auto rows = random_seq(rng, p.in_h, p.out_h), cols = random_seq(rng, p.in_w, p.out_w);
    p.row_seq = rows.data();
    p.col_seq = cols.data();
    CAPTURE(p.in_h);
    CAPTURE(p.in_w);
    CAPTURE(p.out_h);
    CAPTURE(p.out_w);
    CAPTURE(p.overlapping);
    const int64_t nx = p.batch * p.in_h * p.in_w * p.channels, ny = p.batch * p.out_h * p.out_w * p.channels;
    const auto x = random_vec(rng, nx), dy = random_vec(rng, ny);
    std::vector<float> y0(ny), y1(ny, -7), dx0(nx), dx1(nx, -7);
    REQUIRE(gradrt::reference_backend()->fractional_avg_pool(e, p, x.data(), y0.data()).ok());
    Status s = vk->fractional_avg_pool(e, p, x.data(), y1.data());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(y1, y0, 64, 1, "output");
    REQUIRE(gradrt::reference_backend()->fractional_avg_pool_grad(e, p, dy.data(), dx0.data()).ok());
    s = vk->fractional_avg_pool_grad(e, p, dy.data(), dx1.data());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(dx1, dx0, 8, 1, "backprop");
  }
}

TEST_CASE("vulkan: float64 batch norm and pooling vs reference (devices with shaderFloat64)") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  std::mt19937 rng(111);
  const Exec e{1};
  Backend* ref = gradrt::reference_backend();
  for (int c = 0; c < 8; ++c) {
    BatchNormParams p;
    p.rows = c < 6 ? rnd(rng, 1, 300) : rnd(rng, 3000, 9000);
    p.channels = rnd(rng, 1, 40);
    p.is_training = c % 2 == 0;
    CAPTURE(p.rows);
    CAPTURE(p.channels);
    const size_t n = size_t(p.rows * p.channels), ch = size_t(p.channels);
    const auto x = random_vec<double>(rng, n, -2, 3), dy = random_vec<double>(rng, n);
    const auto scale = random_vec<double>(rng, ch, 0.5, 2), offset = random_vec<double>(rng, ch);
    std::vector<double> m0(ch), v0(ch), m1(ch), v1(ch), y0(n), y1(n), dx0(n), dx1(n), ds0(ch), ds1(ch), do0(ch), do1(ch);
    REQUIRE(ref->batch_norm_stats(e, p, x.data(), m0.data(), v0.data()).ok());
    Status s = vk->batch_norm_stats(e, p, x.data(), m1.data(), v1.data());
    if (no_f64(s)) return;
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(m1, m0, double(p.rows), 3, "mean");
    check_close(v1, v0, double(p.rows), 9, "variance");
    REQUIRE(ref->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), m0.data(), v0.data(), y0.data()).ok());
    REQUIRE(vk->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), m0.data(), v0.data(), y1.data()).ok());
    check_close(y1, y0, 4, 8, "y");
    REQUIRE(ref->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), m0.data(), v0.data(), dx0.data(),
                                       ds0.data(), do0.data())
                .ok());
    REQUIRE(vk->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), m0.data(), v0.data(), dx1.data(),
                                      ds1.data(), do1.data())
                .ok());
    const double r = double(p.rows);
    check_close(do1, do0, r, std::sqrt(r), "offset_backprop");
    check_close(ds1, ds0, r, 3 * std::sqrt(r), "scale_backprop");
    check_close(dx1, dx0, 8, 16, "x_backprop");
  }
  for (int c = 0; c < 8; ++c) {
    FracPoolParams p;
    p.batch = rnd(rng, 1, 2);
    p.in_h = rnd(rng, 2, 17);
    p.in_w = rnd(rng, 2, 19);
    p.channels = rnd(rng, 1, 7);
    p.out_h = rnd(rng, 1, p.in_h);
    p.out_w = rnd(rng, 1, p.in_w);
    p.overlapping = c % 2 == 1;
    const auto rows = random_seq(rng, p.in_h, p.out_h), cols = random_seq(rng, p.in_w, p.out_w);
    p.row_seq = rows.data();
    p.col_seq = cols.data();
    const int64_t nx = p.batch * p.in_h * p.in_w * p.channels, ny = p.batch * p.out_h * p.out_w * p.channels;
    const auto x = random_vec<double>(rng, nx), dy = random_vec<double>(rng, ny);
    std::vector<double> y0(ny), y1(ny), dx0(nx), dx1(nx);
    REQUIRE(ref->fractional_avg_pool(e, p, x.data(), y0.data()).ok());
    REQUIRE(vk->fractional_avg_pool(e, p, x.data(), y1.data()).ok());
    check_close(y1, y0, 64, 1, "output");
    REQUIRE(ref->fractional_avg_pool_grad(e, p, dy.data(), dx0.data()).ok());
    REQUIRE(vk->fractional_avg_pool_grad(e, p, dy.data(), dx1.data()).ok());
    check_close(dx1, dx0, 8, 1, "backprop");
  }
}

TEST_CASE("vulkan: detail lists limits; auto stays on cpu for CPU-type devices") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  const std::string detail = vk->detail();
  CHECK(detail.find("maxComputeWorkGroupCount") != std::string::npos);
  CHECK(detail.find("maxStorageBufferRange") != std::string::npos);
  if (detail.find("(CPU,") != std::string::npos) {
    CHECK_FALSE(vk->preferred_for("conv2d_backprop_input", INT64_MAX));
    CHECK(gradrt::auto_backend("Conv2DBackpropInput") == "cpu");
  }
  CHECK_FALSE(vk->preferred_for("conv2d_backprop_input", 10));  // small work never goes to a device
}

TEST_CASE("vulkan: shapes beyond int32 indexing or the buffer range are refused with a status") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  // 2^33 input elements: refused before any pointer is read (so tiny buffers are safe here).
  ConvParams p;
  p.batch = 1 << 13;
  p.in_h = p.in_w = 1024;
  p.in_c = p.filter_in_c = 1;
  p.out_h = p.out_w = 1024;
  p.out_c = p.filter_h = p.filter_w = 1;
  float one = 1, out = 0;
  const Status s = vk->conv2d(Exec{}, p, &one, &one, &out);
  CHECK(s.code() == Code::Unimplemented);
  CHECK(s.message().find("int32") != std::string::npos);

  // A tensor just above maxStorageBufferRange (when that is small enough to allocate here).
  const std::string detail = vk->detail();
  const size_t at = detail.find("maxStorageBufferRange ");
  REQUIRE(at != std::string::npos);
  const uint64_t range = std::stoull(detail.substr(at + 22));
  if (range <= (uint64_t{1} << 29)) {
    BatchNormParams b;
    b.channels = 16;
    b.rows = int64_t(range / 4 / 16) + 1;
    std::vector<float> x(size_t(b.rows * b.channels), 1.0f), m(16), v(16);
    const Status s2 = vk->batch_norm_stats(Exec{}, b, x.data(), m.data(), v.data());
    CHECK(s2.code() == Code::ResourceExhausted);
    CHECK(s2.message().find("maxStorageBufferRange") != std::string::npos);
  }
}

TEST_CASE("vulkan: calls from several threads at once") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  std::mt19937 rng(110);
  const ConvParams p = random_conv(rng, false, true);
  const auto x = random_vec(rng, p.x_elements()), dy = random_vec(rng, p.y_elements());
  std::vector<float> want;
  REQUIRE(run_conv(vk, ConvKernel::bwd_filter, p, x, std::vector<float>{}, dy, &want).ok());
  std::vector<std::vector<float>> got(4);
  std::vector<Status> status(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { status[t] = run_conv(vk, ConvKernel::bwd_filter, p, x, std::vector<float>{}, dy, &got[t]); });
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    CHECK(status[t].ok());
    CHECK(got[t] == want);
  }
}

TEST_CASE("vulkan: without a loader the backend is Unavailable with the reason") {
  if (!hooks::probe) {
    MESSAGE("skipped: gradrt was built without the Vulkan backend");
    return;
  }
  const Status s = hooks::probe("/nonexistent/libvulkan.so.1", "-");
  CHECK(s.code() == Code::Unavailable);
  CHECK(s.message().find("/nonexistent/libvulkan.so.1") != std::string::npos);
}

TEST_CASE("vulkan: pipeline cache on disk: written, reused, a corrupt file ignored") {
  if (!vulkan_or_skip() || !hooks::probe) return;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("gradrt_vk_cache_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  ValidationCheck validation;
  Status s = hooks::probe("", dir.string());
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  std::vector<fs::path> files;
  for (auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  REQUIRE(files.size() == 1);  // the cache, and no temp file left behind
  const auto size = fs::file_size(files[0]);
  CHECK(size > 64);
  s = hooks::probe("", dir.string());  // reads it back
  CHECK_MESSAGE(s.ok(), s.to_string());
  {  // corrupt the driver blob behind our header: ignored, then rewritten
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(80);
    const char junk[16] = {'j', 'u', 'n', 'k', 'j', 'u', 'n', 'k', 'j', 'u', 'n', 'k', 'j', 'u', 'n', 'k'};
    f.write(junk, sizeof junk);
  }
  s = hooks::probe("", dir.string());
  CHECK_MESSAGE(s.ok(), s.to_string());
  fs::resize_file(files[0], 20);  // truncated header
  s = hooks::probe("", dir.string());
  CHECK_MESSAGE(s.ok(), s.to_string());
  {
    std::ofstream f(files[0], std::ios::binary | std::ios::trunc);
    f << "not a cache at all";
  }
  s = hooks::probe("", dir.string());
  CHECK_MESSAGE(s.ok(), s.to_string());
  fs::remove_all(dir);
}

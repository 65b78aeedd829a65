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
#include "cases.h"

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
using gradrt::Kernel;
using gradrt::Status;
using test::ConvKernel;
using test::random_vec;
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

int64_t rnd(std::mt19937& rng, int64_t lo, int64_t hi) { return test::uniform(rng, lo, hi); }  // inclusive

// vulkan vs reference within 16 eps per summed term (float accumulation on the device, in
// another order than the cpu's, vs double in the reference).
template <class T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, double k, double scale,
                 const std::string& what) {
  test::check_near(got, want, k, scale, 16, what);
}

// Random geometry as in the cpu tests (test::random_conv_params), groups and depth
// multipliers in one case of three; big: several tiles and split-K.
ConvParams random_conv(std::mt19937& rng, bool depthwise, bool big) {
  return test::random_conv_params(rng, depthwise, big, 3);
}

Status run_conv(Backend* b, ConvKernel k, const ConvParams& p, const std::vector<float>& x,
                const std::vector<float>& w, const std::vector<float>& dy, std::vector<float>* out) {
  return test::run_conv(b, k, p, 1, x, w, dy, out);
}

template <class T>
void conv_sweep(ConvKernel k, int cases, int big_cases, uint32_t seed) {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  const bool dw = test::is_depthwise(k);
  std::mt19937 rng(seed);
  for (int c = 0; c < cases + big_cases; ++c) {
    const ConvParams p = random_conv(rng, dw, c >= cases);
    const auto x = random_vec<T>(rng, p.x_elements());
    const auto w = random_vec<T>(rng, dw ? p.dw_w_elements() : p.w_elements());
    const auto dy = random_vec<T>(rng, p.y_elements());
    const double red = test::reduction_length(k, p);
    const std::string what = test::describe(p);
    CAPTURE(what);
    std::vector<T> want, got, again;
    REQUIRE(test::run_conv(gradrt::reference_backend(), k, p, 1, x, w, dy, &want).ok());
    const Status s = test::run_conv(vk, k, p, 1, x, w, dy, &got);
    if (test::device_lacks_dtype(s)) return;
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(got, want, red, std::sqrt(red), what);
    if (c % 5 == 0) {  // same inputs, same bits (no atomics, fixed reduction order)
      REQUIRE(test::run_conv(vk, k, p, 1, x, w, dy, &again).ok());
      CHECK(test::same_bits(got, again));
    }
  }
}

// FusedBatchNorm's kernels, batch_norm_stats then batch_norm_apply with the batch statistics:
// `cases` random [rows, channels], the last `big` of them with rows from 3000 to big_rows
// (several row splits). False when the device lacks T (float64).
template <class T>
bool batch_norm_sweep(Backend* vk, uint32_t seed, int cases, int big, int64_t big_rows, int64_t max_channels) {
  std::mt19937 rng(seed);
  const Exec e{1};
  Backend* ref = gradrt::reference_backend();
  for (int c = 0; c < cases; ++c) {
    BatchNormParams p;
    p.rows = c < cases - big ? rnd(rng, 1, 300) : rnd(rng, 3000, big_rows);
    p.channels = rnd(rng, 1, max_channels);
    p.epsilon = c % 2 ? 0.001f : 1e-5f;
    CAPTURE(p.rows);
    CAPTURE(p.channels);
    const size_t n = size_t(p.rows * p.channels), ch = size_t(p.channels);
    const auto x = random_vec<T>(rng, n, -2, 3);
    const auto scale = random_vec<T>(rng, ch, 0.5, 2), offset = random_vec<T>(rng, ch);
    std::vector<T> m0(ch), v0(ch), m1(ch, T(-7)), v1(ch, T(-7));
    REQUIRE(ref->batch_norm_stats(e, p, x.data(), m0.data(), v0.data()).ok());
    Status s = vk->batch_norm_stats(e, p, x.data(), m1.data(), v1.data());
    if (test::device_lacks_dtype(s)) return false;
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(m1, m0, double(p.rows), 3, "mean");
    check_close(v1, v0, double(p.rows), 9, "variance");
    std::vector<T> y0(n), y1(n, T(-7));
    REQUIRE(ref->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), m0.data(), v0.data(), y0.data()).ok());
    s = vk->batch_norm_apply(e, p, x.data(), scale.data(), offset.data(), m0.data(), v0.data(), y1.data());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(y1, y0, 4, 8, "y");
  }
  return true;
}

// FusedBatchNormGrad, training and inference formulas alternating; rows as batch_norm_sweep.
template <class T>
bool batch_norm_grad_sweep(Backend* vk, uint32_t seed, int cases, int big, int64_t big_rows, int64_t max_channels) {
  std::mt19937 rng(seed);
  const Exec e{1};
  for (int c = 0; c < cases; ++c) {
    BatchNormParams p;
    p.rows = c < cases - big ? rnd(rng, 1, 300) : rnd(rng, 3000, big_rows);
    p.channels = rnd(rng, 1, max_channels);
    p.is_training = c % 2 == 0;
    p.epsilon = 0.001f;
    CAPTURE(p.rows);
    CAPTURE(p.channels);
    CAPTURE(p.is_training);
    const size_t n = size_t(p.rows * p.channels), ch = size_t(p.channels);
    const auto dy = random_vec<T>(rng, n), x = random_vec<T>(rng, n, -2, 3);
    const auto scale = random_vec<T>(rng, ch, 0.5, 2), mean = random_vec<T>(rng, ch, 0, 1);
    const auto var = random_vec<T>(rng, ch, 0.5, 3);
    std::vector<T> dx0(n), ds0(ch), do0(ch), dx1(n, T(-7)), ds1(ch, T(-7)), do1(ch, T(-7));
    REQUIRE(gradrt::reference_backend()
                ->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(),
                                        dx0.data(), ds0.data(), do0.data())
                .ok());
    const Status s = vk->fused_batch_norm_grad(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(),
                                               dx1.data(), ds1.data(), do1.data());
    if (test::device_lacks_dtype(s)) return false;
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    const double r = double(p.rows);
    check_close(do1, do0, r, std::sqrt(r), "offset_backprop");
    check_close(ds1, ds0, r, 3 * std::sqrt(r), "scale_backprop");
    check_close(dx1, dx0, 8, 16, "x_backprop");
  }
  return true;
}

// FractionalAvgPool and its gradient, overlapping and not alternating, on inputs up to
// max_batch x max_h x max_w x max_channels (at least 2 x 2).
template <class T>
bool frac_pool_sweep(Backend* vk, uint32_t seed, int cases, int64_t max_batch, int64_t max_h, int64_t max_w,
                     int64_t max_channels) {
  std::mt19937 rng(seed);
  const Exec e{1};
  for (int c = 0; c < cases; ++c) {
    FracPoolParams p;
    p.batch = rnd(rng, 1, max_batch);
    p.in_h = rnd(rng, 2, max_h);
    p.in_w = rnd(rng, 2, max_w);
    p.channels = rnd(rng, 1, max_channels);
    p.out_h = rnd(rng, 1, p.in_h);
    p.out_w = rnd(rng, 1, p.in_w);
    p.overlapping = c % 2 == 1;
    const auto rows = test::random_seq(rng, p.in_h, p.out_h), cols = test::random_seq(rng, p.in_w, p.out_w);
    p.row_seq = rows.data();
    p.col_seq = cols.data();
    CAPTURE(p.in_h);
    CAPTURE(p.in_w);
    CAPTURE(p.out_h);
    CAPTURE(p.out_w);
    CAPTURE(p.overlapping);
    const int64_t nx = p.batch * p.in_h * p.in_w * p.channels, ny = p.batch * p.out_h * p.out_w * p.channels;
    const auto x = random_vec<T>(rng, nx), dy = random_vec<T>(rng, ny);
    std::vector<T> y0(ny), y1(ny, T(-7)), dx0(nx), dx1(nx, T(-7));
    REQUIRE(gradrt::reference_backend()->fractional_avg_pool(e, p, x.data(), y0.data()).ok());
    Status s = vk->fractional_avg_pool(e, p, x.data(), y1.data());
    if (test::device_lacks_dtype(s)) return false;
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(y1, y0, 64, 1, "output");
    REQUIRE(gradrt::reference_backend()->fractional_avg_pool_grad(e, p, dy.data(), dx0.data()).ok());
    s = vk->fractional_avg_pool_grad(e, p, dy.data(), dx1.data());
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    check_close(dx1, dx0, 8, 1, "backprop");
  }
  return true;
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

TEST_CASE("vulkan: conv kernels with empty operands") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  // Only the filter gradients have outputs: zeros (an empty sum), the same as the reference.
  for (ConvKernel k : {ConvKernel::fwd, ConvKernel::bwd_input, ConvKernel::bwd_filter, ConvKernel::dw_fwd,
                       ConvKernel::dw_bwd_input, ConvKernel::dw_bwd_filter})
    for (const ConvParams& p : test::empty_conv_params(test::is_depthwise(k))) {
      CAPTURE(test::describe(p));
      const std::vector<float> none, w(p.w_elements() + p.dw_w_elements(), 1.f);
      std::vector<float> want, got;
      REQUIRE(run_conv(gradrt::reference_backend(), k, p, none, w, none, &want).ok());
      const Status s = run_conv(vk, k, p, none, w, none, &got);
      REQUIRE_MESSAGE(s.ok(), s.to_string());
      CHECK(got == want);
    }
}

TEST_CASE("vulkan: FusedBatchNorm stats and apply vs reference") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  batch_norm_sweep<float>(vk, 107, 30, 5, 20000, 70);
}

TEST_CASE("vulkan: FusedBatchNormGrad vs reference") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  batch_norm_grad_sweep<float>(vk, 108, 30, 6, 20000, 70);
}

TEST_CASE("vulkan: FractionalAvgPool and FractionalAvgPoolGrad vs reference") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  frac_pool_sweep<float>(vk, 109, 40, 3, 23, 29, 13);
}

TEST_CASE("vulkan: float64 batch norm and pooling vs reference (devices with shaderFloat64)") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  ValidationCheck validation;
  if (!batch_norm_sweep<double>(vk, 111, 8, 2, 9000, 40)) return;
  batch_norm_grad_sweep<double>(vk, 112, 8, 2, 9000, 40);
  frac_pool_sweep<double>(vk, 113, 8, 2, 17, 19, 7);
}

TEST_CASE("vulkan: detail lists limits; auto stays on cpu for CPU-type devices") {
  Backend* vk = vulkan_or_skip();
  if (!vk) return;
  const std::string detail = vk->detail();
  CHECK(detail.find("maxComputeWorkGroupCount") != std::string::npos);
  CHECK(detail.find("maxStorageBufferRange") != std::string::npos);
  if (detail.find("(CPU,") != std::string::npos) {
    CHECK_FALSE(vk->preferred_for(Kernel::conv2d_backprop_input, INT64_MAX));
    CHECK(gradrt::auto_backend("Conv2DBackpropInput") == "cpu");
  }
  CHECK_FALSE(vk->preferred_for(Kernel::conv2d_backprop_input, 10));  // small work never goes to a device
  // Bandwidth-bound ops never go to a device in `auto`, whatever the size.
  for (Kernel k : {Kernel::depthwise_conv2d_native_backprop_input, Kernel::depthwise_conv2d_native_backprop_filter,
                   Kernel::fused_batch_norm_grad, Kernel::fractional_avg_pool_grad})
    CHECK_FALSE(vk->preferred_for(k, INT64_MAX));
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
  const auto x = random_vec<float>(rng, p.x_elements()), dy = random_vec<float>(rng, p.y_elements());
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

// What only the vulkan backend (vulkan/) has: the no-loader path, the pipeline cache on disk
// (written, read back, corrupt file ignored), calls from several threads, shapes refused for
// int32 indexing or the buffer range, detail and `auto`. The cases run on a backend instance
// with the Khronos validation layer on (when installed); every validation message recorded
// fails the test. Without a Vulkan device every case is skipped with the reason. Every kernel
// against the reference, with validation: test_backends.cpp (variant "vulkan").
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
#include "variants.h"

namespace {

using gradrt::Backend;
using gradrt::BatchNormParams;
using gradrt::Code;
using gradrt::ConvParams;
using gradrt::Exec;
using gradrt::Kernel;
using gradrt::Status;
using test::ConvKernel;
using test::random_vec;
using test::ValidationCheck;
using test::vulkan_or_skip;
namespace hooks = gradrt::vk::testing;

Status run_conv(Backend* b, ConvKernel k, const ConvParams& p, const std::vector<float>& x,
                const std::vector<float>& w, const std::vector<float>& dy, std::vector<float>* out) {
  return test::run_conv(b, k, p, 1, x, w, dy, out);
}

}  // namespace

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
  const ConvParams p = test::random_conv_params(rng, false, true, 3);
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

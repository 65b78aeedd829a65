// float16 storage on Vulkan (issue 22 item 3; kernels.h GRADRT_F16_KERNELS, vulkan/shaders/common/
// storage.glsl): the `_f16` kernels read and write binary16 tensors on the device and compute in
// float32. Checked, on the validated backend (Khronos layer on when installed):
//   - against the reference backend on the widened values, within the float16 tolerance
//     (tests/util.cpp tolerance(float16, k)), channel counts that take the vec4 shaders and odd
//     ones that take the scalar ones, odd spatial sizes, stride 2, batch > 1, one position;
//   - bit for bit against the float32 kernel on the widened values rounded once to half: the
//     shaders are the same ones with conversions at load and store, and the conversions are exact
//     integer code (round to nearest even, as core's half_bits), so this is what core's widening
//     path gave before.
// Then through run_op (core's run_f16): the float16 op on "vulkan" gives the same bits as those
// kernels and moves 2 bytes per float16 value to the device; and a Sequence of float16 device
// tensors (FusedBatchNormGradV3 -> depthwise input and filter gradients): 1 submission, uploads of
// 2 bytes per value, the op-by-op bits. Where the device lacks 16-bit storage (or the v1/v4 sets
// run: ctest vulkan_v1/vulkan_v4) the kernel checks are skipped and the op checks run the widening
// path (same bits; 4-byte uploads), and a float16 device tensor is refused by Sequence::record.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "cases.h"
#include "util.h"
#include "variants.h"

namespace {

using namespace gradrt;

std::vector<uint16_t> random_half(size_t n, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<uint16_t> v(n);
  for (auto& e : v) e = float_to_half(d(rng));
  return v;
}
std::vector<float> widen(const std::vector<uint16_t>& h) {
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i) f[i] = half_to_float(h[i]);
  return f;
}
std::vector<double> as_double(const std::vector<float>& f) { return {f.begin(), f.end()}; }

// The validated vulkan backend when it runs the _f16 kernels here, else null (with a message).
Backend* f16_backend() {
  if (!vk::testing::validated_backend) return nullptr;
  Backend* be = vk::testing::validated_backend();
  if (!be->available().ok()) {
    MESSAGE("skipped: " << be->available().to_string());
    return nullptr;
  }
  if (!be->f16_storage(Kernel::fused_batch_norm_grad)) {
    MESSAGE("skipped: no float16 storage here (device without storageBuffer16BitAccess, or GRADRT_VULKAN_SHADERS/F16)");
    return nullptr;
  }
  return be;
}

// The half result equals the float32 kernel's result rounded once, and is near the reference.
void check_half(const std::vector<uint16_t>& got, const std::vector<float>& f32, const std::vector<float>& ref,
                int64_t k, const std::string& what) {
  int differ = 0;
  for (size_t i = 0; i < got.size(); ++i) differ += got[i] != float_to_half(f32[i]);
  CHECK_MESSAGE(differ == 0, what << ": " << differ << " of " << got.size() << " differ from the float32 kernel's rounding");
  const double tol = test::tolerance(DType::float16, k);
  test::check_close(as_double(widen(got)), as_double(ref), tol, tol, what);
}

enum class Dw { input, filter };

void depthwise_case(Backend* be, Dw which, const ConvParams& p, std::mt19937& rng) {
  const std::string what = std::string(which == Dw::input ? "dw input " : "dw filter ") + test::describe(p);
  const auto x = random_half(size_t(p.x_elements()), rng), w = random_half(size_t(p.dw_w_elements()), rng),
             dy = random_half(size_t(p.y_elements()), rng);
  const auto xf = widen(x), wf = widen(w), dyf = widen(dy);
  Exec e;
  const bool input = which == Dw::input;
  // The input gradient takes (w, dy) and writes x's shape; the filter gradient (x, dy), w's shape.
  const uint16_t* a16 = input ? w.data() : x.data();
  const float* af = input ? wf.data() : xf.data();
  const size_t out_n = input ? xf.size() : wf.size();
  auto f16 = [&](uint16_t* out) {
    return input ? be->depthwise_conv2d_native_backprop_input_f16(e, p, a16, dy.data(), out)
                 : be->depthwise_conv2d_native_backprop_filter_f16(e, p, a16, dy.data(), out);
  };
  auto f32 = [&](Backend* b, float* out) {
    return input ? b->depthwise_conv2d_native_backprop_input(e, p, af, dyf.data(), out)
                 : b->depthwise_conv2d_native_backprop_filter(e, p, af, dyf.data(), out);
  };
  std::vector<uint16_t> got(out_n, 0xffff), again(out_n);
  std::vector<float> wide(out_n), ref(out_n);
  REQUIRE(f16(got.data()).ok());
  REQUIRE(f16(again.data()).ok());
  REQUIRE(f32(be, wide.data()).ok());
  REQUIRE(f32(reference_backend(), ref.data()).ok());
  CHECK(got == again);
  check_half(got, wide, ref, input ? p.filter_h * p.filter_w * p.depth_multiplier : p.batch * p.out_h * p.out_w,
             what);
}

void batch_norm_case(Backend* be, int64_t rows, int64_t channels, bool training, std::mt19937& rng) {
  const std::string what = "batch norm grad " + std::to_string(rows) + " x " + std::to_string(channels) +
                           (training ? " training" : " inference");
  BatchNormParams p;
  p.rows = rows, p.channels = channels, p.epsilon = 0.001f, p.is_training = training;
  const auto dy = random_half(size_t(rows * channels), rng), x = random_half(size_t(rows * channels), rng);
  std::uniform_real_distribution<float> d(-0.5f, 0.5f), pos(0.5f, 1.5f);
  std::vector<float> scale(channels), mean(channels), var(channels);
  for (auto& v : scale) v = pos(rng);
  for (auto& v : mean) v = d(rng);
  for (auto& v : var) v = pos(rng);
  const auto dyf = widen(dy), xf = widen(x);
  const size_t n = dy.size(), c = size_t(channels);
  std::vector<uint16_t> dx(n, 0xffff), dx2(n);
  std::vector<float> ds(c), dof(c), ds2(c), dof2(c), dx32(n), ds32(c), do32(c), rdx(n), rds(c), rdo(c);
  Exec e;
  REQUIRE(be->fused_batch_norm_grad_f16(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(), dx.data(),
                                        ds.data(), dof.data()).ok());
  REQUIRE(be->fused_batch_norm_grad_f16(e, p, dy.data(), x.data(), scale.data(), mean.data(), var.data(), dx2.data(),
                                        ds2.data(), dof2.data()).ok());
  REQUIRE(be->fused_batch_norm_grad(e, p, dyf.data(), xf.data(), scale.data(), mean.data(), var.data(), dx32.data(),
                                    ds32.data(), do32.data()).ok());
  REQUIRE(reference_backend()->fused_batch_norm_grad(e, p, dyf.data(), xf.data(), scale.data(), mean.data(), var.data(),
                                                     rdx.data(), rds.data(), rdo.data()).ok());
  CHECK(dx == dx2);
  check_half(dx, dx32, rdx, rows, what + " dx");
  // The float32 sums: the float32 kernel's bits (same shaders, same splits), near the reference.
  CHECK(std::memcmp(ds.data(), ds32.data(), 4 * c) == 0);
  CHECK(std::memcmp(dof.data(), do32.data(), 4 * c) == 0);
  const double tol = test::tolerance(DType::float32, rows) * 8;
  test::check_close(as_double(ds), as_double(rds), tol, tol, what + " dscale");
  test::check_close(as_double(dof), as_double(rdo), tol, tol, what + " doffset");
}

}  // namespace

TEST_CASE("vulkan: float16-storage depthwise gradients vs reference and the float32 kernel's rounding") {
  test::ValidationCheck validation;
  Backend* be = f16_backend();
  if (!be) return;
  std::mt19937 rng(1622);
  const ConvParams cases[] = {
      test::same_conv_params(2, 9, 7, 24, 24, 3, 1, 1, true),    // 6 quads: vec4 shaders
      test::same_conv_params(3, 7, 5, 36, 36, 3, 2, 1, true),    // stride 2
      test::same_conv_params(1, 13, 11, 20, 20, 3, 1, 1, true),  // K = 143 (prime factors), one image
      test::same_conv_params(2, 5, 5, 10, 10, 3, 1, 1, true),    // 10 channels: the scalar shaders
      test::same_conv_params(1, 1, 1, 4, 4, 3, 1, 1, true),      // one position
      test::same_conv_params(1, 9, 11, 7, 7, 5, 1, 1, true),     // 25 taps, 7 channels
      test::same_conv_params(2, 6, 6, 3, 6, 3, 1, 1, true),      // depth multiplier 2: scalar
      test::same_conv_params(32, 7, 7, 144, 144, 3, 1, 1, true),  // batch 32, 36 quads
  };
  for (const ConvParams& p : cases)
    for (Dw which : {Dw::input, Dw::filter}) depthwise_case(be, which, p, rng);
  for (int i = 0; i < 6; ++i) {  // the random geometries (dilation, uneven padding, multipliers)
    const ConvParams p = test::random_conv_params(rng, true);
    for (Dw which : {Dw::input, Dw::filter}) depthwise_case(be, which, p, rng);
  }
}

TEST_CASE("vulkan: float16-storage FusedBatchNormGrad vs reference and the float32 kernel's rounding") {
  test::ValidationCheck validation;
  Backend* be = f16_backend();
  if (!be) return;
  std::mt19937 rng(1623);
  for (bool training : {true, false}) {
    batch_norm_case(be, 2 * 9 * 7, 24, training, rng);  // vec4
    batch_norm_case(be, 3 * 5 * 5, 10, training, rng);  // scalar
    batch_norm_case(be, 1, 4, training, rng);           // one row
    batch_norm_case(be, 4099, 7, training, rng);        // several splits, odd channels
    batch_norm_case(be, 8 * 28 * 28, 144, training, rng);
  }
}

namespace {

// A small backward piece in float16: FusedBatchNormGradV3 (float16 dy and x, float32 scale/mean/
// variance), then the depthwise input and filter gradients of its x_backprop.
struct HalfChain {
  std::vector<int64_t> x_shape{2, 7, 5, 12}, w_shape{3, 3, 12, 1}, ch{12};
  std::vector<int32_t> x_sizes{2, 7, 5, 12}, w_sizes{3, 3, 12, 1};
  std::vector<uint16_t> dy, x, w;
  std::vector<float> scale, mean, var;
  Attrs conv{{"strides", {1, 1, 1, 1}}, {"padding", "SAME"}};
  Attrs bn{{"epsilon", 0.001}, {"is_training", true}};
  TensorView rs3{DType::float32, {0}, nullptr};
  HalfChain() {
    std::mt19937 rng(1624);
    dy = random_half(2 * 7 * 5 * 12, rng);
    x = random_half(dy.size(), rng);
    w = random_half(9 * 12, rng);
    std::uniform_real_distribution<float> d(-0.5f, 0.5f), pos(0.5f, 1.5f);
    for (int i = 0; i < 12; ++i) scale.push_back(pos(rng)), mean.push_back(d(rng)), var.push_back(pos(rng));
  }
  TensorView sizes(const std::vector<int32_t>& v) const { return {DType::int32, {4}, v.data()}; }
  TensorView half(const std::vector<int64_t>& shape, const void* p) const { return {DType::float16, shape, p}; }
  TensorView f32(const std::vector<int64_t>& shape, const void* p) const { return {DType::float32, shape, p}; }
};

uint64_t uploaded(const std::function<Status()>& f, Status* s) {
  DeviceCounters before, after;
  REQUIRE(device_counters("vulkan", &before).ok());
  *s = f();
  REQUIRE(device_counters("vulkan", &after).ok());
  return after.bytes_to_device - before.bytes_to_device;
}

}  // namespace

TEST_CASE("vulkan: float16 run_op and a Sequence of float16 device tensors: 2 bytes per value, 1 submission, op-by-op bits") {
  HalfChain c;
  Backend* be = find_backend("vulkan");
  if (!be || !be->available().ok()) {
    MESSAGE("skipped: no vulkan backend here");
    return;
  }
  const bool f16 = be->f16_storage(Kernel::fused_batch_norm_grad);
  const uint64_t n = c.dy.size(), per = f16 ? 2 : 4;  // bytes per float16 value moved to the device
  RunOptions o;
  o.backend = "vulkan";
  Outputs bn, dxo, dwo;
  Status s;
  uint64_t bytes = uploaded([&] {
    return run_op("FusedBatchNormGradV3", {{"y_backprop", c.half(c.x_shape, c.dy.data())}, {"x", c.half(c.x_shape, c.x.data())},
                  {"scale", c.f32(c.ch, c.scale.data())}, {"reserve_space_1", c.f32(c.ch, c.mean.data())},
                  {"reserve_space_2", c.f32(c.ch, c.var.data())}, {"reserve_space_3", c.rs3}}, c.bn, &bn, o);
  }, &s);
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  CHECK(bytes == 2 * n * per + 3 * 12 * 4);
  REQUIRE(bn[0].second.dtype() == DType::float16);
  const TensorView g = c.half(c.x_shape, bn[0].second.data());
  bytes = uploaded([&] {
    return run_op("DepthwiseConv2dNativeBackpropInput", {{"input_sizes", c.sizes(c.x_sizes)},
                  {"filter", c.half(c.w_shape, c.w.data())}, {"out_backprop", g}}, c.conv, &dxo, o);
  }, &s);
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  CHECK(bytes == (n + c.w.size()) * per);
  bytes = uploaded([&] {
    return run_op("DepthwiseConv2dNativeBackpropFilter", {{"input", c.half(c.x_shape, c.x.data())},
                  {"filter_sizes", c.sizes(c.w_sizes)}, {"out_backprop", g}}, c.conv, &dwo, o);
  }, &s);
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  CHECK(bytes == 2 * n * per);

  // The same on device tensors, one Sequence.
  Tensor tdy, tx, tw, tscale, tmean, tvar, tg, tds, tdo, tdx, tdw;
  for (auto [t, dtype, shape] : {std::tuple{&tdy, DType::float16, c.x_shape}, {&tx, DType::float16, c.x_shape},
                                 {&tw, DType::float16, c.w_shape}, {&tscale, DType::float32, c.ch},
                                 {&tmean, DType::float32, c.ch}, {&tvar, DType::float32, c.ch},
                                 {&tg, DType::float16, c.x_shape}, {&tds, DType::float32, c.ch},
                                 {&tdo, DType::float32, c.ch}, {&tdx, DType::float16, c.x_shape},
                                 {&tdw, DType::float16, c.w_shape}})
    REQUIRE(Tensor::allocate_on("vulkan", dtype, shape, t).ok());
  CHECK(tdy.num_bytes() == 2 * n);
  bytes = uploaded([&] { return tdy.upload(c.dy.data()); }, &s);
  REQUIRE(s.ok());
  CHECK(bytes == 2 * n);  // a float16 device tensor moves 2 bytes per value
  REQUIRE(tx.upload(c.x.data()).ok());
  REQUIRE(tw.upload(c.w.data()).ok());
  REQUIRE(tscale.upload(c.scale.data()).ok());
  REQUIRE(tmean.upload(c.mean.data()).ok());
  REQUIRE(tvar.upload(c.var.data()).ok());
  Sequence seq("vulkan");
  s = seq.record("FusedBatchNormGradV3", {{"y_backprop", &tdy}, {"x", &tx}, {"scale", &tscale},
                 {"reserve_space_1", &tmean}, {"reserve_space_2", &tvar}}, {{"reserve_space_3", c.rs3}}, c.bn,
                 {{"x_backprop", &tg}, {"scale_backprop", &tds}, {"offset_backprop", &tdo}});
  if (!f16) {  // no float16-storage kernel here: core would convert through the device keys
    CHECK_MESSAGE(s.code() == Code::InvalidArgument, s.to_string());
    return;
  }
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  REQUIRE(seq.record("DepthwiseConv2dNativeBackpropInput", {{"filter", &tw}, {"out_backprop", &tg}},
                     {{"input_sizes", c.sizes(c.x_sizes)}}, c.conv, {{"output", &tdx}}).ok());
  REQUIRE(seq.record("DepthwiseConv2dNativeBackpropFilter", {{"input", &tx}, {"out_backprop", &tg}},
                     {{"filter_sizes", c.sizes(c.w_sizes)}}, c.conv, {{"output", &tdw}}).ok());
  for (int run = 0; run < 2; ++run) {
    DeviceCounters before, after;
    REQUIRE(device_counters("vulkan", &before).ok());
    s = seq.submit();
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    REQUIRE(device_counters("vulkan", &after).ok());
    CHECK(after.submissions - before.submissions == 1);
    CHECK(after.bytes_to_device == before.bytes_to_device);
    CHECK(after.bytes_to_host == before.bytes_to_host);
    for (auto [t, want] : {std::pair{&tg, &bn[0].second}, {&tds, &bn[1].second}, {&tdo, &bn[2].second},
                           {&tdx, &dxo[0].second}, {&tdw, &dwo[0].second}}) {
      std::vector<unsigned char> got(t->num_bytes(), 0xee);
      bytes = 0;
      DeviceCounters b0, b1;
      REQUIRE(device_counters("vulkan", &b0).ok());
      REQUIRE(t->download(got.data()).ok());
      REQUIRE(device_counters("vulkan", &b1).ok());
      CHECK(b1.bytes_to_host - b0.bytes_to_host == t->num_bytes());
      CHECK(t->num_bytes() == want->num_bytes());
      CHECK(std::memcmp(got.data(), want->data(), got.size()) == 0);
    }
  }
  // float16 on an op without a float16-storage kernel is refused (core would convert through the keys).
  Sequence other("vulkan");
  s = other.record("Conv2DBackpropFilter", {{"input", &tx}, {"out_backprop", &tg}}, {{"filter_sizes", c.sizes({3, 3, 12, 12})}},
                   c.conv, {{"output", &tdw}});
  CHECK_MESSAGE(s.code() == Code::InvalidArgument, s.to_string());
}

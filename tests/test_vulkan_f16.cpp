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
// tensors (FusedBatchNormGradV3 -> depthwise and conv input and filter gradients): 1 submission, uploads of
// 2 bytes per value, the op-by-op bits. Where the device lacks 16-bit storage (or the v1/v4 sets
// run: ctest vulkan_v1/vulkan_v4) the kernel checks are skipped and the op checks run the widening
// path (same bits; 4-byte uploads), and a float16 device tensor is refused by Sequence::record.
#include <doctest/doctest.h>

#include <array>
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

// The float16-storage form of conv gradient k (bwd_input, bwd_filter, dw_bwd_input, dw_bwd_filter):
// a is w for the input gradients, x for the filter gradients (as Backend's kernels take them).
Status run_f16(Backend* be, test::ConvKernel k, const ConvParams& p, const uint16_t* a, const uint16_t* dy,
               uint16_t* out) {
  const Exec e;
  switch (k) {
    case test::ConvKernel::bwd_input: return be->conv2d_backprop_input_f16(e, p, a, dy, out);
    case test::ConvKernel::bwd_filter: return be->conv2d_backprop_filter_f16(e, p, a, dy, out);
    case test::ConvKernel::dw_bwd_input: return be->depthwise_conv2d_native_backprop_input_f16(e, p, a, dy, out);
    case test::ConvKernel::dw_bwd_filter: return be->depthwise_conv2d_native_backprop_filter_f16(e, p, a, dy, out);
    default: return Status(Code::Internal, "not a gradient with a float16-storage form");
  }
}

void grad_case(Backend* be, test::ConvKernel k, const ConvParams& p, std::mt19937& rng) {
  const bool input = k == test::ConvKernel::bwd_input || k == test::ConvKernel::dw_bwd_input;
  const char* names[] = {"conv", "conv input", "conv filter", "dw", "dw input", "dw filter"};
  const std::string what = std::string(names[int(k)]) + " " + test::describe(p);
  const int64_t n_w = test::is_depthwise(k) ? p.dw_w_elements() : p.w_elements();
  const auto x = random_half(size_t(p.x_elements()), rng), w = random_half(size_t(n_w), rng),
             dy = random_half(size_t(p.y_elements()), rng);
  const size_t out_n = input ? x.size() : w.size();
  std::vector<uint16_t> got(out_n, 0xffff), again(out_n, 0xfffe);
  for (auto* out : {&got, &again}) {
    const Status s = run_f16(be, k, p, input ? w.data() : x.data(), dy.data(), out->data());
    REQUIRE_MESSAGE(s.ok(), what << ": " << s.to_string());
  }
  // The float32 kernel and the reference on the widened values.
  std::vector<float> wide, ref;
  REQUIRE(test::run_conv(be, k, p, 1, widen(x), widen(w), widen(dy), &wide).ok());
  REQUIRE(test::run_conv(reference_backend(), k, p, 1, widen(x), widen(w), widen(dy), &ref).ok());
  CHECK(got == again);
  check_half(got, wide, ref, int64_t(test::reduction_length(k, p)), what);
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

// The input and filter gradients (conv or depthwise) on each of `cases`, then on `randoms` random
// geometries (dilation, uneven padding, groups or multipliers; the last two big for conv).
void grad_sweep(bool depthwise, unsigned seed, const std::vector<ConvParams>& cases, int randoms) {
  test::ValidationCheck validation;
  Backend* be = f16_backend();
  if (!be) return;
  std::mt19937 rng(seed);
  const auto kernels = depthwise ? std::array{test::ConvKernel::dw_bwd_input, test::ConvKernel::dw_bwd_filter}
                                 : std::array{test::ConvKernel::bwd_input, test::ConvKernel::bwd_filter};
  for (const ConvParams& p : cases)
    for (auto k : kernels) grad_case(be, k, p, rng);
  for (int i = 0; i < randoms; ++i) {
    const ConvParams p = test::random_conv_params(rng, depthwise, !depthwise && i >= randoms - 2);
    for (auto k : kernels) grad_case(be, k, p, rng);
  }
}

}  // namespace

TEST_CASE("vulkan: float16-storage depthwise gradients vs reference and the float32 kernel's rounding") {
  grad_sweep(true, 1622, {
      test::same_conv_params(2, 9, 7, 24, 24, 3, 1, 1, true),    // 6 quads: vec4 shaders
      test::same_conv_params(3, 7, 5, 36, 36, 3, 2, 1, true),    // stride 2
      test::same_conv_params(1, 13, 11, 20, 20, 3, 1, 1, true),  // K = 143 (prime factors), one image
      test::same_conv_params(2, 5, 5, 10, 10, 3, 1, 1, true),    // 10 channels: the scalar shaders
      test::same_conv_params(1, 1, 1, 4, 4, 3, 1, 1, true),      // one position
      test::same_conv_params(1, 9, 11, 7, 7, 5, 1, 1, true),     // 25 taps, 7 channels
      test::same_conv_params(2, 6, 6, 3, 6, 3, 1, 1, true),      // depth multiplier 2: scalar
      test::same_conv_params(32, 7, 7, 144, 144, 3, 1, 1, true),  // batch 32, 36 quads
  }, 6);
}

// The conv gradients' tiled implicit GEMM (shaders/common/implicit_gemm.glsl) with float16 x, w, dy
// and dx: widened as the tiles are loaded into shared memory, rounded once at the store (dw: in
// sum_partials, after the float partials). The shapes reach each tile choice of ops/common.cpp.
TEST_CASE("vulkan: float16-storage conv gradients vs reference and the float32 kernel's rounding") {
  grad_sweep(false, 1625, {
      test::same_conv_params(2, 9, 7, 12, 20, 3, 1),     // dx: 12 channels, the narrow 128x16 tile
      test::same_conv_params(2, 9, 7, 24, 40, 3, 1),     // dx: the 64x64 tile; dw: tiles fitted to 216 x 40
      test::same_conv_params(2, 11, 9, 16, 24, 3, 2, 2),  // stride 2, two groups
      test::same_conv_params(1, 13, 11, 5, 7, 5, 1),     // 25 taps, odd channels, one image
      test::same_conv_params(8, 28, 28, 32, 32, 3, 1),   // dw: K = 6272 in several splits
      test::same_conv_params(32, 7, 7, 144, 24, 1, 1),   // batch 32, 1x1 144 -> 24
      test::same_conv_params(4, 64, 64, 256, 16, 1, 1),  // dx: 2^22 outputs, the 128x64 tile
      test::same_conv_params(1, 1, 1, 3, 2, 1, 1),       // one position
  }, 8);
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
// variance), then the depthwise and the 3x3 conv (12 -> 12) input and filter gradients of its
// x_backprop.
struct HalfChain {
  std::vector<int64_t> x_shape{2, 7, 5, 12}, w_shape{3, 3, 12, 1}, cw_shape{3, 3, 12, 12}, ch{12};
  std::vector<int32_t> x_sizes{2, 7, 5, 12}, w_sizes{3, 3, 12, 1}, cw_sizes{3, 3, 12, 12};
  std::vector<uint16_t> dy, x, w, cw;
  std::vector<float> scale, mean, var;
  Attrs conv{{"strides", {1, 1, 1, 1}}, {"padding", "SAME"}};
  Attrs bn{{"epsilon", 0.001}, {"is_training", true}};
  TensorView rs3{DType::float32, {0}, nullptr};
  HalfChain() {
    std::mt19937 rng(1624);
    dy = random_half(2 * 7 * 5 * 12, rng);
    x = random_half(dy.size(), rng);
    w = random_half(9 * 12, rng);
    cw = random_half(9 * 12 * 12, rng);
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
  Outputs bn;
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
  // The gradients of g, each op by op; a: the filter (input gradients) or x (filter gradients).
  Outputs dxo, dwo, cdxo, cdwo;
  auto gradient = [&](const char* op, const std::vector<int64_t>& w_shape, const std::vector<int32_t>& w_sizes,
                      const std::vector<uint16_t>& w, Outputs* out) {
    const bool input = std::string(op).find("BackpropInput") != std::string::npos;
    Inputs in{{"out_backprop", g}};
    if (input) in["input_sizes"] = c.sizes(c.x_sizes), in["filter"] = c.half(w_shape, w.data());
    else in["filter_sizes"] = c.sizes(w_sizes), in["input"] = c.half(c.x_shape, c.x.data());
    const uint64_t moved = uploaded([&] { return run_op(op, in, c.conv, out, o); }, &s);
    REQUIRE_MESSAGE(s.ok(), op << ": " << s.to_string());
    CHECK_MESSAGE(moved == (n + (input ? w.size() : n)) * per, op);
  };
  gradient("DepthwiseConv2dNativeBackpropInput", c.w_shape, c.w_sizes, c.w, &dxo);
  gradient("DepthwiseConv2dNativeBackpropFilter", c.w_shape, c.w_sizes, c.w, &dwo);
  gradient("Conv2DBackpropInput", c.cw_shape, c.cw_sizes, c.cw, &cdxo);
  gradient("Conv2DBackpropFilter", c.cw_shape, c.cw_sizes, c.cw, &cdwo);

  // The same on device tensors, one Sequence.
  Tensor tdy, tx, tw, tcw, tscale, tmean, tvar, tg, tds, tdo, tdx, tdw, tcdx, tcdw, tcdx2;
  for (auto [t, dtype, shape] : {std::tuple{&tdy, DType::float16, c.x_shape}, {&tx, DType::float16, c.x_shape},
                                 {&tw, DType::float16, c.w_shape}, {&tscale, DType::float32, c.ch},
                                 {&tmean, DType::float32, c.ch}, {&tvar, DType::float32, c.ch},
                                 {&tg, DType::float16, c.x_shape}, {&tds, DType::float32, c.ch},
                                 {&tdo, DType::float32, c.ch}, {&tdx, DType::float16, c.x_shape},
                                 {&tdw, DType::float16, c.w_shape}, {&tcw, DType::float16, c.cw_shape},
                                 {&tcdx, DType::float16, c.x_shape}, {&tcdw, DType::float16, c.cw_shape},
                                 {&tcdx2, DType::float16, c.x_shape}})
    REQUIRE(Tensor::allocate_on("vulkan", dtype, shape, t).ok());
  CHECK(tdy.num_bytes() == 2 * n);
  bytes = uploaded([&] { return tdy.upload(c.dy.data()); }, &s);
  REQUIRE(s.ok());
  CHECK(bytes == 2 * n);  // a float16 device tensor moves 2 bytes per value
  REQUIRE(tx.upload(c.x.data()).ok());
  REQUIRE(tw.upload(c.w.data()).ok());
  REQUIRE(tcw.upload(c.cw.data()).ok());
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
  REQUIRE(seq.record("Conv2DBackpropInput", {{"filter", &tcw}, {"out_backprop", &tg}},
                     {{"input_sizes", c.sizes(c.x_sizes)}}, c.conv, {{"output", &tcdx}}).ok());
  REQUIRE(seq.record("Conv2DBackpropFilter", {{"input", &tx}, {"out_backprop", &tg}},
                     {{"filter_sizes", c.sizes(c.cw_sizes)}}, c.conv, {{"output", &tcdw}}).ok());
  // V2: the float16 device tensor `input` gives dx's shape only.
  s = seq.record("Conv2DBackpropInputV2", {{"input", &tx}, {"filter", &tcw}, {"out_backprop", &tg}}, {}, c.conv,
                 {{"output", &tcdx2}});
  REQUIRE_MESSAGE(s.ok(), s.to_string());
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
                           {&tdx, &dxo[0].second}, {&tdw, &dwo[0].second}, {&tcdx, &cdxo[0].second},
                           {&tcdw, &cdwo[0].second}, {&tcdx2, &cdxo[0].second}}) {
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
  s = other.record("Conv2D", {{"input", &tg}, {"filter", &tcw}}, {}, c.conv, {{"output", &tcdx}});
  CHECK_MESSAGE(s.code() == Code::InvalidArgument, s.to_string());
}

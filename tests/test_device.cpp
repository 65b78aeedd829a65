// Device tensors and gradrt::Sequence through the public API (core/device.cpp): a conv input
// gradient dx, then a filter gradient with dx as its input, recorded on device tensors and submitted,
// against run_op on host tensors, bit for bit; on vulkan 1 submission and 0 bytes per submit,
// on cpu the same API in host memory; likewise a chain with FusedBatchNormGradV3 between the two
// (its scale/offset gradients written straight into device tensors). Refusals: a device tensor in plain run_op, an op, a
// layout or an empty input a sequence does not take, a wrong output shape. Test names put them in the vulkan and
// cpu ctest groups.
#include <doctest/doctest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"

namespace {

using namespace gradrt;

// Submits seq; on vulkan, exactly 1 submission and no bytes copied either way.
void submit_without_copies(Sequence& seq, const std::string& device) {
  DeviceCounters before, after;
  REQUIRE(device_counters(device, &before).ok());
  const Status s = seq.submit();
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  REQUIRE(device_counters(device, &after).ok());
  if (device != "vulkan") return;
  CHECK(after.submissions - before.submissions == 1);
  CHECK(after.bytes_to_device == before.bytes_to_device);
  CHECK(after.bytes_to_host == before.bytes_to_host);
}

// Host inputs and the host run's results of the chain.
struct Chain {
  std::vector<int64_t> x_shape{2, 6, 5, 8}, w_shape{3, 3, 8, 4}, y_shape{2, 6, 5, 4};
  std::vector<float> w, dy;
  std::vector<int32_t> x_sizes{2, 6, 5, 8}, w_sizes{3, 3, 8, 4};
  Attrs attrs{{"strides", {1, 1, 1, 1}}, {"padding", "SAME"}};
  Outputs dx, dw;

  Chain() : w(288), dy(240) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> d(-1, 1);
    for (auto* v : {&w, &dy})
      for (float& e : *v) e = d(rng);
  }
  TensorView sizes(const std::vector<int32_t>& v) const { return {DType::int32, {4}, v.data()}; }
  Status run_on_host(const std::string& backend) {
    RunOptions o;
    o.backend = backend;
    Status s = run_op("Conv2DBackpropInput", {{"input_sizes", sizes(x_sizes)},
        {"filter", {DType::float32, w_shape, w.data()}}, {"out_backprop", {DType::float32, y_shape, dy.data()}}},
        attrs, &dx, o);
    if (!s.ok()) return s;
    return run_op("Conv2DBackpropFilter", {{"input", {DType::float32, x_shape, dx[0].second.data()}},
        {"filter_sizes", sizes(w_sizes)}, {"out_backprop", {DType::float32, y_shape, dy.data()}}}, attrs, &dw, o);
  }
};

void check_sequence(const std::string& device) {
  Chain c;
  Tensor w, dy, dx, dw;
  Status s = Tensor::allocate_on(device, DType::float32, c.w_shape, &w);
  if (s.code() == Code::Unavailable || s.code() == Code::NotFound) {
    MESSAGE("skipped: " << s.to_string());
    return;
  }
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  REQUIRE(c.run_on_host(device).ok());
  CHECK(w.data() == nullptr);  // not host memory
  CHECK(w.device() == device);
  REQUIRE(Tensor::allocate_on(device, DType::float32, c.y_shape, &dy).ok());
  REQUIRE(Tensor::allocate_on(device, DType::float32, c.x_shape, &dx).ok());
  REQUIRE(Tensor::allocate_on(device, DType::float32, c.w_shape, &dw).ok());
  REQUIRE(w.upload(c.w.data()).ok());
  REQUIRE(dy.upload(c.dy.data()).ok());

  // A device tensor is not host data: plain run_op refuses it.
  Outputs out;
  s = run_op("Conv2DBackpropInput", {{"input_sizes", c.sizes(c.x_sizes)}, {"filter", w.view()},
             {"out_backprop", dy.view()}}, c.attrs, &out);
  CHECK(s.code() == Code::InvalidArgument);

  Sequence seq(device);
  REQUIRE(seq.record("Conv2DBackpropInput", {{"filter", &w}, {"out_backprop", &dy}},
                     {{"input_sizes", c.sizes(c.x_sizes)}}, c.attrs, {{"output", &dx}}).ok());
  s = seq.record("Conv2DBackpropFilter", {{"input", &dx}, {"out_backprop", &dy}},
                 {{"filter_sizes", c.sizes(c.w_sizes)}}, c.attrs, {{"output", &dw}});
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  for (int run = 0; run < 2; ++run) {
    submit_without_copies(seq, device);
    std::vector<float> got(c.w.size(), -9.0f);
    REQUIRE(dw.download(got.data()).ok());
    CHECK(std::memcmp(got.data(), c.dw[0].second.data(), 4 * got.size()) == 0);
  }

  // Refusals, each in a fresh sequence (a failed record makes a sequence refuse everything after):
  // an op core converts on the host, NCHW, an empty input (core would write its zeros through
  // the key), a wrong output shape; then submit refuses too.
  auto refused = [&](std::string_view op, const std::map<std::string, const Tensor*, std::less<>>& in,
                     const Inputs& host, const Attrs& attrs, const std::map<std::string, Tensor*, std::less<>>& out) {
    Sequence q(device);
    const Status st = q.record(op, in, host, attrs, out);
    return st.code() == Code::InvalidArgument && st.message().find(std::string(op)) != std::string::npos;
  };
  Attrs nchw = c.attrs;
  nchw["data_format"] = "NCHW";
  Tensor x0;
  REQUIRE(Tensor::allocate_on(device, DType::float32, {0, 6, 5, 8}, &x0).ok());
  CHECK(refused("MaxPoolGrad", {}, {}, {}, {}));
  CHECK(refused("Conv2DBackpropInput", {{"filter", &w}, {"out_backprop", &dy}}, {{"input_sizes", c.sizes(c.x_sizes)}},
                nchw, {{"output", &dx}}));
  CHECK(refused("Conv2DBackpropFilter", {{"input", &x0}, {"out_backprop", &dy}},
                {{"filter_sizes", c.sizes(c.w_sizes)}}, c.attrs, {{"output", &dw}}));
  Sequence wrong(device);
  s = wrong.record("Conv2DBackpropInput", {{"filter", &w}, {"out_backprop", &dy}},
                   {{"input_sizes", c.sizes(c.x_sizes)}}, c.attrs, {{"output", &dw}});
  CHECK_MESSAGE(s.code() == Code::InvalidArgument, s.to_string());
  CHECK(wrong.submit().code() == Code::InvalidArgument);
}

// conv input gradient -> FusedBatchNormGradV3 (y_backprop = that dx) -> conv filter gradient
// of the batch norm's x_backprop: one Sequence against run_op on host tensors, every output.
void check_batch_norm_sequence(const std::string& device) {
  Chain c;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-1, 1), pos(0.5f, 1.5f);
  const std::vector<int64_t> ch{8};
  std::vector<float> x(480), scale(8), mean(8), var(8);
  for (float& e : x) e = d(rng);
  for (float& e : scale) e = pos(rng);
  for (float& e : mean) e = d(rng);
  for (float& e : var) e = pos(rng);
  const Attrs bn{{"epsilon", 0.001}, {"is_training", true}};
  const TensorView rs3{DType::float32, {0}, nullptr};
  auto f32 = [](const std::vector<int64_t>& shape, const void* p) { return TensorView{DType::float32, shape, p}; };

  // Op by op on host tensors, on the same backend.
  RunOptions o;
  o.backend = device;
  Outputs dx, bnout, dw;
  Status s = run_op("Conv2DBackpropInput", {{"input_sizes", c.sizes(c.x_sizes)}, {"filter", f32(c.w_shape, c.w.data())},
                    {"out_backprop", f32(c.y_shape, c.dy.data())}}, c.attrs, &dx, o);
  if (s.code() == Code::Unavailable || s.code() == Code::NotFound) {
    MESSAGE("skipped: " << s.to_string());
    return;
  }
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  s = run_op("FusedBatchNormGradV3", {{"y_backprop", f32(c.x_shape, dx[0].second.data())}, {"x", f32(c.x_shape, x.data())},
             {"scale", f32(ch, scale.data())}, {"reserve_space_1", f32(ch, mean.data())},
             {"reserve_space_2", f32(ch, var.data())}, {"reserve_space_3", rs3}}, bn, &bnout, o);
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  REQUIRE(run_op("Conv2DBackpropFilter", {{"input", f32(c.x_shape, bnout[0].second.data())},
          {"filter_sizes", c.sizes(c.w_sizes)}, {"out_backprop", f32(c.y_shape, c.dy.data())}}, c.attrs, &dw, o).ok());

  // The same on device tensors, one Sequence.
  Tensor tw, tdy, tx, tscale, tmean, tvar, tdx, tdx2, tds, tdo, tdw;
  for (auto [t, shape] : {std::pair{&tw, c.w_shape}, {&tdy, c.y_shape}, {&tx, c.x_shape}, {&tscale, ch}, {&tmean, ch},
                          {&tvar, ch}, {&tdx, c.x_shape}, {&tdx2, c.x_shape}, {&tds, ch}, {&tdo, ch}, {&tdw, c.w_shape}})
    REQUIRE(Tensor::allocate_on(device, DType::float32, shape, t).ok());
  REQUIRE(tw.upload(c.w.data()).ok());
  REQUIRE(tdy.upload(c.dy.data()).ok());
  REQUIRE(tx.upload(x.data()).ok());
  REQUIRE(tscale.upload(scale.data()).ok());
  REQUIRE(tmean.upload(mean.data()).ok());
  REQUIRE(tvar.upload(var.data()).ok());
  Sequence seq(device);
  REQUIRE(seq.record("Conv2DBackpropInput", {{"filter", &tw}, {"out_backprop", &tdy}},
                     {{"input_sizes", c.sizes(c.x_sizes)}}, c.attrs, {{"output", &tdx}}).ok());
  s = seq.record("FusedBatchNormGradV3", {{"y_backprop", &tdx}, {"x", &tx}, {"scale", &tscale},
                 {"reserve_space_1", &tmean}, {"reserve_space_2", &tvar}}, {{"reserve_space_3", rs3}}, bn,
                 {{"x_backprop", &tdx2}, {"scale_backprop", &tds}, {"offset_backprop", &tdo}});
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  REQUIRE(seq.record("Conv2DBackpropFilter", {{"input", &tdx2}, {"out_backprop", &tdy}},
                     {{"filter_sizes", c.sizes(c.w_sizes)}}, c.attrs, {{"output", &tdw}}).ok());
  for (int run = 0; run < 2; ++run) {
    submit_without_copies(seq, device);
    for (auto [t, want] : {std::pair{&tdx2, &bnout[0].second}, {&tds, &bnout[1].second}, {&tdo, &bnout[2].second},
                           {&tdw, &dw[0].second}}) {
      std::vector<float> got(size_t(t->num_elements()), -9.0f);
      REQUIRE(t->download(got.data()).ok());
      CHECK(std::memcmp(got.data(), want->data(), 4 * got.size()) == 0);
    }
  }
}

TEST_CASE("vulkan: Sequence of device tensors (public API): op-by-op bits, 1 submission, 0 copies") {
  check_sequence("vulkan");
}

TEST_CASE("cpu: Sequence of device tensors on cpu: host memory, calls in order, run_op's bits") {
  check_sequence("cpu");
}

TEST_CASE("vulkan: a Sequence with FusedBatchNormGradV3 (public API): op-by-op bits, 1 submission, 0 copies") {
  check_batch_norm_sequence("vulkan");
}

TEST_CASE("cpu: a Sequence with FusedBatchNormGradV3 on cpu: run_op's bits") { check_batch_norm_sequence("cpu"); }

}  // namespace

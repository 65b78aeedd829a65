// Test hooks for the host (tests/test_vulkan_host.cpp declares them weak, so the tests link
// without Vulkan): device loss and timeouts, reuse and concurrency of submissions, device
// tensors and sequences (a small backward chain op by op and as one Sequence, bit for bit).
#include "testing.h"

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "context.h"
#include "gradrt/gradrt.h"
#include "ops/common.h"
#include "ops/ops.h"
#include "sequence.h"
#include "status_macros.h"

namespace gradrt::vk::testing {
namespace {

std::atomic<const Submissions*> g_fault_target{nullptr};
std::atomic<VkResult> g_fault{VK_SUCCESS};

// A context of its own: validation on when installed, no cache on disk.
Status make_context(std::unique_ptr<Context>* ctx) {
  Options o;
  o.validation = 1;
  o.cache_dir = "-";
  return Context::create(o, ctx);
}

// One job: result[i] = sum over 3 splits of partial[s * n + i], small integers (exact in float),
// checked against the host's sum. `seed` varies the data from job to job.
Status reduce_and_check(Context& ctx, int seed) {
  const int64_t n = 29 + seed % 7, splits = 3;
  std::vector<float> partial(n * splits), result(n, -1.0f);
  for (int64_t i = 0; i < n * splits; ++i) partial[i] = float((i * 5 + seed) % 11);
  Job job(ctx);
  int bp, br;
  Status s = job.input(partial.data(), partial.size() * sizeof(float), &bp);
  if (s.ok()) s = job.output(result.data(), result.size() * sizeof(float), &br);
  if (s.ok()) s = sum_partials<float>(ctx, job, bp, br, n, splits, 1.0f);
  if (s.ok()) s = job.run();
  if (!s.ok()) return s;
  for (int64_t i = 0; i < n; ++i) {
    const float want = partial[i] + partial[n + i] + partial[2 * n + i];
    if (result[i] != want)
      return Status(Code::Internal, "job " + std::to_string(seed) + ": element " + std::to_string(i) + " is " +
                                        std::to_string(result[i]) + ", want " + std::to_string(want));
  }
  return Status::OK();
}

}  // namespace

VkResult wait_fault(const Submissions* target) {
  if (g_fault_target.load(std::memory_order_relaxed) != target) return VK_SUCCESS;  // the usual case
  const Submissions* expected = target;
  return g_fault_target.compare_exchange_strong(expected, nullptr) ? g_fault.load() : VK_SUCCESS;
}

// The next run's wait really waits, then reports `fault` ("timeout" or "device_lost"): *during
// is that run's status, *after the status of a run after it. The context is then destroyed.
Status fault_probe(const std::string& fault, Status* during, Status* after) {
  std::unique_ptr<Context> ctx;
  Status s = make_context(&ctx);
  if (!s.ok()) return s;
  if (!(s = reduce_and_check(*ctx, 0)).ok()) return s;
  g_fault = fault == "timeout" ? VK_TIMEOUT : VK_ERROR_DEVICE_LOST;
  g_fault_target = &ctx->submissions();
  *during = reduce_and_check(*ctx, 1);
  *after = reduce_and_check(*ctx, 2);
  return Status::OK();
}

// `threads` threads each run `runs` jobs on one context at once, without its mutex; the first
// failure is returned. *made: the submissions (command pool, fence, descriptor pool) created.
Status concurrency_probe(int threads, int runs, int* made) {
  std::unique_ptr<Context> ctx;
  Status s = make_context(&ctx);
  if (!s.ok()) return s;
  std::vector<Status> status(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = 0; r < runs && status[t].ok(); ++r) status[t] = reduce_and_check(*ctx, t * runs + r);
    });
  for (auto& t : pool) t.join();
  *made = ctx->submissions().made();
  for (const Status& st : status)
    if (!st.ok()) return st;
  return Status::OK();
}

// ---- device tensors and sequences
namespace {

// conv input gradient -> batch-norm gradient -> conv filter, depthwise filter and depthwise
// input gradients of its dx: every kind of dispatch the training chains use, split sums included.
struct Chain {
  ConvParams conv, dw;
  BatchNormParams bn;
  std::map<std::string, std::vector<float>> t;

  explicit Chain(int seed) {
    conv.batch = 2, conv.in_h = conv.in_w = 6, conv.in_c = conv.filter_in_c = 8;
    conv.out_h = conv.out_w = 6, conv.out_c = 8, conv.filter_h = conv.filter_w = 3;
    conv.pad_top = conv.pad_left = 1;
    dw = conv;
    dw.filter_in_c = 8;  // depthwise: multiplier 1, out_c = in_c
    bn.rows = 72, bn.channels = 8, bn.epsilon = 0.001f;
    const std::pair<const char*, int64_t> sizes[] = {
        {"w", conv.w_elements()}, {"dy", 576}, {"x", 576}, {"scale", 8}, {"mean", 8}, {"var", 8},
        {"wd", dw.dw_w_elements()}, {"dx", 576}, {"dx2", 576}, {"ds", 8}, {"doff", 8},
        {"dw", conv.w_elements()}, {"dwd", dw.dw_w_elements()}, {"dx3", 576}};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(0.5f, 1.5f);
    for (auto [name, n] : sizes) {
      t[name].resize(n);
      for (float& e : t[name]) e = d(rng);
    }
  }
  static bool input(const std::string& name) {
    return name == "w" || name == "dy" || name == "x" || name == "scale" || name == "mean" || name == "var" ||
           name == "wd";
  }
  // The chain on `ctx` with tensors found by ptr (host arrays or resident keys).
  template <class Ptr>
  Status run(Context& ctx, Ptr p) const {
    GRADRT_RETURN_IF_ERROR(conv2d_backprop_input<float>(ctx, conv, p("w"), p("dy"), p("dx")));
    GRADRT_RETURN_IF_ERROR(fused_batch_norm_grad<float>(ctx, bn, p("dx"), p("x"), p("scale"), p("mean"), p("var"),
                                                        p("dx2"), p("ds"), p("doff")));
    GRADRT_RETURN_IF_ERROR(conv2d_backprop_filter<float>(ctx, conv, p("x"), p("dx2"), p("dw")));
    GRADRT_RETURN_IF_ERROR(depthwise_conv2d_native_backprop_filter<float>(ctx, dw, p("x"), p("dx2"), p("dwd")));
    return depthwise_conv2d_native_backprop_input<float>(ctx, dw, p("wd"), p("dx2"), p("dx3"));
  }
};

Status mismatch(const std::string& what) { return Status(Code::Internal, "sequence probe: " + what); }

// One thread's check. counts (single thread only): per sequence run {submissions, bytes to the
// device, bytes to the host}, then the dispatches recorded.
Status check_chain(Context& ctx, int seed, bool count, int64_t counts[4]) {
  Chain host(seed);
  GRADRT_RETURN_IF_ERROR(host.run(ctx, [&](const char* n) { return host.t.at(n).data(); }));

  Chain dev(seed);
  std::map<std::string, void*> key;
  for (auto& [name, v] : dev.t) GRADRT_RETURN_IF_ERROR(ctx.residents().create(4 * v.size(), &key[name]));
  struct Free {
    Context& ctx;
    std::map<std::string, void*>& key;
    ~Free() {
      for (auto& [name, k] : key) ctx.residents().destroy(k);
    }
  } free_keys{ctx, key};
  {
    Job up(ctx, false);
    for (auto& [name, v] : dev.t)
      if (Chain::input(name)) GRADRT_RETURN_IF_ERROR(up.upload(key[name], v.data(), 4 * v.size()));
    GRADRT_RETURN_IF_ERROR(up.run());
  }
  Sequence seq(ctx);
  GRADRT_RETURN_IF_ERROR(seq.begin());
  if (seq.begin().code() != Code::InvalidArgument) return mismatch("a second begin() on one thread was accepted");
  // A host tensor inside a sequence is refused (it would be a copy in every run).
  std::vector<float> host_dx(576);
  const Status refused = conv2d_backprop_input<float>(ctx, dev.conv, static_cast<float*>(key["w"]),
                                                      static_cast<float*>(key["dy"]), host_dx.data());
  if (refused.code() != Code::InvalidArgument) return mismatch("a host output inside a sequence: " + refused.to_string());
  Sequence fresh(ctx);  // the refused call left nothing behind in `seq`: record the chain in a clean one
  seq.end();
  GRADRT_RETURN_IF_ERROR(fresh.begin());
  const Status recorded = dev.run(ctx, [&](const char* n) { return static_cast<float*>(key.at(n)); });
  fresh.end();
  GRADRT_RETURN_IF_ERROR(recorded);
  for (int run = 0; run < 2; ++run) {  // the second run resubmits the recorded command buffer
    const Context::Counters c0 = ctx.counters();
    GRADRT_RETURN_IF_ERROR(fresh.run());
    const Context::Counters c1 = ctx.counters();
    if (count) {
      counts[0] = int64_t(c1.submissions - c0.submissions);
      counts[1] = int64_t(c1.bytes_to_device - c0.bytes_to_device);
      counts[2] = int64_t(c1.bytes_to_host - c0.bytes_to_host);
      counts[3] = int64_t(fresh.dispatches());
    }
    Job down(ctx, false);
    for (auto& [name, v] : dev.t) {
      std::fill(v.begin(), v.end(), -7.0f);
      GRADRT_RETURN_IF_ERROR(down.download(key[name], v.data(), 4 * v.size()));
    }
    GRADRT_RETURN_IF_ERROR(down.run());
    for (auto& [name, v] : host.t)
      if (std::memcmp(v.data(), dev.t[name].data(), 4 * v.size()))
        return mismatch(name + " differs from the op-by-op run (run " + std::to_string(run) + ")");
  }
  return Status::OK();
}

}  // namespace

// `threads` threads at once on one context (validation on when installed), each its own chain
// and sequence. counts: see check_chain (filled when threads == 1).
Status sequence_probe(int threads, int64_t counts[4]) {
  std::unique_ptr<Context> ctx;
  GRADRT_RETURN_IF_ERROR(make_context(&ctx));
  std::vector<Status> status(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { status[t] = check_chain(*ctx, 11 + t, threads == 1, counts); });
  for (auto& t : pool) t.join();
  for (const Status& s : status) GRADRT_RETURN_IF_ERROR(s);
  return Status::OK();
}

// Through the public run_op on the vulkan backend's own context (the path a plan run on device
// tensors takes): TensorViews whose data are resident keys, output_memory returning keys, inside
// a Sequence: Conv2DBackpropInput, then Conv2DBackpropFilter of its result, compared bit for bit
// with the same run_op calls on host tensors. counts: {submissions, bytes to the device, bytes to
// the host} of the sequence's run. (FusedBatchNormGrad cannot take this path yet: core computes
// its scale/offset gradients into host vectors and copies them to the outputs.)
Status run_op_sequence_probe(int64_t counts[3]) {
  Status s;
  Context* ctx = backend_context(&s);
  if (!ctx) return s;
  const std::vector<int64_t> x_shape{2, 5, 5, 8}, w_shape{3, 3, 8, 8};
  std::map<std::string, std::vector<float>> host{{"w", std::vector<float>(576)}, {"dy", std::vector<float>(400)},
                                                 {"x", std::vector<float>(400)}};
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(0.5f, 1.5f);
  for (auto& [name, v] : host)
    for (float& e : v) e = d(rng);
  const int32_t x_sizes[4] = {2, 5, 5, 8}, w_sizes[4] = {3, 3, 8, 8};
  const Attrs attrs{{"strides", {1, 1, 1, 1}}, {"padding", "SAME"}};
  auto f32 = [](const std::vector<int64_t>& shape, const void* data) { return TensorView{DType::float32, shape, data}; };
  // The two ops on tensors at w, dy, x (host arrays or keys); dw's output memory from `out`.
  auto chain = [&](const void* w, const void* dy, const void* x, RunOptions o, std::function<void*(int)> out,
                   Outputs* dx, Outputs* dw) {
    o.backend = "vulkan";
    o.output_memory = [&](std::string_view, DType, const std::vector<int64_t>&) { return out(0); };
    GRADRT_RETURN_IF_ERROR(run_op("Conv2DBackpropInput", {{"input_sizes", {DType::int32, {4}, x_sizes}},
        {"filter", f32(w_shape, w)}, {"out_backprop", f32(x_shape, dy)}}, attrs, dx, o));
    o.output_memory = [&](std::string_view, DType, const std::vector<int64_t>&) { return out(1); };
    return run_op("Conv2DBackpropFilter", {{"input", f32(x_shape, x)}, {"filter_sizes", {DType::int32, {4}, w_sizes}},
        {"out_backprop", f32(x_shape, (*dx)[0].second.data())}}, attrs, dw, o);
  };
  Outputs dx_host, dw_host, dx_dev, dw_dev;
  GRADRT_RETURN_IF_ERROR(chain(host["w"].data(), host["dy"].data(), host["x"].data(), {},
                               [](int) -> void* { return nullptr; }, &dx_host, &dw_host));
  // Device tensors, one sequence.
  std::map<std::string, void*> key;
  struct Free {
    Context& ctx;
    std::map<std::string, void*>& key;
    ~Free() {
      for (auto& [name, k] : key) ctx.residents().destroy(k);
    }
  } free_keys{*ctx, key};
  for (auto [name, n] : {std::pair{"w", 576}, {"dy", 400}, {"x", 400}, {"dx", 400}, {"dw", 576}})
    GRADRT_RETURN_IF_ERROR(ctx->residents().create(4 * n, &key[name]));
  {
    Job up(*ctx, false);
    for (auto& [name, v] : host) GRADRT_RETURN_IF_ERROR(up.upload(key[name], v.data(), 4 * v.size()));
    GRADRT_RETURN_IF_ERROR(up.run());
  }
  Sequence seq(*ctx);
  GRADRT_RETURN_IF_ERROR(seq.begin());
  s = chain(key["w"], key["dy"], key["x"], {}, [&](int i) { return key[i ? "dw" : "dx"]; }, &dx_dev, &dw_dev);
  seq.end();
  GRADRT_RETURN_IF_ERROR(s);
  if (dw_dev[0].second.data() != key["dw"]) return mismatch("run_op did not write dw into the device tensor");
  const Context::Counters c0 = ctx->counters();
  GRADRT_RETURN_IF_ERROR(seq.run());
  const Context::Counters c1 = ctx->counters();
  counts[0] = int64_t(c1.submissions - c0.submissions);
  counts[1] = int64_t(c1.bytes_to_device - c0.bytes_to_device);
  counts[2] = int64_t(c1.bytes_to_host - c0.bytes_to_host);
  std::vector<float> got(576);
  Job down(*ctx, false);
  GRADRT_RETURN_IF_ERROR(down.download(key["dw"], got.data(), 4 * got.size()));
  GRADRT_RETURN_IF_ERROR(down.run());
  if (std::memcmp(got.data(), dw_host[0].second.data(), 4 * got.size()))
    return mismatch("dw differs from run_op on host tensors");
  return Status::OK();
}

// Conv2DBackpropInput's variant (ops/common.h InputVariant) by name: false for an unknown one.
// The current one's name: input_variant_name().
bool set_input_variant(const std::string& name) {
  InputVariant v;
  if (!parse_input_variant(name.c_str(), &v)) return false;
  vk::set_input_variant(v);
  return true;
}
std::string input_variant_name() { return vk::input_variant_name(vk::input_variant()); }

}  // namespace gradrt::vk::testing

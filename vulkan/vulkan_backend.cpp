// The `vulkan` backend: float32 kernels on a Vulkan compute device, and float64 ones where the
// device has shaderFloat64 (Unimplemented elsewhere).
// The context is created on first use; when that fails (no loader, no device) every call
// answers Unavailable with the reason. Calls from several threads are serialised by the
// context mutex (one queue, one submission at a time).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <mutex>

#include "backend.h"
#include "context.h"
#include "sequence.h"
#include "ops/common.h"
#include "ops/ops.h"
#include "status_macros.h"

namespace gradrt {
namespace {

class VulkanBackend final : public Backend {
 public:
  const char* name() const override { return "vulkan"; }

  Status available() override { return init(); }

  std::string detail() override {
    Status s = init();
    if (!s.ok()) return s.message();
    std::lock_guard<std::mutex> lock(ctx_->mutex());
    return std::string(ctx_->info().props.deviceName) + "\n" + ctx_->describe();
  }

  // Only a real GPU (not lavapipe/SwiftShader, which are CPU-type devices) and only work big
  // enough that the transfers are paid back (~4M multiply-adds or elements).
  // `auto` sends only the GEMM-like convolutions to a real GPU, and only large ones. Tensors
  // live in host memory, and for the bandwidth-bound ops (depthwise, batch norm, pooling) the
  // copies to and from a discrete GPU alone take longer than one cpu pass: measured on an H100
  // (bench/vulkan_bench), DepthwiseConv2dNativeBackpropInput 8x112x112x32 6.1 ms wall vs 2.4 ms
  // cpu, FusedBatchNormGrad 8x56x56x64 4.7 vs 1.9, Conv2DBackpropInput 8x56x56x64 2.8 vs 12.6.
  // Which kernels may go is the list's `offload` column (kernels.h).
  bool preferred_for(Kernel kernel, int64_t work) override {
    if (!kernel_info(kernel).offload || !init().ok()) return false;
    return ctx_->info().is_real_gpu() && work >= (int64_t{1} << 22);
  }

  // Asked by prepare() before any data: what would otherwise come back as Unimplemented.
  Status supports(const KernelQuery& q) override {
    GRADRT_RETURN_IF_ERROR(init());
    if (q.dtype == DType::float64 && !ctx_->info().features.shaderFloat64)
      return Status(Code::Unimplemented, std::string("vulkan: ") + ctx_->info().props.deviceName +
                                             " has no shaderFloat64; float64 kernels need it (use cpu)");
    return vk::check_int32(kernel_info(q.kernel).stem, {q.max_elements});
  }
  std::string isa_for(const KernelQuery&) override {
    return init().ok() ? std::string(ctx_->info().props.deviceName) : std::string();
  }

  // float64 uses the _f64 shader variants (devices with shaderFloat64; Unimplemented elsewhere).
#define GRADRT_VK_FORWARD(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES)                          \
  Status STEM(const Exec&, const P& p, GRADRT_UNPACK ARGS) override {                      \
    return forward([&] { return vk::STEM(*ctx_, p, GRADRT_UNPACK NAMES); });               \
  }
  GRADRT_KERNELS(GRADRT_VK_FORWARD, float)
  GRADRT_KERNELS(GRADRT_VK_FORWARD, double)
#undef GRADRT_VK_FORWARD

  // float16 storage (kernels.h GRADRT_F16_KERNELS): the _f16 shader variants, where
  // vk::f16_storage says the device and shader set take them. vk::STEM on uint16_t pointers: the
  // op's template at T = uint16_t (batch norm: its overload with float operands, ops.h).
  bool f16_storage(Kernel kernel) override {
    if (!init().ok() || !vk::f16_storage(*ctx_)) return false;
#define GRADRT_VK_F16_LISTED(STEM, P, ARGS, NAMES) kernel == Kernel::STEM ||
    return GRADRT_F16_KERNELS(GRADRT_VK_F16_LISTED) false;
#undef GRADRT_VK_F16_LISTED
  }
#define GRADRT_VK_FORWARD_F16(STEM, P, ARGS, NAMES)                                       \
  Status STEM##_f16(const Exec&, const P& p, GRADRT_UNPACK ARGS) override {                \
    return forward([&] { return vk::STEM(*ctx_, p, GRADRT_UNPACK NAMES); });               \
  }
  GRADRT_F16_KERNELS(GRADRT_VK_FORWARD_F16)
#undef GRADRT_VK_FORWARD_F16

  // Device tensors are resident buffers (resident.h), sequences vk::Sequence (sequence.h).
  Status device_alloc(size_t bytes, void** key) override {
    GRADRT_RETURN_IF_ERROR(init());
    return ctx_->residents().create(bytes, key);
  }
  void device_free(void* key) override {
    if (init().ok()) ctx_->residents().destroy(key);
  }
  Status device_upload(void* key, const void* src, size_t bytes) override {
    return copy([&](vk::Job& job) { return job.upload(key, src, bytes); });
  }
  Status device_download(const void* key, void* dst, size_t bytes) override {
    return copy([&](vk::Job& job) { return job.download(key, dst, bytes); });
  }
  Status sequence_create(void** seq) override {
    GRADRT_RETURN_IF_ERROR(init());
    *seq = new vk::Sequence(*ctx_);
    return Status::OK();
  }
  Status sequence_record(void* seq, const std::function<Status()>& calls) override {
    auto* s = static_cast<vk::Sequence*>(seq);
    GRADRT_RETURN_IF_ERROR(s->begin());
    const Status st = calls();
    s->end();
    return st;
  }
  Status sequence_submit(void* seq) override { return static_cast<vk::Sequence*>(seq)->run(); }
  void sequence_free(void* seq) override { delete static_cast<vk::Sequence*>(seq); }
  Status counters(DeviceCounters* out) override {
    GRADRT_RETURN_IF_ERROR(init());
    const vk::Context::Counters c = ctx_->counters();
    *out = {c.submissions, c.bytes_to_device, c.bytes_to_host};
    return Status::OK();
  }

  explicit VulkanBackend(vk::Options options = {}) : options_(std::move(options)) {}
  bool validation_enabled() { return init().ok() && ctx_->validation_enabled(); }
  vk::Context* context(Status* s) {
    *s = init();
    return s->ok() ? ctx_.get() : nullptr;
  }

 private:
  // Runs a kernel on the context: one submission at a time; a pipeline created on the way is
  // written to the cache (a no-op unless one is new).
  template <class F>
  Status forward(F kernel) {
    Status s = init();
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> lock(ctx_->mutex());
    s = kernel();
    ctx_->save_pipeline_cache();
    return s;
  }

  // An upload or download: a job of its own (also while this thread records a sequence).
  template <class F>
  Status copy(F add) {
    GRADRT_RETURN_IF_ERROR(init());
    vk::Job job(*ctx_, false);
    GRADRT_RETURN_IF_ERROR(add(job));
    return job.run();
  }

  Status init() {
    std::call_once(once_, [this] { init_status_ = vk::Context::create(options_, &ctx_); });
    return init_status_;
  }

  vk::Options options_;
  std::once_flag once_;
  Status init_status_;
  std::unique_ptr<vk::Context> ctx_;
};

// Never destroyed: other static destructors (and driver threads) may still run at exit.
VulkanBackend* instance() {
  static VulkanBackend* backend = new VulkanBackend();
  return backend;
}

// A second instance for the tests, with the Khronos validation layer on when it is installed.
VulkanBackend* validated_instance() {
  static VulkanBackend* backend = [] {
    vk::Options o;
    o.validation = 1;
    return new VulkanBackend(o);
  }();
  return backend;
}

}  // namespace

Backend* vulkan_backend() { return instance(); }

vk::Context* vk::backend_context(Status* s) { return instance()->context(s); }

// Test hooks (tests/test_vulkan_backend.cpp declares them weak, so the test links without Vulkan).
namespace vk::testing {
Backend* validated_backend() { return validated_instance(); }
bool validation_enabled() { return validated_instance()->validation_enabled(); }
std::vector<std::string> validation_messages() { return vk::validation_messages(); }

// Opens `library` (as GRADRT_VULKAN_LIBRARY would), creates a context whose pipeline cache lives
// in `cache_dir` ("-": none), runs one small reduction and checks it, then destroys the context
// (which writes the cache). The status says why when any step fails.
Status probe(const std::string& library, const std::string& cache_dir) {
  Options o;
  o.library = library;
  o.cache_dir = cache_dir;
  std::unique_ptr<Context> ctx;
  Status s = Context::create(o, &ctx);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(ctx->mutex());
  const int64_t n = 37, splits = 5;
  std::vector<float> partial(n * splits), result(n, -1.0f);
  for (int64_t i = 0; i < n * splits; ++i) partial[i] = float(i % 7);
  Job job(*ctx);
  int bp, br;
  if (!(s = job.input(partial.data(), partial.size() * 4, &bp)).ok()) return s;
  if (!(s = job.output(result.data(), result.size() * 4, &br)).ok()) return s;
  if (!(s = sum_partials<float>(*ctx, job, bp, br, n, splits, 0.5f)).ok()) return s;
  if (!(s = job.run()).ok()) return s;
  for (int64_t i = 0; i < n; ++i) {
    float want = 0;
    for (int64_t k = 0; k < splits; ++k) want += partial[k * n + i];
    if (result[i] != want * 0.5f)
      return Status(Code::Internal, "probe: sum_partials gave " + std::to_string(result[i]) + " at " +
                                        std::to_string(i) + ", want " + std::to_string(want * 0.5f));
  }
  return Status::OK();
}

}  // namespace vk::testing

}  // namespace gradrt

// The Vulkan context: one instance, one device, one compute queue, a pipeline cache kept on
// disk, and `Job`, the unit of work: upload inputs through staging buffers, run a list of
// checked dispatches (a barrier between consecutive ones), read outputs back, wait.
//
// Every driver error becomes a Status (never an abort):
//   out of host/device memory, too-large shapes   -> ResourceExhausted
//   no loader, no device, device lost            -> Unavailable
//   anything else the driver says                -> Internal
// The context is not thread-safe by itself: the backend holds `mutex()` around a kernel.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "loader.h"

namespace gradrt::vk {

struct Options {
  std::string library;       // "" -> env GRADRT_VULKAN_LIBRARY, else libvulkan.so.1
  std::string device;        // "" -> env GRADRT_VULKAN_DEVICE (index or name substring)
  int validation = -1;       // -1 -> env GRADRT_VULKAN_VALIDATION=1; 0/1 force
  std::string cache_dir;     // "" -> $XDG_CACHE_HOME/gradrt or $HOME/.cache/gradrt; "-" none
};

struct DeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceFeatures features{};
  uint8_t device_uuid[VK_UUID_SIZE] = {};
  uint32_t subgroup_size = 0;          // informative only: shaders never assume one
  bool storage_16bit = false;          // storageBuffer16BitAccess
  uint64_t max_allocation = 0;         // maxMemoryAllocationSize (0 unknown)
  uint64_t device_local_bytes = 0;     // largest device-local heap
  int compute_queue_family = -1;
  uint32_t timestamp_bits = 0;         // of that queue family; 0: no timestamps
  bool is_real_gpu() const {
    return props.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU ||
           props.deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
  }
};

// SPIR-V embedded at build time (generated header per shader) plus its interface.
struct ShaderCode {
  const char* name;
  const uint32_t* words;
  size_t bytes;
  uint32_t bindings;    // storage buffers at set 0, bindings 0..n-1
  uint32_t push_size;   // bytes of the push-constant block (the C++ mirror's sizeof)
  bool f64;             // the float64 variant: needs shaderFloat64
};

// A compute pipeline: a shader specialised with constant_id 0 = local_size_x and
// constant_id 1.. = the shader's own constants (tile sizes).
struct Kernel {
  std::string key;
  uint32_t bindings = 0;
  uint32_t push_size = 0;
  uint32_t local_size = 0;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class Context {
 public:
  // Unavailable with the reason when no loader / no device; never throws.
  static Status create(const Options& options, std::unique_ptr<Context>* out);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Fns& fns() const { return fns_; }
  VkDevice device() const { return device_; }
  const DeviceInfo& info() const { return devices_[selected_]; }
  const VkPhysicalDeviceLimits& limits() const { return info().props.limits; }
  // Every device found, with limits and features, the selected one marked.
  std::string describe() const;
  bool validation_enabled() const { return validation_; }
  std::mutex& mutex() { return mutex_; }

  // Creates (or returns the cached) pipeline for code + specialisation constants.
  // spec[0] is the workgroup size (local_size_x_id = 0); checked against the device limits.
  Status kernel(const ShaderCode& code, const std::vector<uint32_t>& spec, const Kernel** out);
  // Writes the pipeline cache to disk if new pipelines were made (atomic: temp + rename).
  void save_pipeline_cache();

  // Turns a failed VkResult into a Status; marks the context lost on VK_ERROR_DEVICE_LOST.
  Status check(VkResult r, const char* what);
  // Unavailable once the device was lost; OK otherwise.
  Status usable() const;

  // Buffers: device-local storage, or host-visible staging (mapped).
  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    void* mapped = nullptr;
  };
  Status create_buffer(VkDeviceSize bytes, bool host, Buffer* out);
  void destroy_buffer(Buffer* b);
  // Jobs take their buffers from a bounded pool and give them back: on a real driver a fresh
  // allocation of tens of MB (zeroed device memory, pinned host pages) costs milliseconds,
  // more than the kernels. Sizes are rounded up to a class (<= 25% more) so that repeated
  // shapes reuse buffers; a reused buffer holds old data (as fresh memory may: undefined).
  Status acquire_buffer(VkDeviceSize bytes, bool host, Buffer* out);
  void release_buffer(Buffer* b);

  // GPU timing for benchmarks: when on, every Job brackets its dispatches with timestamp
  // queries and last_gpu_ms() is the time between them (0 when the queue has no timestamps).
  void set_timing(bool on) { timing_ = on && info().timestamp_bits > 0; }
  bool timing() const { return timing_; }
  double last_gpu_ms() const { return last_gpu_ms_; }
  void set_last_gpu_ms(double ms) { last_gpu_ms_ = ms; }

  // Used by Job.
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return command_pool_; }

 private:
  Context() = default;
  Status init(const Options& options);
  void load_pipeline_cache();
  int find_memory_type(uint32_t type_bits, bool host) const;

  Fns fns_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::vector<DeviceInfo> devices_;
  size_t selected_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::string cache_path_;
  bool cache_dirty_ = false;
  bool validation_ = false;
  bool lost_ = false;
  bool timing_ = false;
  double last_gpu_ms_ = 0;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
  std::mutex mutex_;
  struct Pooled {
    Buffer buffer;
    bool host;
    uint64_t tick;  // release order: the oldest goes first when over the bound
  };
  std::vector<Pooled> pool_;
  VkDeviceSize pooled_bytes_[2] = {0, 0};  // [host]
  uint64_t pool_tick_ = 0;
  std::mutex pool_mutex_;
};

// One submission. Buffers are referred to by the ids input()/output()/scratch() return.
// Everything it allocated is freed by the destructor, also after a failure.
class Job {
 public:
  explicit Job(Context& ctx) : ctx_(ctx) {}
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  // A device buffer filled from host memory before the first dispatch.
  Status input(const void* data, size_t bytes, int* id);
  // A device buffer copied to host memory after the last dispatch.
  Status output(void* data, size_t bytes, int* id);
  // A device-only buffer (partial sums).
  Status scratch(size_t bytes, int* id);

  // The one checked dispatch: binding count and push-constant size must match the kernel,
  // the push block is at most 128 bytes and the device's maxPushConstantsSize, each group
  // count is within maxComputeWorkGroupCount, each buffer within maxStorageBufferRange.
  // A zero group count records nothing.
  Status dispatch(const Kernel& kernel, std::initializer_list<int> buffers, const void* push,
                  size_t push_size, uint32_t groups_x, uint32_t groups_y = 1,
                  uint32_t groups_z = 1);
  template <class Push>
  Status dispatch(const Kernel& kernel, std::initializer_list<int> buffers, const Push& push,
                  uint32_t gx, uint32_t gy = 1, uint32_t gz = 1) {
    return dispatch(kernel, buffers, &push, sizeof(Push), gx, gy, gz);
  }

  // Records, submits, waits, copies outputs to the host.
  Status run();

 private:
  struct Slot {
    Context::Buffer device;
    Context::Buffer staging;   // inputs and outputs only
    void* host_out = nullptr;  // outputs: where the result goes
    size_t bytes = 0;
  };
  struct Dispatch {
    const Kernel* kernel;
    std::vector<int> buffers;
    std::vector<uint8_t> push;
    uint32_t groups[3];
  };
  Status add(size_t bytes, bool staging, int* id);

  Context& ctx_;
  std::vector<Slot> slots_;
  std::vector<Dispatch> dispatches_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;  // 2 timestamps when ctx.timing()
  bool in_flight_ = false;  // a submission that never finished: its resources are leaked
};

// Validation messages recorded by the debug messenger (all contexts), for the tests.
std::vector<std::string> validation_messages();
void clear_validation_messages();

}  // namespace gradrt::vk

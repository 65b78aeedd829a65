// The Vulkan context: what the backend, the ops and the benchmarks hold. It owns one of each
// noun of the host, each in its own file:
//   instance.h        the instance, the validation layer and the messages it records
//   device.h          device choice, the queue, VkResult -> Status, device loss
//   pipeline_cache.h  the pipeline cache and its file on disk
//   buffer_pool.h     device memory: buffers and the pool they are reused from
//   pipeline.h        compute pipelines per (shader, specialisation constants)
//   submission.h      command buffers, fences, descriptor pools reused across runs
//   resident.h        device-resident tensors (kept in the pool, known to kernels by a key)
//   job.h             Job: one upload - dispatches - read-back run
//   sequence.h        Sequence: several kernels recorded into one job, submitted at once
//   testing.cpp       the tests' hooks (fault injection at the fence wait)
// Thread-safe: jobs from several threads may run at once (each part locks what it shares).
// The backend still runs one kernel at a time through mutex() (one queue).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "buffer_pool.h"
#include "device.h"
#include "job.h"
#include "pipeline.h"
#include "pipeline_cache.h"
#include "resident.h"
#include "submission.h"

namespace gradrt::vk {

class Context : NoCopy {
 public:
  // Unavailable with the reason when no loader / no device; never throws.
  static Status create(const Options& options, std::unique_ptr<Context>* out);
  ~Context();

  const DeviceInfo& info() const { return device_->info(); }
  const VkPhysicalDeviceLimits& limits() const { return device_->limits(); }
  // Every device found, with limits and features, the selected one marked; layer and cache.
  std::string describe() const;
  bool validation_enabled() const { return device_->validation_enabled(); }
  std::mutex& mutex() { return mutex_; }

  // Creates (or returns the cached) pipeline for code + specialisation constants.
  // spec[0] is the workgroup size (local_size_x_id = 0); checked against the device limits.
  Status kernel(const ShaderCode& code, const std::vector<uint32_t>& spec, const Kernel** out) {
    return pipelines_->get(code, spec, out);
  }
  // Writes the pipeline cache to disk if new pipelines were made (atomic: temp + rename).
  void save_pipeline_cache() { cache_->save(); }

  // GPU timing for benchmarks: when on, every Job brackets its dispatches with timestamp
  // queries and last_gpu_ms() is the time between them (0 when the queue has no timestamps).
  void set_timing(bool on) { timing_ = on && info().timestamp_bits > 0; }
  bool timing() const { return timing_; }
  double last_gpu_ms() const { return last_gpu_ms_; }
  void set_last_gpu_ms(double ms) { last_gpu_ms_ = ms; }

  // What crossed between host and device: submissions and the bytes of staged copies each way
  // (every Job counts here; a step of resident tensors in one Sequence adds 1, 0, 0).
  struct Counters {
    uint64_t submissions = 0, bytes_to_device = 0, bytes_to_host = 0;
  };
  Counters counters() const { return {submissions_made_, bytes_to_device_, bytes_to_host_}; }
  void count(uint64_t submissions, uint64_t to_device, uint64_t to_host) {
    submissions_made_ += submissions;
    bytes_to_device_ += to_device;
    bytes_to_host_ += to_host;
  }

  // The parts, for Job and the tests.
  Residents& residents() { return *residents_; }
  Device& device() { return *device_; }
  BufferPool& buffers() { return *buffers_; }
  Submissions& submissions() { return *submissions_; }

 private:
  Context() = default;

  std::unique_ptr<Device> device_;
  std::unique_ptr<PipelineCache> cache_;
  std::unique_ptr<BufferPool> buffers_;
  std::unique_ptr<Pipelines> pipelines_;
  std::unique_ptr<Submissions> submissions_;
  std::unique_ptr<Residents> residents_;
  std::atomic<uint64_t> submissions_made_{0}, bytes_to_device_{0}, bytes_to_host_{0};
  std::atomic<bool> timing_{false};
  std::atomic<double> last_gpu_ms_{0};
  std::mutex mutex_;
};

// The context of the `vulkan` backend (vulkan_backend()), for device tensors and sequences whose
// kernels run through that backend; nullptr with the reason in *s when there is none.
Context* backend_context(Status* s);

}  // namespace gradrt::vk

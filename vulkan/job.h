// Job, the unit of work: upload inputs through staging buffers, run a list of checked
// dispatches (a barrier between consecutive ones), read outputs back, wait. Buffers come from
// the context's pool, the command buffer, fence and descriptor sets from a reused Submission;
// all go back when the job ends, also after a failure. A job belongs to one thread; several
// jobs may run at once on one context.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "buffer_pool.h"
#include "pipeline.h"
#include "submission.h"

namespace gradrt::vk {

class Context;

class Job : NoCopy {
 public:
  explicit Job(Context& ctx) : ctx_(ctx) {}
  ~Job();

  // Buffers are referred to by the ids these return.
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

  // Records, submits, waits (GRADRT_VULKAN_TIMEOUT_S, default 600 s: a hung device becomes
  // Unavailable and the backend is disabled), copies outputs to the host.
  Status run();

 private:
  struct Slot {
    Buffer device;
    Buffer staging;            // inputs and outputs only
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
  Status bind(const Submission& sub, std::vector<VkDescriptorSet>* sets);
  Status record(const Submission& sub);
  void read_timestamps(const Submission& sub);
  // The wait failed: the device may still use the submission and our buffers.
  void abandon(std::unique_ptr<Submission> sub);
  static uint64_t wait_limit_s();

  Context& ctx_;
  std::vector<Slot> slots_;
  std::vector<Dispatch> dispatches_;
};

}  // namespace gradrt::vk

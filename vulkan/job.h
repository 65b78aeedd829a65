// Job, the unit of work: upload inputs through staging buffers, run a list of checked
// dispatches (a barrier between consecutive ones), read outputs back, wait. Buffers come from
// the context's pool, the command buffer, fence and descriptor sets from a reused Submission;
// all go back when the job ends, also after a failure. A job belongs to one thread; several
// jobs may run at once on one context.
// Resident tensors (resident.h): an input or output pointer that is a resident key binds that
// tensor's buffer, with no staging and no copy. While a Sequence records on this thread
// (sequence.h), a Job forwards everything to the sequence's job and run() records only; there
// every tensor must be resident (a host pointer is InvalidArgument: no hidden copies).
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
  // forward = false: a job of its own even while a sequence records (uploads, downloads).
  explicit Job(Context& ctx, bool forward = true) : ctx_(ctx), into_(forward ? recording(ctx) : nullptr) {}
  ~Job();

  // Buffers are referred to by the ids these return.
  // A device buffer filled from host memory before the first dispatch.
  Status input(const void* data, size_t bytes, int* id);
  // A device buffer copied to host memory after the last dispatch.
  Status output(void* data, size_t bytes, int* id);
  // A device-only buffer (partial sums).
  Status scratch(size_t bytes, int* id);
  // Explicit copies between host memory and the resident tensor `key` (upload / download).
  Status upload(void* key, const void* data, size_t bytes);
  Status download(const void* key, void* data, size_t bytes);
  // Buffer `id` filled with zero bytes before the first dispatch.
  Status zero(int id);

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

  // Sequences: keep() makes run() keep its recorded command buffer, and each later run()
  // submits it again as it is (same buffers, same dispatches). recording() is the job that
  // Jobs made on this thread forward to, if any.
  void keep() { keep_ = true; }
  static Job* recording(const Context& ctx);
  static void set_recording(Context* ctx, Job* job);
  size_t dispatch_count() const { return dispatches_.size(); }

 private:
  struct Slot {
    Buffer device;
    bool owned = true;         // false: a resident tensor's buffer
    bool zero = false;         // filled with zeros first
    Buffer staging;            // copies to / from host memory only
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
  // `ptr` is a resident key: a slot bound to its buffer (no staging unless `staging`).
  Status add_resident(const void* ptr, size_t bytes, bool staging, int* id, bool* found);
  // input()'s and output()'s slot: the resident tensor `data` is, or (outside a kept sequence)
  // a new device buffer with staging for host memory (*staged: the caller copies through it).
  Status add_tensor(const void* data, size_t bytes, int* id, bool* staged);
  Status bind(const Submission& sub, std::vector<VkDescriptorSet>* sets);
  Status record(const Submission& sub);
  void read_timestamps(const Submission& sub);
  // Counts the submission and its copies (Context::counters), submits, waits, copies outputs
  // to the host; a failed wait abandons `sub` (resets it).
  Status submit_and_wait(std::unique_ptr<Submission>& sub);
  // The wait failed: the device may still use the submission and our buffers.
  void abandon(std::unique_ptr<Submission> sub);
  static uint64_t wait_limit_s();

  Context& ctx_;
  Job* into_ = nullptr;  // the recording sequence's job this one forwards to
  bool keep_ = false;
  bool timed_ = false;  // the recorded command buffer writes timestamps
  std::unique_ptr<Submission> kept_;  // keep(): recorded, submitted again by each run()
  std::vector<Slot> slots_;
  std::vector<Dispatch> dispatches_;
};

}  // namespace gradrt::vk

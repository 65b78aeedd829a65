// What a run records into and waits on, reused from run to run: a command pool with its one
// command buffer (a pool per submission, because recording needs the pool to itself: threads
// record in parallel), a fence, a descriptor pool (grown to the largest job seen), and a
// timestamp query pool once timing is on. A run takes an idle submission, or a new one when
// every one is in use (one per thread running at the same time), and gives it back. Thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "buffer_pool.h"
#include "device.h"

namespace gradrt::vk {

struct Submission {
  VkCommandPool command_pool = VK_NULL_HANDLE;
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkDescriptorPool descriptors = VK_NULL_HANDLE;
  uint32_t max_sets = 0, max_descriptors = 0;  // what `descriptors` was made for
  VkQueryPool queries = VK_NULL_HANDLE;        // 2 timestamps
  std::vector<Buffer> held;                    // abandoned: the job's buffers, freed with it
};

class Submissions : NoCopy {
 public:
  Submissions(Device& device, BufferPool& buffers) : device_(device), buffers_(buffers) {}
  // Destroys the idle submissions and the abandoned ones settle() found done; leaks the others.
  ~Submissions();

  // A submission for one run, reset: command buffer ready to begin, fence unsignalled, room for
  // `sets` descriptor sets of `descriptors` storage buffers in all, a query pool when `timing`.
  Status acquire(uint32_t sets, uint32_t descriptors, bool timing, std::unique_ptr<Submission>* out);
  // Back to the idle list: its fence signalled, or it was never submitted.
  void release(std::unique_ptr<Submission> s);
  // Waits for the fence (at most timeout_ns; on a real GPU it polls the fence for the first 2 ms,
  // GRADRT_VULKAN_WAIT=spin|block forces either way). VK_TIMEOUT or an error: call abandon().
  VkResult wait(Submission* s, uint64_t timeout_ns);
  // Its wait failed: the device may still use it and `buffers`; kept apart until settle().
  void abandon(std::unique_ptr<Submission> s, std::vector<Buffer> buffers);
  // Waits at most timeout_ns for each abandoned submission; frees those found done. True when
  // none is left (everything the device might still use is known finished).
  bool settle(uint64_t timeout_ns);

  // How many submissions were made so far (for the tests).
  int made() const { return made_; }

 private:
  Status make(Submission* s);
  Status fit_descriptors(Submission* s, uint32_t sets, uint32_t descriptors);
  void destroy(Submission* s);

  Device& device_;
  BufferPool& buffers_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Submission>> idle_, abandoned_;
  std::atomic<int> made_{0};
};

}  // namespace gradrt::vk

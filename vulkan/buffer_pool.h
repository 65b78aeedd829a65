// Device memory: buffers (device-local storage, or host-visible mapped staging) and the bounded
// pool jobs take them from. On a real driver a fresh allocation of tens of MB (zeroed device
// memory, pinned host pages) costs milliseconds, more than the kernels. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "device.h"

namespace gradrt::vk {

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // host staging buffers only
};

class BufferPool : NoCopy {
 public:
  explicit BufferPool(Device& device) : device_(device) {}
  ~BufferPool();  // destroys the pooled buffers (the device must be idle)

  // A new buffer of exactly `bytes` (at least 16: Vulkan has no empty buffers).
  Status create(VkDeviceSize bytes, bool host, Buffer* out);
  void destroy(Buffer* b);
  // Sizes are rounded up to a class (<= 25% more) so that repeated shapes reuse buffers; a
  // reused buffer holds old data (as fresh memory may: undefined).
  Status acquire(VkDeviceSize bytes, bool host, Buffer* out);
  // Back to the pool (or destroyed when over the bound or the device is lost); *b is cleared.
  void release(Buffer* b);

 private:
  int find_memory_type(uint32_t type_bits, bool host) const;

  struct Pooled {
    Buffer buffer;
    bool host;
    uint64_t tick;  // release order: the oldest goes first when over the bound
  };
  Device& device_;
  std::mutex mutex_;
  std::vector<Pooled> pool_;
  VkDeviceSize pooled_bytes_[2] = {0, 0};  // [host]
  uint64_t tick_ = 0;
};

}  // namespace gradrt::vk

// Device-resident tensors: buffers from the pool that outlive jobs, written and read only by
// explicit uploads and downloads. Kernels keep taking pointers (core/backend.h); a resident
// tensor is known to them by its key, the address of its Resident record, which Job looks up
// (find) before it stages anything: a key binds the tensor's buffer, any other pointer is host
// memory. A key is never dereferenced as data. Thread-safe.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_set>

#include "buffer_pool.h"

namespace gradrt::vk {

struct alignas(64) Resident {  // 64-aligned: core takes a key as output memory (op_context.cpp)
  Buffer buffer;
  size_t bytes = 0;
};

class Residents : NoCopy {
 public:
  explicit Residents(BufferPool& pool) : pool_(pool) {}
  ~Residents();  // gives back the buffers of tensors never destroyed (the device is idle)

  // A tensor of `bytes` (contents undefined until written); *key identifies it to kernels.
  Status create(size_t bytes, void** key);
  // Back to the pool. The caller makes sure no queued work still uses it (Sequence/Job waits).
  void destroy(void* key);
  // The tensor behind `key`, or nullptr when key is not one of ours (host memory).
  const Resident* find(const void* key) const;

 private:
  BufferPool& pool_;
  mutable std::mutex mutex_;
  std::unordered_set<const void*> live_;
};

}  // namespace gradrt::vk

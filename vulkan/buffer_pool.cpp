#include "buffer_pool.h"

#include <algorithm>
#include <string>

namespace gradrt::vk {
namespace {

// Pool size classes: 4 KiB steps up to 64 KiB, then four steps per power of two
// (1.25, 1.5, 1.75, 2 x 2^k), so a class is at most 25% above the request.
VkDeviceSize buffer_class(VkDeviceSize n) {
  n = std::max<VkDeviceSize>(n, 16);
  if (n <= (VkDeviceSize(64) << 10)) return (n + 4095) & ~VkDeviceSize(4095);
  if (n > (VkDeviceSize(1) << 62)) return n;  // rounding up would wrap past 2^64 to a small size
  int k = 63;
  while (!((n - 1) >> k & 1)) --k;  // 2^k < n <= 2^(k+1)
  const VkDeviceSize step = VkDeviceSize(1) << (k - 2);
  return (n + step - 1) / step * step;
}

}  // namespace

BufferPool::~BufferPool() {
  for (Pooled& p : pool_) destroy(&p.buffer);
}

int BufferPool::find_memory_type(uint32_t bits, bool host) const {
  // host: HOST_VISIBLE|HOST_COHERENT, preferably HOST_CACHED (fast read-back).
  // device: DEVICE_LOCAL if any, else whatever the buffer allows.
  const VkPhysicalDeviceMemoryProperties& memory = device_.memory();
  const VkMemoryPropertyFlags coherent = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = memory.memoryTypes[i].propertyFlags;
    int score;
    if (host) {
      if ((f & coherent) != coherent) continue;
      score = (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 2 : 1;
    } else {
      score = (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 2 : 1;
    }
    if (score > best_score) best_score = score, best = static_cast<int>(i);
  }
  return best;
}

Status BufferPool::create(VkDeviceSize bytes, bool host, Buffer* out) {
  *out = Buffer{};
  const Fns& f = device_.fns();
  VkDevice dev = device_.handle();
  const uint64_t max_allocation = device_.info().max_allocation;
  VkDeviceSize size = std::max<VkDeviceSize>(bytes, 16);
  if (max_allocation && size > max_allocation)
    return Status(Code::ResourceExhausted, "vulkan: a buffer of " + std::to_string(size) +
                                               " bytes exceeds maxMemoryAllocationSize " +
                                               std::to_string(max_allocation));
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = size;
  bci.usage = host ? (VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT)
                   : (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  Status s = device_.check(f.vkCreateBuffer(dev, &bci, nullptr, &out->buffer), "vkCreateBuffer");
  if (!s.ok()) return s;
  VkMemoryRequirements req{};
  f.vkGetBufferMemoryRequirements(dev, out->buffer, &req);
  int type = find_memory_type(req.memoryTypeBits, host);
  if (type < 0) {
    destroy(out);
    return Status(Code::Internal, "vulkan: no suitable memory type for a buffer");
  }
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  s = device_.check(f.vkAllocateMemory(dev, &mai, nullptr, &out->memory), "vkAllocateMemory");
  if (s.ok()) s = device_.check(f.vkBindBufferMemory(dev, out->buffer, out->memory, 0), "vkBindBufferMemory");
  if (s.ok() && host) s = device_.check(f.vkMapMemory(dev, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped), "vkMapMemory");
  if (!s.ok()) {
    destroy(out);
    return s;
  }
  out->size = bytes;
  return Status::OK();
}

void BufferPool::destroy(Buffer* b) {
  const Fns& f = device_.fns();
  if (b->mapped) f.vkUnmapMemory(device_.handle(), b->memory);
  if (b->buffer) f.vkDestroyBuffer(device_.handle(), b->buffer, nullptr);
  if (b->memory) f.vkFreeMemory(device_.handle(), b->memory, nullptr);
  *b = Buffer{};
}

Status BufferPool::acquire(VkDeviceSize bytes, bool host, Buffer* out) {
  VkDeviceSize cls = buffer_class(bytes);
  const uint64_t max_allocation = device_.info().max_allocation;
  if (max_allocation && cls > max_allocation) cls = bytes;  // exact, or the limit's error
  {
    std::lock_guard<std::mutex> lock(mutex_);
    int best = -1;  // the most recently released of the class
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].host == host && pool_[i].buffer.size == cls && (best < 0 || pool_[i].tick > pool_[best].tick))
        best = static_cast<int>(i);
    if (best >= 0) {
      *out = pool_[best].buffer;
      pooled_bytes_[host] -= cls;
      pool_.erase(pool_.begin() + best);
      return Status::OK();
    }
  }
  return create(cls, host, out);
}

void BufferPool::release(Buffer* b) {
  if (!b->buffer) return;
  // Bounds: device 1/8 of the device-local heap, at most 512 MiB; host staging 256 MiB.
  const uint64_t heap_bytes = device_.info().device_local_bytes;
  const VkDeviceSize heap = heap_bytes ? heap_bytes : (VkDeviceSize(1) << 32);
  const bool host = b->mapped != nullptr;
  const VkDeviceSize cap = host ? (VkDeviceSize(256) << 20) : std::min(VkDeviceSize(512) << 20, heap / 8);
  std::lock_guard<std::mutex> lock(mutex_);
  if (device_.lost() || b->size > cap) {
    destroy(b);
    return;
  }
  pool_.push_back({*b, host, ++tick_});
  pooled_bytes_[host] += b->size;
  *b = Buffer{};
  while (pooled_bytes_[host] > cap) {
    size_t oldest = pool_.size();
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].host == host && (oldest == pool_.size() || pool_[i].tick < pool_[oldest].tick)) oldest = i;
    pooled_bytes_[host] -= pool_[oldest].buffer.size;
    destroy(&pool_[oldest].buffer);
    pool_.erase(pool_.begin() + oldest);
  }
}

}  // namespace gradrt::vk

#include "submission.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include "testing.h"

namespace gradrt::vk {

Submissions::~Submissions() {
  for (auto& s : idle_) destroy(s.get());
  for (auto& s : abandoned_) s.release();  // never known done: leaked, not freed under the device
}

void Submissions::destroy(Submission* s) {
  const Fns& f = device_.fns();
  VkDevice dev = device_.handle();
  for (Buffer& b : s->held) buffers_.destroy(&b);
  if (s->queries) f.vkDestroyQueryPool(dev, s->queries, nullptr);
  if (s->descriptors) f.vkDestroyDescriptorPool(dev, s->descriptors, nullptr);
  if (s->fence) f.vkDestroyFence(dev, s->fence, nullptr);
  if (s->command_pool) f.vkDestroyCommandPool(dev, s->command_pool, nullptr);  // frees cmd
  *s = Submission{};
}

Status Submissions::make(Submission* s) {
  const Fns& f = device_.fns();
  VkDevice dev = device_.handle();
  VkCommandPoolCreateInfo cpi{};
  cpi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  cpi.queueFamilyIndex = device_.queue_family();
  Status st = device_.check(f.vkCreateCommandPool(dev, &cpi, nullptr, &s->command_pool), "vkCreateCommandPool");
  if (!st.ok()) return st;
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = s->command_pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  st = device_.check(f.vkAllocateCommandBuffers(dev, &cai, &s->cmd), "vkAllocateCommandBuffers");
  if (!st.ok()) return st;
  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  return device_.check(f.vkCreateFence(dev, &fci, nullptr, &s->fence), "vkCreateFence");
}

// Descriptor sets are never freed one by one: the pool is reset as a whole before each run.
Status Submissions::fit_descriptors(Submission* s, uint32_t sets, uint32_t descriptors) {
  const Fns& f = device_.fns();
  VkDevice dev = device_.handle();
  if (s->descriptors && sets <= s->max_sets && descriptors <= s->max_descriptors)
    return device_.check(f.vkResetDescriptorPool(dev, s->descriptors, 0), "vkResetDescriptorPool");
  if (s->descriptors) f.vkDestroyDescriptorPool(dev, s->descriptors, nullptr);
  s->descriptors = VK_NULL_HANDLE;
  s->max_sets = std::max({sets, 2 * s->max_sets, 4u});
  s->max_descriptors = std::max({descriptors, 2 * s->max_descriptors, 16u});
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, s->max_descriptors};
  VkDescriptorPoolCreateInfo dpi{};
  dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpi.maxSets = s->max_sets;
  dpi.poolSizeCount = 1;
  dpi.pPoolSizes = &ps;
  Status st = device_.check(f.vkCreateDescriptorPool(dev, &dpi, nullptr, &s->descriptors), "vkCreateDescriptorPool");
  if (!st.ok()) s->max_sets = s->max_descriptors = 0;
  return st;
}

Status Submissions::acquire(uint32_t sets, uint32_t descriptors, bool timing, std::unique_ptr<Submission>* out) {
  std::unique_ptr<Submission> s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!idle_.empty()) {
      s = std::move(idle_.back());
      idle_.pop_back();
    }
  }
  const Fns& f = device_.fns();
  VkDevice dev = device_.handle();
  Status st;
  if (!s) {
    s = std::make_unique<Submission>();
    st = make(s.get());
    ++made_;
  } else {
    // Safe: the last run on it finished (its fence signalled) or never started.
    st = device_.check(f.vkResetCommandPool(dev, s->command_pool, 0), "vkResetCommandPool");
    if (st.ok()) st = device_.check(f.vkResetFences(dev, 1, &s->fence), "vkResetFences");
  }
  if (st.ok() && sets) st = fit_descriptors(s.get(), sets, descriptors);
  if (st.ok() && timing && !s->queries) {
    VkQueryPoolCreateInfo qpi{};
    qpi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = 2;
    st = device_.check(f.vkCreateQueryPool(dev, &qpi, nullptr, &s->queries), "vkCreateQueryPool");
  }
  if (!st.ok()) {
    destroy(s.get());
    return st;
  }
  *out = std::move(s);
  return Status::OK();
}

void Submissions::release(std::unique_ptr<Submission> s) {
  if (!s) return;
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.push_back(std::move(s));
}

// How wait() waits (GRADRT_VULKAN_WAIT, read once per process): on a real GPU it first polls the
// fence for up to kSpinNs, then blocks; on a CPU device (lavapipe) it blocks at once (polling there
// takes a core from the driver's own threads). `spin` / `block` force either. A blocking wait can
// sleep past the fence's signal: on the H100 (bench/results_gpu_h100.txt, session 11) polling
// took a step's wall / GPU time from 1.11-1.20 to 1.02-1.06 with the same GPU time.
static bool spin_wait(const DeviceInfo& info) {
  static const int forced = [] {
    const char* e = std::getenv("GRADRT_VULKAN_WAIT");
    const std::string v = e ? e : "";
    return v == "spin" ? 1 : v == "block" ? 0 : -1;
  }();
  return forced >= 0 ? forced == 1 : info.is_real_gpu();
}

VkResult Submissions::wait(Submission* s, uint64_t timeout_ns) {
  constexpr uint64_t kSpinNs = 2000000;  // 2 ms: a step's length; longer work blocks
  VkResult r = VK_NOT_READY;
  if (spin_wait(device_.info())) {
    const auto start = std::chrono::steady_clock::now();
    const uint64_t spin_ns = std::min(timeout_ns, kSpinNs);
    // VK_NOT_READY: not yet; VK_SUCCESS: signalled; an error (device lost) ends the wait.
    while ((r = device_.fns().vkGetFenceStatus(device_.handle(), s->fence)) == VK_NOT_READY &&
           uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
                        .count()) < spin_ns) {
    }
  }
  if (r == VK_NOT_READY) r = device_.fns().vkWaitForFences(device_.handle(), 1, &s->fence, VK_TRUE, timeout_ns);
  const VkResult fault = testing::wait_fault(this);  // the tests' device loss and timeout
  return r == VK_SUCCESS && fault != VK_SUCCESS ? fault : r;
}

void Submissions::abandon(std::unique_ptr<Submission> s, std::vector<Buffer> buffers) {
  s->held.insert(s->held.end(), buffers.begin(), buffers.end());
  std::lock_guard<std::mutex> lock(mutex_);
  abandoned_.push_back(std::move(s));
}

bool Submissions::settle(uint64_t timeout_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Fns& f = device_.fns();
  auto done = [&](std::unique_ptr<Submission>& s) {
    // After a device loss a wait returns VK_ERROR_DEVICE_LOST (or success) in finite time, and
    // the objects may then be destroyed; VK_TIMEOUT means the device may still be running.
    if (f.vkWaitForFences(device_.handle(), 1, &s->fence, VK_TRUE, timeout_ns) == VK_TIMEOUT) return false;
    destroy(s.get());
    return true;
  };
  abandoned_.erase(std::remove_if(abandoned_.begin(), abandoned_.end(), done), abandoned_.end());
  return abandoned_.empty();
}

}  // namespace gradrt::vk

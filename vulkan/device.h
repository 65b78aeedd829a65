// The device: the physical devices found (with their limits and features), the one chosen, the
// logical device with one compute queue, and the rule that turns a driver error into a Status:
//   out of host/device memory, too-large shapes   -> ResourceExhausted
//   no loader, no device, device lost            -> Unavailable
//   anything else the driver says                -> Internal
// A lost device stays lost: usable() says so from then on. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "instance.h"
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

// Base of the host classes that own Vulkan handles: never copied (and so never moved).
struct NoCopy {
  NoCopy() = default;
  NoCopy(const NoCopy&) = delete;
  NoCopy& operator=(const NoCopy&) = delete;
};

class Device : NoCopy {
 public:
  // Unavailable with the reason when no loader / no device; never throws.
  static Status create(const Options& options, std::unique_ptr<Device>* out);
  ~Device();

  const Fns& fns() const { return fns_; }
  VkDevice handle() const { return device_; }
  const DeviceInfo& info() const { return devices_[selected_]; }
  const VkPhysicalDeviceLimits& limits() const { return info().props.limits; }
  const VkPhysicalDeviceMemoryProperties& memory() const { return memory_; }
  uint32_t queue_family() const { return static_cast<uint32_t>(info().compute_queue_family); }
  bool validation_enabled() const { return instance_.validation; }
  // Every device found, with limits and features, the selected one marked.
  std::string describe() const;

  // Turns a failed VkResult into a Status; marks the device lost on VK_ERROR_DEVICE_LOST.
  Status check(VkResult r, const char* what);
  // Unavailable once the device was lost; OK otherwise.
  Status usable() const;
  bool lost() const { return lost_; }

  // vkQueueSubmit of one command buffer on the one queue (which must be externally
  // synchronised: submissions from several threads take turns here).
  Status submit(VkCommandBuffer cmd, VkFence fence);
  // vkDeviceWaitIdle, unless the device is lost.
  void wait_idle();
  // The destructor then leaves the device and instance alive: work may still be running on them.
  void leak() { leak_ = true; }

 private:
  Device() = default;
  Status init(const Options& options);
  Status choose(const std::string& want);

  Fns fns_;
  Instance instance_;
  std::vector<DeviceInfo> devices_;
  size_t selected_ = 0;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  std::mutex queue_mutex_;
  std::atomic<bool> lost_{false};
  bool leak_ = false;
};

// The environment variable's value, "" when unset.
std::string env(const char* name);

}  // namespace gradrt::vk

#include "device.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace gradrt::vk {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

// discrete > integrated > virtual > CPU > other
int type_score(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

// Properties, features, memory and the compute queue family of one physical device.
DeviceInfo query(const Fns& fns, uint32_t api, VkPhysicalDevice h) {
  DeviceInfo d;
  d.handle = h;
  fns.vkGetPhysicalDeviceProperties(h, &d.props);
  fns.vkGetPhysicalDeviceFeatures(h, &d.features);
  if (api >= VK_API_VERSION_1_1 && d.props.apiVersion >= VK_API_VERSION_1_1 && fns.vkGetPhysicalDeviceProperties2 &&
      fns.vkGetPhysicalDeviceFeatures2) {
    VkPhysicalDeviceMaintenance3Properties m3{};
    m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
    VkPhysicalDeviceSubgroupProperties sub{};
    sub.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    sub.pNext = &m3;
    VkPhysicalDeviceIDProperties id{};
    id.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES;
    id.pNext = &sub;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &id;
    fns.vkGetPhysicalDeviceProperties2(h, &p2);
    std::memcpy(d.device_uuid, id.deviceUUID, VK_UUID_SIZE);
    d.subgroup_size = sub.subgroupSize;
    d.max_allocation = m3.maxMemoryAllocationSize;
    VkPhysicalDevice16BitStorageFeatures f16{};
    f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    f2.pNext = &f16;
    fns.vkGetPhysicalDeviceFeatures2(h, &f2);
    d.storage_16bit = f16.storageBuffer16BitAccess == VK_TRUE;
  }
  VkPhysicalDeviceMemoryProperties mem{};
  fns.vkGetPhysicalDeviceMemoryProperties(h, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      d.device_local_bytes = std::max<uint64_t>(d.device_local_bytes, mem.memoryHeaps[i].size);
  uint32_t count = 0;
  fns.vkGetPhysicalDeviceQueueFamilyProperties(h, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  fns.vkGetPhysicalDeviceQueueFamilyProperties(h, &count, families.data());
  // Prefer a compute queue family without graphics (async compute), else any with compute.
  for (uint32_t i = 0; i < count; ++i) {
    if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
    bool graphics = families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
    if (d.compute_queue_family < 0 || !graphics) d.compute_queue_family = static_cast<int>(i);
    if (!graphics) break;
  }
  if (d.compute_queue_family >= 0) d.timestamp_bits = families[d.compute_queue_family].timestampValidBits;
  return d;
}

}  // namespace

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

Status Device::create(const Options& options, std::unique_ptr<Device>* out) {
  std::unique_ptr<Device> device(new Device());
  Status s = device->init(options);
  if (!s.ok()) return s;  // the destructor releases whatever init made
  *out = std::move(device);
  return Status::OK();
}

Status Device::init(const Options& options) {
  std::string reason;
  std::string library = options.library;
  if (library.empty()) library = env("GRADRT_VULKAN_LIBRARY");
  if (library.empty()) library = "libvulkan.so.1";
  if (!load_library(library, &fns_, &reason)) return Status(Code::Unavailable, "vulkan: " + reason);
  int validation = options.validation;
  if (validation < 0) validation = env("GRADRT_VULKAN_VALIDATION") == "1" ? 1 : 0;
  Status s = create_instance(&fns_, validation, &instance_);
  if (!s.ok()) return s;

  uint32_t count = 0;
  VkResult r = fns_.vkEnumeratePhysicalDevices(instance_.handle, &count, nullptr);
  if (r != VK_SUCCESS || count == 0)
    return Status(Code::Unavailable, "vulkan: no Vulkan device found (vkEnumeratePhysicalDevices: " +
                                         std::string(result_name(r)) + ", " + std::to_string(count) + " devices)");
  std::vector<VkPhysicalDevice> handles(count);
  // The second call may report fewer (a device went away in between): only those are written.
  r = fns_.vkEnumeratePhysicalDevices(instance_.handle, &count, handles.data());
  if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || count == 0)
    return Status(Code::Unavailable, "vulkan: no Vulkan device found (vkEnumeratePhysicalDevices: " +
                                         std::string(result_name(r)) + ")");
  handles.resize(count);
  for (VkPhysicalDevice h : handles) devices_.push_back(query(fns_, instance_.api, h));
  s = choose(options.device.empty() ? env("GRADRT_VULKAN_DEVICE") : options.device);
  if (!s.ok()) return s;
  const DeviceInfo& d = info();

  // Logical device, one queue. The optional features, each when the device has it:
  // shaderFloat64 (the float64 shader variants), storageBuffer16BitAccess (the `_f16` ones: a
  // Vulkan 1.1 feature, chained as VkPhysicalDevice16BitStorageFeatures; query() reports it
  // only on 1.1 instances and devices).
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = queue_family();
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkPhysicalDeviceFeatures enabled{};
  enabled.shaderFloat64 = d.features.shaderFloat64;
  dci.pEnabledFeatures = &enabled;
  VkPhysicalDevice16BitStorageFeatures f16{};
  f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  f16.storageBuffer16BitAccess = VK_TRUE;
  if (d.storage_16bit) dci.pNext = &f16;
  s = check(fns_.vkCreateDevice(d.handle, &dci, nullptr, &device_), "vkCreateDevice");
  if (!s.ok()) return s;
  if (!load_device(device_, &fns_, &reason)) return Status(Code::Unavailable, "vulkan: " + reason);
  fns_.vkGetDeviceQueue(device_, qci.queueFamilyIndex, 0, &queue_);
  fns_.vkGetPhysicalDeviceMemoryProperties(d.handle, &memory_);
  return Status::OK();
}

// `want` (GRADRT_VULKAN_DEVICE): an index or a name substring; "" -> the best type.
Status Device::choose(const std::string& want) {
  int chosen = -1;
  if (!want.empty()) {
    bool digits = std::all_of(want.begin(), want.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (digits) {
      size_t idx = std::strtoul(want.c_str(), nullptr, 10);
      if (idx < devices_.size()) chosen = static_cast<int>(idx);
    } else {
      for (size_t i = 0; i < devices_.size() && chosen < 0; ++i)
        if (lower(devices_[i].props.deviceName).find(lower(want)) != std::string::npos) chosen = static_cast<int>(i);
    }
    if (chosen < 0)
      return Status(Code::Unavailable, "vulkan: GRADRT_VULKAN_DEVICE=" + want + " matches none of the " +
                                           std::to_string(devices_.size()) + " devices");
    if (devices_[chosen].compute_queue_family < 0)
      return Status(Code::Unavailable, std::string("vulkan: device ") + devices_[chosen].props.deviceName +
                                           " has no compute queue");
  } else {
    int best = -1;
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].compute_queue_family < 0) continue;
      int score = type_score(devices_[i].props.deviceType);
      if (score > best) best = score, chosen = static_cast<int>(i);
    }
    if (chosen < 0) return Status(Code::Unavailable, "vulkan: no device has a compute queue");
  }
  selected_ = static_cast<size_t>(chosen);
  return Status::OK();
}

Device::~Device() {
  if (leak_) return;
  // A driver whose entry points failed to load leaves them null (load_device/load_instance
  // report it as a status): nothing to call then.
  if (device_ && fns_.vkDestroyDevice) fns_.vkDestroyDevice(device_, nullptr);
  destroy_instance(fns_, &instance_);
  // The loader library stays open: drivers may have registered atexit handlers.
}

Status Device::check(VkResult r, const char* what) {
  if (r == VK_ERROR_DEVICE_LOST) lost_ = true;
  return result_status(r, what);
}

Status Device::usable() const {
  if (lost_) return Status(Code::Unavailable, "vulkan: the device was lost earlier in this process");
  return Status::OK();
}

Status Device::submit(VkCommandBuffer cmd, VkFence fence) {
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd;
  std::lock_guard<std::mutex> lock(queue_mutex_);
  return check(fns_.vkQueueSubmit(queue_, 1, &si, fence), "vkQueueSubmit");
}

void Device::wait_idle() {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  if (!lost_) check(fns_.vkDeviceWaitIdle(device_), "vkDeviceWaitIdle");
}

std::string Device::describe() const {
  std::ostringstream o;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const DeviceInfo& d = devices_[i];
    const VkPhysicalDeviceLimits& l = d.props.limits;
    char ids[64];
    std::snprintf(ids, sizeof(ids), "vendor 0x%04x, device 0x%04x", d.props.vendorID, d.props.deviceID);
    o << "  [" << i << "] " << d.props.deviceName << " (" << type_name(d.props.deviceType) << ", " << ids
      << ", Vulkan " << version_string(d.props.apiVersion) << ")" << (i == selected_ ? "  <- selected" : "")
      << "\n";
    o << "      maxComputeWorkGroupCount [" << l.maxComputeWorkGroupCount[0] << ", "
      << l.maxComputeWorkGroupCount[1] << ", " << l.maxComputeWorkGroupCount[2] << "], maxComputeWorkGroupSize ["
      << l.maxComputeWorkGroupSize[0] << ", " << l.maxComputeWorkGroupSize[1] << ", "
      << l.maxComputeWorkGroupSize[2] << "], maxComputeWorkGroupInvocations " << l.maxComputeWorkGroupInvocations
      << "\n      maxComputeSharedMemorySize " << l.maxComputeSharedMemorySize << ", maxStorageBufferRange "
      << l.maxStorageBufferRange << ", maxPushConstantsSize " << l.maxPushConstantsSize
      << ", maxMemoryAllocationSize " << d.max_allocation << ", device-local memory "
      << (d.device_local_bytes >> 20) << " MiB\n";
    o << "      subgroupSize " << d.subgroup_size << ", shaderFloat64 " << (d.features.shaderFloat64 ? "yes" : "no")
      << ", shaderInt64 " << (d.features.shaderInt64 ? "yes" : "no") << ", storageBuffer16BitAccess "
      << (d.storage_16bit ? "yes" : "no") << ", compute queue family " << d.compute_queue_family << "\n";
  }
  o << "  validation layer: " << (instance_.validation ? "on" : "off");
  return o.str();
}

}  // namespace gradrt::vk

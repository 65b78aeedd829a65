#include "context.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace gradrt::vk {
namespace {

// ---------------------------------------------------------------- validation messages
std::mutex g_messages_mutex;
std::vector<std::string> g_messages;

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT types,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data,
                                              void*) {
  // Only what the validation layer says about our API use (and any error at all): loader
  // chatter about other ICDs that failed to load is GENERAL/WARNING and not ours.
  bool ours = (types & (VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                        VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT)) != 0 ||
              severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  if (ours && severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    std::lock_guard<std::mutex> lock(g_messages_mutex);
    g_messages.emplace_back(data && data->pMessage ? data->pMessage : "(no message)");
  }
  return VK_FALSE;  // never abort the call
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

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

// ---------------------------------------------------------------- pipeline cache file
// Our header in front of the driver's blob. A file whose header does not match this device
// and driver, or whose checksum fails, is ignored (drivers are not robust to corrupt blobs).
struct CacheHeader {
  char magic[8];
  uint32_t header_version;
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t driver_version;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE];
  uint8_t device_uuid[VK_UUID_SIZE];
  uint64_t data_size;
  uint64_t checksum;  // FNV-1a 64 of the data
};
constexpr char kCacheMagic[8] = {'G', 'R', 'D', 'V', 'K', 'P', 'C', '1'};

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

CacheHeader make_header(const DeviceInfo& d, uint64_t size, uint64_t checksum) {
  CacheHeader h{};
  std::memcpy(h.magic, kCacheMagic, sizeof(kCacheMagic));
  h.header_version = 1;
  h.vendor_id = d.props.vendorID;
  h.device_id = d.props.deviceID;
  h.driver_version = d.props.driverVersion;
  std::memcpy(h.pipeline_cache_uuid, d.props.pipelineCacheUUID, VK_UUID_SIZE);
  std::memcpy(h.device_uuid, d.device_uuid, VK_UUID_SIZE);
  h.data_size = size;
  h.checksum = checksum;
  return h;
}

}  // namespace

std::vector<std::string> validation_messages() {
  std::lock_guard<std::mutex> lock(g_messages_mutex);
  return g_messages;
}
void clear_validation_messages() {
  std::lock_guard<std::mutex> lock(g_messages_mutex);
  g_messages.clear();
}

// ---------------------------------------------------------------- Context
Status Context::create(const Options& options, std::unique_ptr<Context>* out) {
  std::unique_ptr<Context> ctx(new Context());
  Status s = ctx->init(options);
  if (!s.ok()) return s;  // the destructor releases whatever init made
  *out = std::move(ctx);
  return Status::OK();
}

Status Context::check(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return Status::OK();
  std::string msg = std::string("vulkan: ") + what + " failed: " + result_name(r);
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_TOO_MANY_OBJECTS:
      return Status(Code::ResourceExhausted, msg);
    case VK_ERROR_DEVICE_LOST:
      lost_ = true;
      return Status(Code::Unavailable, msg + " (the device is lost; restart the process)");
    case VK_ERROR_INITIALIZATION_FAILED:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
      return Status(Code::Unavailable, msg);
    default:
      return Status(Code::Internal, msg);
  }
}

Status Context::usable() const {
  if (lost_) return Status(Code::Unavailable, "vulkan: the device was lost earlier in this process");
  return Status::OK();
}

Status Context::init(const Options& options) {
  std::string reason;
  std::string library = options.library;
  if (library.empty()) library = env("GRADRT_VULKAN_LIBRARY");
  if (library.empty()) library = "libvulkan.so.1";
  if (!load_library(library, &fns_, &reason)) return Status(Code::Unavailable, "vulkan: " + reason);

  uint32_t loader_version = VK_API_VERSION_1_0;
  if (fns_.vkEnumerateInstanceVersion) fns_.vkEnumerateInstanceVersion(&loader_version);
  const uint32_t api = loader_version >= VK_API_VERSION_1_1 ? VK_API_VERSION_1_1 : VK_API_VERSION_1_0;

  // Layers and extensions.
  int want_validation = options.validation;
  if (want_validation < 0) want_validation = env("GRADRT_VULKAN_VALIDATION") == "1" ? 1 : 0;
  uint32_t count = 0;
  fns_.vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  if (count) fns_.vkEnumerateInstanceLayerProperties(&count, layers.data());
  bool have_validation = false;
  for (auto& l : layers)
    if (std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0) have_validation = true;
  count = 0;
  fns_.vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> exts(count);
  if (count) fns_.vkEnumerateInstanceExtensionProperties(nullptr, &count, exts.data());
  bool have_debug_utils = false;
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) == 0) have_debug_utils = true;
  validation_ = want_validation == 1 && have_validation;

  std::vector<const char*> enabled_layers, enabled_exts;
  if (validation_) enabled_layers.push_back("VK_LAYER_KHRONOS_validation");
  // The validation layer provides debug utils itself even when the loader list lacks it.
  const bool debug_utils = validation_;
  if (debug_utils) enabled_exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  (void)have_debug_utils;

  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = debug_callback;

  // With validation, also the layer's synchronization validation (it checks our barriers);
  // enabled through VK_EXT_validation_features when the layer offers it.
  bool have_validation_features = false;
  if (validation_) {
    uint32_t n = 0;
    fns_.vkEnumerateInstanceExtensionProperties("VK_LAYER_KHRONOS_validation", &n, nullptr);
    std::vector<VkExtensionProperties> layer_exts(n);
    if (n) fns_.vkEnumerateInstanceExtensionProperties("VK_LAYER_KHRONOS_validation", &n, layer_exts.data());
    for (auto& e : layer_exts)
      if (std::strcmp(e.extensionName, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME) == 0) have_validation_features = true;
    if (have_validation_features) enabled_exts.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  const VkValidationFeatureEnableEXT sync_validation = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT validation_features{};
  validation_features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  validation_features.enabledValidationFeatureCount = 1;
  validation_features.pEnabledValidationFeatures = &sync_validation;
  validation_features.pNext = debug_utils ? &messenger_info : nullptr;

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "gradrt";
  app.pEngineName = "gradrt";
  app.apiVersion = api;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  // The messenger in the chain also covers vkCreateInstance/vkDestroyInstance themselves.
  ici.pNext = have_validation_features ? static_cast<const void*>(&validation_features)
                                       : debug_utils ? static_cast<const void*>(&messenger_info) : nullptr;
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(enabled_layers.size());
  ici.ppEnabledLayerNames = enabled_layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(enabled_exts.size());
  ici.ppEnabledExtensionNames = enabled_exts.data();
  Status s = check(fns_.vkCreateInstance(&ici, nullptr, &instance_), "vkCreateInstance");
  if (!s.ok()) return Status(Code::Unavailable, s.message());
  if (!load_instance(instance_, &fns_, &reason)) return Status(Code::Unavailable, "vulkan: " + reason);
  if (debug_utils && fns_.vkCreateDebugUtilsMessengerEXT) {
    s = check(fns_.vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr, &messenger_),
              "vkCreateDebugUtilsMessengerEXT");
    if (!s.ok()) return s;
  }

  // Physical devices.
  count = 0;
  VkResult r = fns_.vkEnumeratePhysicalDevices(instance_, &count, nullptr);
  if (r != VK_SUCCESS || count == 0)
    return Status(Code::Unavailable, "vulkan: no Vulkan device found (vkEnumeratePhysicalDevices: " +
                                         std::string(result_name(r)) + ", " + std::to_string(count) + " devices)");
  std::vector<VkPhysicalDevice> handles(count);
  fns_.vkEnumeratePhysicalDevices(instance_, &count, handles.data());
  for (VkPhysicalDevice h : handles) {
    DeviceInfo d;
    d.handle = h;
    fns_.vkGetPhysicalDeviceProperties(h, &d.props);
    fns_.vkGetPhysicalDeviceFeatures(h, &d.features);
    if (api >= VK_API_VERSION_1_1 && d.props.apiVersion >= VK_API_VERSION_1_1 &&
        fns_.vkGetPhysicalDeviceProperties2 && fns_.vkGetPhysicalDeviceFeatures2) {
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
      fns_.vkGetPhysicalDeviceProperties2(h, &p2);
      std::memcpy(d.device_uuid, id.deviceUUID, VK_UUID_SIZE);
      d.subgroup_size = sub.subgroupSize;
      d.max_allocation = m3.maxMemoryAllocationSize;
      VkPhysicalDevice16BitStorageFeatures f16{};
      f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
      VkPhysicalDeviceFeatures2 f2{};
      f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
      f2.pNext = &f16;
      fns_.vkGetPhysicalDeviceFeatures2(h, &f2);
      d.storage_16bit = f16.storageBuffer16BitAccess == VK_TRUE;
    }
    VkPhysicalDeviceMemoryProperties mem{};
    fns_.vkGetPhysicalDeviceMemoryProperties(h, &mem);
    for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
      if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
        d.device_local_bytes = std::max<uint64_t>(d.device_local_bytes, mem.memoryHeaps[i].size);
    uint32_t qcount = 0;
    fns_.vkGetPhysicalDeviceQueueFamilyProperties(h, &qcount, nullptr);
    std::vector<VkQueueFamilyProperties> families(qcount);
    fns_.vkGetPhysicalDeviceQueueFamilyProperties(h, &qcount, families.data());
    // Prefer a compute queue family without graphics (async compute), else any with compute.
    for (uint32_t i = 0; i < qcount; ++i) {
      if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
      bool graphics = families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
      if (d.compute_queue_family < 0 || !graphics) d.compute_queue_family = static_cast<int>(i);
      if (!graphics) break;
    }
    if (d.compute_queue_family >= 0) d.timestamp_bits = families[d.compute_queue_family].timestampValidBits;
    devices_.push_back(d);
  }

  // Selection: GRADRT_VULKAN_DEVICE (index or name substring), else the best type.
  std::string want = options.device.empty() ? env("GRADRT_VULKAN_DEVICE") : options.device;
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
  const DeviceInfo& d = devices_[selected_];

  // Logical device, one queue. The one optional feature: shaderFloat64, for the float64
  // shader variants, when the device has it.
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = static_cast<uint32_t>(d.compute_queue_family);
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  VkPhysicalDeviceFeatures enabled{};
  enabled.shaderFloat64 = d.features.shaderFloat64;
  dci.pEnabledFeatures = &enabled;
  s = check(fns_.vkCreateDevice(d.handle, &dci, nullptr, &device_), "vkCreateDevice");
  if (!s.ok()) return s;
  if (!load_device(device_, &fns_, &reason)) return Status(Code::Unavailable, "vulkan: " + reason);
  fns_.vkGetDeviceQueue(device_, qci.queueFamilyIndex, 0, &queue_);
  fns_.vkGetPhysicalDeviceMemoryProperties(d.handle, &memory_);

  VkCommandPoolCreateInfo cpi{};
  cpi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  cpi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  cpi.queueFamilyIndex = qci.queueFamilyIndex;
  s = check(fns_.vkCreateCommandPool(device_, &cpi, nullptr, &command_pool_), "vkCreateCommandPool");
  if (!s.ok()) return s;

  // Pipeline cache path.
  std::string dir = options.cache_dir;
  if (dir.empty()) {
    if (!env("XDG_CACHE_HOME").empty()) dir = env("XDG_CACHE_HOME") + "/gradrt";
    else if (!env("HOME").empty()) dir = env("HOME") + "/.cache/gradrt";
  }
  if (!dir.empty() && dir != "-") {
    char name[96];
    std::snprintf(name, sizeof(name), "/vulkan_pipelines_%04x_%04x.bin", d.props.vendorID, d.props.deviceID);
    cache_path_ = dir + name;
  }
  load_pipeline_cache();
  return Status::OK();
}

void Context::load_pipeline_cache() {
  std::vector<uint8_t> blob;
  if (!cache_path_.empty()) {
    std::ifstream in(cache_path_, std::ios::binary);
    CacheHeader h{};
    if (in && in.read(reinterpret_cast<char*>(&h), sizeof(h))) {
      CacheHeader want = make_header(info(), h.data_size, h.checksum);
      bool match = std::memcmp(&h, &want, sizeof(h)) == 0 && h.data_size < (1ull << 30);
      if (match) {
        blob.resize(h.data_size);
        if (!in.read(reinterpret_cast<char*>(blob.data()), static_cast<std::streamsize>(blob.size())) ||
            fnv1a(blob.data(), blob.size()) != h.checksum)
          blob.clear();  // truncated or corrupt: start empty
      }
    }
  }
  VkPipelineCacheCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  pci.initialDataSize = blob.size();
  pci.pInitialData = blob.empty() ? nullptr : blob.data();
  if (fns_.vkCreatePipelineCache(device_, &pci, nullptr, &pipeline_cache_) != VK_SUCCESS) {
    pci.initialDataSize = 0;
    pci.pInitialData = nullptr;
    if (fns_.vkCreatePipelineCache(device_, &pci, nullptr, &pipeline_cache_) != VK_SUCCESS)
      pipeline_cache_ = VK_NULL_HANDLE;  // work without one
  }
}

void Context::save_pipeline_cache() {
  if (!cache_dirty_ || cache_path_.empty() || pipeline_cache_ == VK_NULL_HANDLE) return;
  cache_dirty_ = false;
  size_t size = 0;
  if (fns_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<uint8_t> blob(size);
  if (fns_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, blob.data()) != VK_SUCCESS) return;
  blob.resize(size);
  std::error_code ec;
  std::filesystem::path path(cache_path_);
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return;  // a cache we cannot write is not an error
  // Write a private temp file, then rename over the old one: readers see old or new, never half.
  std::string tmp = cache_path_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    CacheHeader h = make_header(info(), blob.size(), fnv1a(blob.data(), blob.size()));
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    out.write(reinterpret_cast<const char*>(blob.data()), static_cast<std::streamsize>(blob.size()));
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

Context::~Context() {
  if (device_) {
    if (!lost_) fns_.vkDeviceWaitIdle(device_);
    for (Pooled& p : pool_) destroy_buffer(&p.buffer);
    save_pipeline_cache();
    for (auto& [key, k] : kernels_) {
      fns_.vkDestroyPipeline(device_, k->pipeline, nullptr);
      fns_.vkDestroyPipelineLayout(device_, k->layout, nullptr);
      fns_.vkDestroyDescriptorSetLayout(device_, k->set_layout, nullptr);
    }
    if (pipeline_cache_) fns_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    if (command_pool_) fns_.vkDestroyCommandPool(device_, command_pool_, nullptr);
    fns_.vkDestroyDevice(device_, nullptr);
  }
  if (instance_) {
    if (messenger_ && fns_.vkDestroyDebugUtilsMessengerEXT)
      fns_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
    fns_.vkDestroyInstance(instance_, nullptr);
  }
  // The loader library stays open: drivers may have registered atexit handlers.
}

std::string Context::describe() const {
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
  o << "  validation layer: " << (validation_ ? "on" : "off") << "; pipeline cache: "
    << (cache_path_.empty() ? std::string("none") : cache_path_);
  return o.str();
}

int Context::find_memory_type(uint32_t bits, bool host) const {
  // host: HOST_VISIBLE|HOST_COHERENT, preferably HOST_CACHED (fast read-back).
  // device: DEVICE_LOCAL if any, else whatever the buffer allows.
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = memory_.memoryTypes[i].propertyFlags;
    int score;
    if (host) {
      if ((f & (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT)) !=
          (VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
        continue;
      score = (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 2 : 1;
    } else {
      score = (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? 2 : 1;
    }
    if (score > best_score) best_score = score, best = static_cast<int>(i);
  }
  return best;
}

Status Context::create_buffer(VkDeviceSize bytes, bool host, Buffer* out) {
  *out = Buffer{};
  VkDeviceSize size = std::max<VkDeviceSize>(bytes, 16);  // Vulkan has no empty buffers
  if (info().max_allocation && size > info().max_allocation)
    return Status(Code::ResourceExhausted, "vulkan: a buffer of " + std::to_string(size) +
                                               " bytes exceeds maxMemoryAllocationSize " +
                                               std::to_string(info().max_allocation));
  VkBufferCreateInfo bci{};
  bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bci.size = size;
  bci.usage = host ? (VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT)
                   : (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                      VK_BUFFER_USAGE_TRANSFER_DST_BIT);
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  Status s = check(fns_.vkCreateBuffer(device_, &bci, nullptr, &out->buffer), "vkCreateBuffer");
  if (!s.ok()) return s;
  VkMemoryRequirements req{};
  fns_.vkGetBufferMemoryRequirements(device_, out->buffer, &req);
  int type = find_memory_type(req.memoryTypeBits, host);
  if (type < 0) {
    destroy_buffer(out);
    return Status(Code::Internal, "vulkan: no suitable memory type for a buffer");
  }
  VkMemoryAllocateInfo mai{};
  mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  mai.allocationSize = req.size;
  mai.memoryTypeIndex = static_cast<uint32_t>(type);
  s = check(fns_.vkAllocateMemory(device_, &mai, nullptr, &out->memory), "vkAllocateMemory");
  if (!s.ok()) {
    destroy_buffer(out);
    return s;
  }
  s = check(fns_.vkBindBufferMemory(device_, out->buffer, out->memory, 0), "vkBindBufferMemory");
  if (s.ok() && host) s = check(fns_.vkMapMemory(device_, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped), "vkMapMemory");
  if (!s.ok()) {
    destroy_buffer(out);
    return s;
  }
  out->size = bytes;
  return Status::OK();
}

void Context::destroy_buffer(Buffer* b) {
  if (b->mapped) fns_.vkUnmapMemory(device_, b->memory);
  if (b->buffer) fns_.vkDestroyBuffer(device_, b->buffer, nullptr);
  if (b->memory) fns_.vkFreeMemory(device_, b->memory, nullptr);
  *b = Buffer{};
}

namespace {
// Pool size classes: 4 KiB steps up to 64 KiB, then four steps per power of two
// (1.25, 1.5, 1.75, 2 x 2^k), so a class is at most 25% above the request.
VkDeviceSize buffer_class(VkDeviceSize n) {
  n = std::max<VkDeviceSize>(n, 16);
  if (n <= (VkDeviceSize(64) << 10)) return (n + 4095) & ~VkDeviceSize(4095);
  int k = 63;
  while (!((n - 1) >> k & 1)) --k;  // 2^k < n <= 2^(k+1)
  const VkDeviceSize step = VkDeviceSize(1) << (k - 2);
  return (n + step - 1) / step * step;
}
}  // namespace

Status Context::acquire_buffer(VkDeviceSize bytes, bool host, Buffer* out) {
  VkDeviceSize cls = buffer_class(bytes);
  if (info().max_allocation && cls > info().max_allocation) cls = bytes;  // exact, or the limit's error
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    int best = -1;
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].host == host && pool_[i].buffer.size == cls &&
          (best < 0 || pool_[i].tick > pool_[best].tick))
        best = static_cast<int>(i);
    if (best >= 0) {
      *out = pool_[best].buffer;
      pooled_bytes_[host] -= cls;
      pool_.erase(pool_.begin() + best);
      return Status::OK();
    }
  }
  return create_buffer(cls, host, out);
}

void Context::release_buffer(Buffer* b) {
  if (!b->buffer) return;
  // Bounds: device 1/8 of the device-local heap, at most 512 MiB; host staging 256 MiB.
  const VkDeviceSize heap = info().device_local_bytes ? info().device_local_bytes : (VkDeviceSize(1) << 32);
  const bool host = b->mapped != nullptr;
  const VkDeviceSize cap = host ? (VkDeviceSize(256) << 20) : std::min(VkDeviceSize(512) << 20, heap / 8);
  std::lock_guard<std::mutex> lock(pool_mutex_);
  if (lost_ || b->size > cap) {
    destroy_buffer(b);
    return;
  }
  pool_.push_back({*b, host, ++pool_tick_});
  pooled_bytes_[host] += b->size;
  *b = Buffer{};
  while (pooled_bytes_[host] > cap) {
    size_t oldest = pool_.size();
    for (size_t i = 0; i < pool_.size(); ++i)
      if (pool_[i].host == host && (oldest == pool_.size() || pool_[i].tick < pool_[oldest].tick)) oldest = i;
    pooled_bytes_[host] -= pool_[oldest].buffer.size;
    destroy_buffer(&pool_[oldest].buffer);
    pool_.erase(pool_.begin() + oldest);
  }
}

Status Context::kernel(const ShaderCode& code, const std::vector<uint32_t>& spec, const Kernel** out) {
  std::string key = code.name;
  for (uint32_t v : spec) key += "," + std::to_string(v);
  auto it = kernels_.find(key);
  if (it != kernels_.end()) {
    *out = it->second.get();
    return Status::OK();
  }
  const VkPhysicalDeviceLimits& l = limits();
  if (spec.empty() || spec[0] == 0 || spec[0] > l.maxComputeWorkGroupSize[0] ||
      spec[0] > l.maxComputeWorkGroupInvocations)
    return Status(Code::Unimplemented, "vulkan: workgroup size " + std::to_string(spec.empty() ? 0 : spec[0]) +
                                           " of " + code.name + " exceeds the device limits");
  if (code.push_size > 128 || code.push_size > l.maxPushConstantsSize || code.push_size % 4)
    return Status(Code::Internal, std::string("vulkan: push constants of ") + code.name + " too large");

  if (code.f64 && !info().features.shaderFloat64)
    return Status(Code::Unimplemented, std::string("vulkan: ") + info().props.deviceName +
                                           " has no shaderFloat64; float64 kernels need it (use cpu)");
  auto k = std::make_unique<Kernel>();
  k->key = key;
  k->bindings = code.bindings;
  k->push_size = code.push_size;
  k->local_size = spec[0];
  auto fail = [&](Status s) {
    if (k->pipeline) fns_.vkDestroyPipeline(device_, k->pipeline, nullptr);
    if (k->layout) fns_.vkDestroyPipelineLayout(device_, k->layout, nullptr);
    if (k->set_layout) fns_.vkDestroyDescriptorSetLayout(device_, k->set_layout, nullptr);
    return s;
  };
  std::vector<VkDescriptorSetLayoutBinding> binds(code.bindings);
  for (uint32_t i = 0; i < code.bindings; ++i) {
    binds[i] = {};
    binds[i].binding = i;
    binds[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    binds[i].descriptorCount = 1;
    binds[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dli{};
  dli.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dli.bindingCount = code.bindings;
  dli.pBindings = binds.data();
  Status s = check(fns_.vkCreateDescriptorSetLayout(device_, &dli, nullptr, &k->set_layout), "vkCreateDescriptorSetLayout");
  if (!s.ok()) return fail(s);
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, code.push_size};
  VkPipelineLayoutCreateInfo pli{};
  pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &k->set_layout;
  pli.pushConstantRangeCount = code.push_size ? 1 : 0;
  pli.pPushConstantRanges = &range;
  s = check(fns_.vkCreatePipelineLayout(device_, &pli, nullptr, &k->layout), "vkCreatePipelineLayout");
  if (!s.ok()) return fail(s);

  VkShaderModuleCreateInfo smi{};
  smi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  smi.codeSize = code.bytes;
  smi.pCode = code.words;
  VkShaderModule module = VK_NULL_HANDLE;
  s = check(fns_.vkCreateShaderModule(device_, &smi, nullptr, &module), "vkCreateShaderModule");
  if (!s.ok()) return fail(s);
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (size_t i = 0; i < spec.size(); ++i)
    entries[i] = {static_cast<uint32_t>(i), static_cast<uint32_t>(4 * i), 4};
  VkSpecializationInfo si{};
  si.mapEntryCount = static_cast<uint32_t>(entries.size());
  si.pMapEntries = entries.data();
  si.dataSize = spec.size() * 4;
  si.pData = spec.data();
  VkComputePipelineCreateInfo cpi{};
  cpi.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = module;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = &si;
  cpi.layout = k->layout;
  VkResult r = fns_.vkCreateComputePipelines(device_, pipeline_cache_, 1, &cpi, nullptr, &k->pipeline);
  fns_.vkDestroyShaderModule(device_, module, nullptr);
  s = check(r, "vkCreateComputePipelines");
  if (!s.ok()) return fail(s);
  cache_dirty_ = true;
  *out = k.get();
  kernels_.emplace(key, std::move(k));
  return Status::OK();
}

// ---------------------------------------------------------------- Job
Job::~Job() {
  if (in_flight_) return;  // the GPU may still use them: leak rather than crash
  const Fns& f = ctx_.fns();
  VkDevice dev = ctx_.device();
  if (fence_) f.vkDestroyFence(dev, fence_, nullptr);
  if (queries_) f.vkDestroyQueryPool(dev, queries_, nullptr);
  if (cmd_) f.vkFreeCommandBuffers(dev, ctx_.command_pool(), 1, &cmd_);
  if (pool_) f.vkDestroyDescriptorPool(dev, pool_, nullptr);
  for (Slot& s : slots_) {
    ctx_.release_buffer(&s.device);
    ctx_.release_buffer(&s.staging);
  }
}

Status Job::add(size_t bytes, bool staging, int* id) {
  Status s = ctx_.usable();
  if (!s.ok()) return s;
  if (bytes > ctx_.limits().maxStorageBufferRange)
    return Status(Code::ResourceExhausted, "vulkan: a tensor of " + std::to_string(bytes) +
                                               " bytes exceeds this device's maxStorageBufferRange (" +
                                               std::to_string(ctx_.limits().maxStorageBufferRange) + ")");
  Slot slot;
  slot.bytes = bytes;
  s = ctx_.acquire_buffer(bytes, false, &slot.device);
  if (s.ok() && staging) s = ctx_.acquire_buffer(bytes, true, &slot.staging);
  if (!s.ok()) {
    ctx_.release_buffer(&slot.device);
    return s;
  }
  slots_.push_back(slot);
  *id = static_cast<int>(slots_.size() - 1);
  return Status::OK();
}

Status Job::input(const void* data, size_t bytes, int* id) {
  Status s = add(bytes, true, id);
  if (s.ok() && bytes) std::memcpy(slots_[*id].staging.mapped, data, bytes);
  return s;
}

Status Job::output(void* data, size_t bytes, int* id) {
  Status s = add(bytes, true, id);
  if (s.ok()) slots_[*id].host_out = data;
  return s;
}

Status Job::scratch(size_t bytes, int* id) { return add(bytes, false, id); }

Status Job::dispatch(const Kernel& kernel, std::initializer_list<int> buffers, const void* push,
                     size_t push_size, uint32_t gx, uint32_t gy, uint32_t gz) {
  const VkPhysicalDeviceLimits& l = ctx_.limits();
  if (buffers.size() != kernel.bindings)
    return Status(Code::Internal, "vulkan: " + kernel.key + " takes " + std::to_string(kernel.bindings) +
                                      " buffers, given " + std::to_string(buffers.size()));
  if (push_size != kernel.push_size || push_size > 128 || push_size > l.maxPushConstantsSize)
    return Status(Code::Internal, "vulkan: " + kernel.key + " push constants: " + std::to_string(push_size) +
                                      " bytes given, " + std::to_string(kernel.push_size) + " expected (max 128)");
  const uint32_t g[3] = {gx, gy, gz};
  for (int i = 0; i < 3; ++i)
    if (g[i] > l.maxComputeWorkGroupCount[i])
      return Status(Code::ResourceExhausted,
                    "vulkan: " + kernel.key + " needs " + std::to_string(g[i]) + " workgroups in dimension " +
                        std::to_string(i) + ", the device allows " + std::to_string(l.maxComputeWorkGroupCount[i]));
  for (int b : buffers)
    if (b < 0 || static_cast<size_t>(b) >= slots_.size())
      return Status(Code::Internal, "vulkan: " + kernel.key + ": unknown buffer id");
  if (gx == 0 || gy == 0 || gz == 0) return Status::OK();
  Dispatch d{&kernel, std::vector<int>(buffers), {}, {gx, gy, gz}};
  d.push.assign(static_cast<const uint8_t*>(push), static_cast<const uint8_t*>(push) + push_size);
  dispatches_.push_back(std::move(d));
  return Status::OK();
}

Status Job::run() {
  Status s = ctx_.usable();
  if (!s.ok()) return s;
  const Fns& f = ctx_.fns();
  VkDevice dev = ctx_.device();

  // Descriptor sets, one per dispatch.
  std::vector<VkDescriptorSet> sets(dispatches_.size());
  if (!dispatches_.empty()) {
    uint32_t descriptors = 0;
    for (auto& d : dispatches_) descriptors += d.kernel->bindings;
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max<uint32_t>(descriptors, 1)};
    VkDescriptorPoolCreateInfo dpi{};
    dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpi.maxSets = static_cast<uint32_t>(dispatches_.size());
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    s = ctx_.check(f.vkCreateDescriptorPool(dev, &dpi, nullptr, &pool_), "vkCreateDescriptorPool");
    if (!s.ok()) return s;
    for (size_t i = 0; i < dispatches_.size(); ++i) {
      const Dispatch& d = dispatches_[i];
      VkDescriptorSetAllocateInfo dai{};
      dai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
      dai.descriptorPool = pool_;
      dai.descriptorSetCount = 1;
      dai.pSetLayouts = &d.kernel->set_layout;
      s = ctx_.check(f.vkAllocateDescriptorSets(dev, &dai, &sets[i]), "vkAllocateDescriptorSets");
      if (!s.ok()) return s;
      std::vector<VkDescriptorBufferInfo> infos(d.buffers.size());
      std::vector<VkWriteDescriptorSet> writes(d.buffers.size());
      for (size_t b = 0; b < d.buffers.size(); ++b) {
        // The tensor's bytes, not the pooled buffer's (possibly larger) size.
        const Slot& slot = slots_[d.buffers[b]];
        infos[b] = {slot.device.buffer, 0, std::max<VkDeviceSize>(slot.bytes, 16)};
        writes[b] = {};
        writes[b].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        writes[b].dstSet = sets[i];
        writes[b].dstBinding = static_cast<uint32_t>(b);
        writes[b].descriptorCount = 1;
        writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[b].pBufferInfo = &infos[b];
      }
      f.vkUpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    }
  }

  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = ctx_.command_pool();
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  s = ctx_.check(f.vkAllocateCommandBuffers(dev, &cai, &cmd_), "vkAllocateCommandBuffers");
  if (!s.ok()) return s;
  VkCommandBufferBeginInfo cbi{};
  cbi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  cbi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  if (ctx_.timing()) {
    VkQueryPoolCreateInfo qpi{};
    qpi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = 2;
    s = ctx_.check(f.vkCreateQueryPool(dev, &qpi, nullptr, &queries_), "vkCreateQueryPool");
    if (!s.ok()) return s;
  }
  s = ctx_.check(f.vkBeginCommandBuffer(cmd_, &cbi), "vkBeginCommandBuffer");
  if (!s.ok()) return s;
  if (queries_) f.vkCmdResetQueryPool(cmd_, queries_, 0, 2);

  auto barrier = [&](VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                     VkAccessFlags dst_access) {
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = dst_access;
    f.vkCmdPipelineBarrier(cmd_, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
  };
  // 1. staging -> device for inputs.
  for (Slot& slot : slots_)
    if (slot.staging.buffer && !slot.host_out && slot.bytes) {
      VkBufferCopy c{0, 0, slot.bytes};
      f.vkCmdCopyBuffer(cmd_, slot.staging.buffer, slot.device.buffer, 1, &c);
    }
  barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  // BOTTOM_OF_PIPE: written once the uploads have completed (TOP_OF_PIPE would be written
  // as soon as they started, and the GPU time would include the host-to-device copies).
  if (queries_) f.vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
  // 2. the dispatches, each one seeing the writes of the previous ones.
  for (size_t i = 0; i < dispatches_.size(); ++i) {
    const Dispatch& d = dispatches_[i];
    if (i) barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    f.vkCmdBindPipeline(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, d.kernel->pipeline);
    f.vkCmdBindDescriptorSets(cmd_, VK_PIPELINE_BIND_POINT_COMPUTE, d.kernel->layout, 0, 1, &sets[i], 0, nullptr);
    if (!d.push.empty())
      f.vkCmdPushConstants(cmd_, d.kernel->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(d.push.size()), d.push.data());
    f.vkCmdDispatch(cmd_, d.groups[0], d.groups[1], d.groups[2]);
  }
  if (queries_) f.vkCmdWriteTimestamp(cmd_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  // 3. device -> staging for outputs, then make them visible to the host.
  barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT);
  for (Slot& slot : slots_)
    if (slot.host_out && slot.bytes) {
      VkBufferCopy c{0, 0, slot.bytes};
      f.vkCmdCopyBuffer(cmd_, slot.device.buffer, slot.staging.buffer, 1, &c);
    }
  barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
  s = ctx_.check(f.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  if (!s.ok()) return s;

  VkFenceCreateInfo fci{};
  fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  s = ctx_.check(f.vkCreateFence(dev, &fci, nullptr, &fence_), "vkCreateFence");
  if (!s.ok()) return s;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  s = ctx_.check(f.vkQueueSubmit(ctx_.queue(), 1, &si, fence_), "vkQueueSubmit");
  if (!s.ok()) return s;
  in_flight_ = true;
  // A bounded wait: a hung device becomes a status, not a hung caller.
  uint64_t timeout_s = 600;
  if (const char* t = std::getenv("GRADRT_VULKAN_TIMEOUT_S")) timeout_s = std::max<uint64_t>(1, std::strtoull(t, nullptr, 10));
  VkResult r = f.vkWaitForFences(dev, 1, &fence_, VK_TRUE, timeout_s * 1000000000ull);
  if (r == VK_TIMEOUT) {
    ctx_.check(VK_ERROR_DEVICE_LOST, "vkWaitForFences");  // marks the context unusable
    return Status(Code::Unavailable, "vulkan: the device did not finish within " + std::to_string(timeout_s) +
                                         " s (GRADRT_VULKAN_TIMEOUT_S); the backend is disabled");
  }
  s = ctx_.check(r, "vkWaitForFences");
  if (!s.ok()) return s;  // device lost: keep in_flight_ so nothing is freed under the driver
  in_flight_ = false;
  for (Slot& slot : slots_)
    if (slot.host_out && slot.bytes) std::memcpy(slot.host_out, slot.staging.mapped, slot.bytes);
  if (queries_) {
    uint64_t t[2] = {0, 0};
    if (f.vkGetQueryPoolResults(dev, queries_, 0, 2, sizeof(t), t, sizeof(uint64_t),
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) == VK_SUCCESS) {
      const uint32_t bits = ctx_.info().timestamp_bits;
      const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      const uint64_t ticks = ((t[1] & mask) - (t[0] & mask)) & mask;
      ctx_.set_last_gpu_ms(double(ticks) * ctx_.limits().timestampPeriod * 1e-6);
    }
  }
  return Status::OK();
}

}  // namespace gradrt::vk

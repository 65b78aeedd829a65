#include "loader.h"

#include <dlfcn.h>

namespace gradrt::vk {

// fns->name = fns->getter(handle, "name"); when absent, returns false with "<owner> has no name".
#define GRADRT_VK_LOAD_REQUIRED(getter, handle, owner, name)                      \
  fns->name = reinterpret_cast<PFN_##name>(fns->getter(handle, #name));         \
  if (!fns->name) {                                                             \
    *reason = owner " has no " #name;                                           \
    return false;                                                               \
  }

bool load_library(const std::string& library, Fns* fns, std::string* reason) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    *reason = "cannot open the Vulkan loader " + library + ": " + (err ? err : "unknown error");
    return false;
  }
  fns->library = handle;
  fns->vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
  if (!fns->vkGetInstanceProcAddr) {
    *reason = library + " has no vkGetInstanceProcAddr";
    return false;
  }
  fns->vkEnumerateInstanceVersion = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      fns->vkGetInstanceProcAddr(nullptr, "vkEnumerateInstanceVersion"));
#define GRADRT_VK_LOAD(name) GRADRT_VK_LOAD_REQUIRED(vkGetInstanceProcAddr, nullptr, "the Vulkan loader", name)
  GRADRT_VK_GLOBAL_FNS(GRADRT_VK_LOAD)
#undef GRADRT_VK_LOAD
  return true;
}

bool load_instance(VkInstance instance, Fns* fns, std::string* reason) {
#define GRADRT_VK_LOAD(name) \
  fns->name = reinterpret_cast<PFN_##name>(fns->vkGetInstanceProcAddr(instance, #name));
  GRADRT_VK_INSTANCE_FNS(GRADRT_VK_LOAD)
#undef GRADRT_VK_LOAD
  // Everything but the debug-utils pair and the 1.1 property queries is core 1.0.
  if (!fns->vkDestroyInstance || !fns->vkEnumeratePhysicalDevices ||
      !fns->vkGetPhysicalDeviceProperties || !fns->vkGetPhysicalDeviceFeatures ||
      !fns->vkGetPhysicalDeviceQueueFamilyProperties || !fns->vkGetPhysicalDeviceMemoryProperties ||
      !fns->vkEnumerateDeviceExtensionProperties || !fns->vkCreateDevice ||
      !fns->vkGetDeviceProcAddr) {
    *reason = "the Vulkan instance lacks a core 1.0 entry point";
    return false;
  }
  return true;
}

bool load_device(VkDevice device, Fns* fns, std::string* reason) {
#define GRADRT_VK_LOAD(name) GRADRT_VK_LOAD_REQUIRED(vkGetDeviceProcAddr, device, "the Vulkan device", name)
  GRADRT_VK_DEVICE_FNS(GRADRT_VK_LOAD)
#undef GRADRT_VK_LOAD
  return true;
}

const char* result_name(VkResult r) {
  switch (r) {
#define GRADRT_VK_RESULT_NAME(name) \
  case name:                      \
    return #name;
    GRADRT_VK_RESULT_NAME(VK_SUCCESS)
    GRADRT_VK_RESULT_NAME(VK_NOT_READY)
    GRADRT_VK_RESULT_NAME(VK_TIMEOUT)
    GRADRT_VK_RESULT_NAME(VK_INCOMPLETE)
    GRADRT_VK_RESULT_NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
    GRADRT_VK_RESULT_NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    GRADRT_VK_RESULT_NAME(VK_ERROR_INITIALIZATION_FAILED)
    GRADRT_VK_RESULT_NAME(VK_ERROR_DEVICE_LOST)
    GRADRT_VK_RESULT_NAME(VK_ERROR_MEMORY_MAP_FAILED)
    GRADRT_VK_RESULT_NAME(VK_ERROR_LAYER_NOT_PRESENT)
    GRADRT_VK_RESULT_NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
    GRADRT_VK_RESULT_NAME(VK_ERROR_FEATURE_NOT_PRESENT)
    GRADRT_VK_RESULT_NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
    GRADRT_VK_RESULT_NAME(VK_ERROR_TOO_MANY_OBJECTS)
    GRADRT_VK_RESULT_NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
    GRADRT_VK_RESULT_NAME(VK_ERROR_FRAGMENTED_POOL)
    GRADRT_VK_RESULT_NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
    GRADRT_VK_RESULT_NAME(VK_ERROR_INVALID_SHADER_NV)
#undef GRADRT_VK_RESULT_NAME
    default: return "VK_ERROR_UNKNOWN";
  }
}

Status result_status(VkResult r, const char* what) {
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

#undef GRADRT_VK_LOAD_REQUIRED

}  // namespace gradrt::vk

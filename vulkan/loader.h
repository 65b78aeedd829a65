// The Vulkan loader, opened at run time: gradrt never links libvulkan, so the same binary
// runs on a machine without Vulkan (the backend then reports Unavailable with the reason).
// Every entry point we call is listed once below and loaded through vkGetInstanceProcAddr /
// vkGetDeviceProcAddr into a plain table of function pointers.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

#include "gradrt/gradrt.h"

namespace gradrt::vk {

// Loaded with vkGetInstanceProcAddr(nullptr, ...).
#define GRADRT_VK_GLOBAL_FNS(X)               \
  X(vkCreateInstance)                         \
  X(vkEnumerateInstanceLayerProperties)       \
  X(vkEnumerateInstanceExtensionProperties)

// Loaded with vkGetInstanceProcAddr(instance, ...). Optional ones may stay null.
#define GRADRT_VK_INSTANCE_FNS(X)             \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceProperties2)           \
  X(vkGetPhysicalDeviceFeatures)              \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)                      \
  X(vkCreateDebugUtilsMessengerEXT)           \
  X(vkDestroyDebugUtilsMessengerEXT)

// Loaded with vkGetDeviceProcAddr(device, ...).
#define GRADRT_VK_DEVICE_FNS(X)     \
  X(vkDestroyDevice)                \
  X(vkGetDeviceQueue)               \
  X(vkDeviceWaitIdle)               \
  X(vkCreateBuffer)                 \
  X(vkDestroyBuffer)                \
  X(vkGetBufferMemoryRequirements)  \
  X(vkAllocateMemory)               \
  X(vkFreeMemory)                   \
  X(vkBindBufferMemory)             \
  X(vkMapMemory)                    \
  X(vkUnmapMemory)                  \
  X(vkCreateShaderModule)           \
  X(vkDestroyShaderModule)          \
  X(vkCreateDescriptorSetLayout)    \
  X(vkDestroyDescriptorSetLayout)   \
  X(vkCreatePipelineLayout)         \
  X(vkDestroyPipelineLayout)        \
  X(vkCreatePipelineCache)          \
  X(vkDestroyPipelineCache)         \
  X(vkGetPipelineCacheData)         \
  X(vkCreateComputePipelines)       \
  X(vkDestroyPipeline)              \
  X(vkCreateDescriptorPool)         \
  X(vkDestroyDescriptorPool)        \
  X(vkResetDescriptorPool)          \
  X(vkAllocateDescriptorSets)       \
  X(vkUpdateDescriptorSets)         \
  X(vkCreateCommandPool)            \
  X(vkDestroyCommandPool)           \
  X(vkResetCommandPool)             \
  X(vkAllocateCommandBuffers)       \
  X(vkFreeCommandBuffers)           \
  X(vkBeginCommandBuffer)           \
  X(vkEndCommandBuffer)             \
  X(vkCmdBindPipeline)              \
  X(vkCmdBindDescriptorSets)        \
  X(vkCmdPushConstants)             \
  X(vkCmdDispatch)                  \
  X(vkCmdPipelineBarrier)           \
  X(vkCmdCopyBuffer)                \
  X(vkCmdFillBuffer)                \
  X(vkCmdWriteTimestamp)            \
  X(vkCmdResetQueryPool)            \
  X(vkCreateQueryPool)              \
  X(vkDestroyQueryPool)             \
  X(vkGetQueryPoolResults)          \
  X(vkCreateFence)                  \
  X(vkDestroyFence)                 \
  X(vkResetFences)                  \
  X(vkWaitForFences)                \
  X(vkGetFenceStatus)               \
  X(vkQueueSubmit)

struct Fns {
  void* library = nullptr;  // dlopen handle (never closed: drivers keep threads and atexit hooks)
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;  // null on a 1.0 loader
#define GRADRT_VK_DECLARE(name) PFN_##name name = nullptr;
  GRADRT_VK_GLOBAL_FNS(GRADRT_VK_DECLARE)
  GRADRT_VK_INSTANCE_FNS(GRADRT_VK_DECLARE)
  GRADRT_VK_DEVICE_FNS(GRADRT_VK_DECLARE)
#undef GRADRT_VK_DECLARE
};

// Opens the loader (`library`, default libvulkan.so.1; env GRADRT_VULKAN_LIBRARY overrides)
// and fills the global entry points. false with a reason when it cannot.
bool load_library(const std::string& library, Fns* fns, std::string* reason);
// After vkCreateInstance: the instance-level pointers (the two debug-utils ones may stay null).
bool load_instance(VkInstance instance, Fns* fns, std::string* reason);
// After vkCreateDevice: the device-level pointers.
bool load_device(VkDevice device, Fns* fns, std::string* reason);

const char* result_name(VkResult r);
// A failed VkResult as a Status naming `what` (OK for VK_SUCCESS):
//   out of host/device memory, too many objects  -> ResourceExhausted
//   device lost, no driver/layer/extension        -> Unavailable
//   anything else                                -> Internal
Status result_status(VkResult r, const char* what);

}  // namespace gradrt::vk

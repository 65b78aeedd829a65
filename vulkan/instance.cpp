#include "instance.h"

#include <cstring>
#include <mutex>

namespace gradrt::vk {
namespace {

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

bool has_extension(const Fns& fns, const char* layer, const char* name) {
  uint32_t n = 0;
  fns.vkEnumerateInstanceExtensionProperties(layer, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  if (n) fns.vkEnumerateInstanceExtensionProperties(layer, &n, exts.data());
  for (auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

bool has_validation_layer(const Fns& fns) {
  uint32_t n = 0;
  fns.vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  if (n) fns.vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (auto& l : layers)
    if (std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0) return true;
  return false;
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

Status create_instance(Fns* fns, int want_validation, Instance* out) {
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (fns->vkEnumerateInstanceVersion) fns->vkEnumerateInstanceVersion(&loader_version);
  out->api = loader_version >= VK_API_VERSION_1_1 ? VK_API_VERSION_1_1 : VK_API_VERSION_1_0;
  out->validation = want_validation == 1 && has_validation_layer(*fns);

  // The validation layer provides debug utils itself even when the loader's list lacks it.
  std::vector<const char*> layers, exts;
  if (out->validation) {
    layers.push_back("VK_LAYER_KHRONOS_validation");
    exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{};
  messenger_info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                   VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                               VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  messenger_info.pfnUserCallback = debug_callback;

  // With validation, also the layer's synchronization validation (it checks our barriers),
  // enabled through VK_EXT_validation_features when the layer offers it.
  const bool features = out->validation &&
                        has_extension(*fns, "VK_LAYER_KHRONOS_validation", VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  if (features) exts.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  const VkValidationFeatureEnableEXT sync_validation = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT validation_features{};
  validation_features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  validation_features.enabledValidationFeatureCount = 1;
  validation_features.pEnabledValidationFeatures = &sync_validation;
  validation_features.pNext = &messenger_info;

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "gradrt";
  app.pEngineName = "gradrt";
  app.apiVersion = out->api;
  VkInstanceCreateInfo ici{};
  ici.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  // The messenger in the chain also covers vkCreateInstance/vkDestroyInstance themselves.
  ici.pNext = features ? static_cast<const void*>(&validation_features)
                       : out->validation ? static_cast<const void*>(&messenger_info) : nullptr;
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ici.ppEnabledExtensionNames = exts.data();
  VkResult r = fns->vkCreateInstance(&ici, nullptr, &out->handle);
  if (r != VK_SUCCESS) {
    out->handle = VK_NULL_HANDLE;
    return Status(Code::Unavailable, std::string("vulkan: vkCreateInstance failed: ") + result_name(r));
  }
  std::string reason;
  if (!load_instance(out->handle, fns, &reason)) return Status(Code::Unavailable, "vulkan: " + reason);
  if (out->validation && fns->vkCreateDebugUtilsMessengerEXT) {
    r = fns->vkCreateDebugUtilsMessengerEXT(out->handle, &messenger_info, nullptr, &out->messenger);
    if (r != VK_SUCCESS) out->messenger = VK_NULL_HANDLE;
    return result_status(r, "vkCreateDebugUtilsMessengerEXT");
  }
  return Status::OK();
}

void destroy_instance(const Fns& fns, Instance* instance) {
  if (!instance->handle) return;
  if (instance->messenger && fns.vkDestroyDebugUtilsMessengerEXT)
    fns.vkDestroyDebugUtilsMessengerEXT(instance->handle, instance->messenger, nullptr);
  if (fns.vkDestroyInstance) fns.vkDestroyInstance(instance->handle, nullptr);
  *instance = Instance{};
}

}  // namespace gradrt::vk

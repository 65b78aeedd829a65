// The Vulkan instance: the API version, the Khronos validation layer (with synchronization
// validation) when asked for and installed, and the debug messenger that records what the
// layer says for the tests.
#pragma once

#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "loader.h"

namespace gradrt::vk {

struct Instance {
  VkInstance handle = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  uint32_t api = VK_API_VERSION_1_0;  // 1.1 when the loader has it
  bool validation = false;            // the layer is on
};

// `fns` has the loader's global entry points; on success it also has the instance-level ones.
// want_validation: 1 on (when the layer is installed), 0 off. Unavailable with the reason.
// On failure whatever was made is in *out: destroy_instance releases it.
Status create_instance(Fns* fns, int want_validation, Instance* out);
void destroy_instance(const Fns& fns, Instance* instance);

// Validation messages recorded by the debug messenger (all instances), for the tests.
std::vector<std::string> validation_messages();
void clear_validation_messages();

}  // namespace gradrt::vk

#include "backend_choice.h"

#include "status_macros.h"

namespace gradrt {

Status backend_for(const std::string& name, std::optional<Kernel> kernel, int64_t work, Backend** out) {
  if (name == "auto") {
    *out = kernel ? auto_backend_for(*kernel, work) : cpu_backend();
    return Status::OK();
  }
  Backend* b = find_backend(name);
  if (!b && name == "vulkan") return Status(Code::Unavailable, "vulkan: this gradrt was built without the Vulkan backend");
  if (!b) return Status(Code::NotFound, "unknown backend '" + name + "' (reference, cpu, vulkan, auto)");
  GRADRT_RETURN_IF_ERROR(b->available());
  *out = b;
  return Status::OK();
}

}  // namespace gradrt

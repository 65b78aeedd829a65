#include "backend_choice.h"

#include "status_macros.h"

namespace gradrt {

Backend* auto_backend_for(const char* stem, int64_t work) {
  for (Backend* b : all_backends())
    if (b != cpu_backend() && b != reference_backend() && b->preferred_for(stem, work) && b->available().ok())
      return b;
  return cpu_backend();
}

Status backend_for(const std::string& name, const char* stem, int64_t work, Backend** out) {
  if (name == "auto") {
    *out = auto_backend_for(stem, work);
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

#include "backend.h"

namespace gradrt {

namespace {
Status missing_kernel(const char* kernel) {
  return Status(Code::Unimplemented, std::string("kernel ") + kernel + " is not implemented by this backend for this dtype");
}
}  // namespace

#define GRADRT_KERNEL_DEFAULT(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  Status Backend::STEM(const Exec&, const P&, GRADRT_UNPACK ARGS) { return missing_kernel(#STEM); }
GRADRT_KERNELS(GRADRT_KERNEL_DEFAULT, float)
GRADRT_KERNELS(GRADRT_KERNEL_DEFAULT, double)
#undef GRADRT_KERNEL_DEFAULT
#define GRADRT_F16_DEFAULT(STEM, P, ARGS, NAMES) \
  Status Backend::STEM##_f16(const Exec&, const P&, GRADRT_UNPACK ARGS) { return missing_kernel(#STEM "_f16"); }
GRADRT_F16_KERNELS(GRADRT_F16_DEFAULT)
#undef GRADRT_F16_DEFAULT

#ifdef GRADRT_NO_VULKAN
Backend* vulkan_backend() { return nullptr; }
#endif

std::vector<Backend*> all_backends() {
  std::vector<Backend*> list = {reference_backend(), cpu_backend()};
  if (Backend* vk = vulkan_backend()) list.push_back(vk);
  return list;
}

Backend* auto_backend_for(Kernel kernel, int64_t work) {
  for (Backend* b : all_backends())
    if (b != cpu_backend() && b != reference_backend() && b->preferred_for(kernel, work) && b->available().ok()) return b;
  return cpu_backend();
}

Backend* find_backend(std::string_view name) {
  for (Backend* b : all_backends())
    if (name == b->name()) return b;
  return nullptr;
}

}  // namespace gradrt

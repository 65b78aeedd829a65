// A backend is a table of kernels over resolved params (core/params.h) and host pointers.
// Core has validated every argument and allocated every output before a kernel runs;
// a CPU kernel cannot fail. A device backend (Vulkan) may: driver errors come back as
// a Status. A kernel a backend does not have returns Unimplemented (the default here).
//
// The kernels, their signatures and names come from the kernel list (kernels.h).
#pragma once

#include <string>

#include "gradrt/gradrt.h"
#include "kernels.h"

namespace gradrt {

struct Exec {
  int threads = 1;  // worker count for parallel_for; results never depend on it
  // RunOptions::parallel when the caller gave one: parallel_for runs its workers there.
  const std::function<void(int, const std::function<void(int)>&)>* parallel = nullptr;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // OK when the backend can run here; Unavailable with the reason otherwise.
  virtual Status available() { return Status::OK(); }
  // What `gradrt devices` prints: ISA in use, device names and limits.
  virtual std::string detail() { return ""; }
  // Whether `auto` should prefer this backend for the kernel at this size (device backends
  // decline small work where the transfer costs more than the kernel).
  virtual bool preferred_for(Kernel /*kernel*/, int64_t /*work*/) { return false; }

#define GRADRT_KERNEL_VIRTUAL(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  virtual Status STEM(const Exec&, const P&, GRADRT_UNPACK ARGS);
  GRADRT_KERNELS(GRADRT_KERNEL_VIRTUAL, float)
  GRADRT_KERNELS(GRADRT_KERNEL_VIRTUAL, double)
#undef GRADRT_KERNEL_VIRTUAL
};

// The registered backends, created on first use: reference, cpu, and vulkan when built.
Backend* find_backend(std::string_view name);  // nullptr if unknown
std::vector<Backend*> all_backends();

Backend* reference_backend();
Backend* cpu_backend();
Backend* vulkan_backend();  // nullptr when gradrt was built without Vulkan

// What backend=auto runs the kernel on at this work estimate: the first device backend that
// prefers it and is available, else cpu.
Backend* auto_backend_for(Kernel kernel, int64_t work);

}  // namespace gradrt

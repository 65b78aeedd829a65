// A backend is a table of kernels over resolved params (core/params.h) and host pointers.
// Core has validated every argument and allocated every output before a kernel runs;
// a CPU kernel cannot fail. A device backend (Vulkan) may: driver errors come back as
// a Status. A kernel a backend does not have returns Unimplemented (the default here).
//
// The kernels, their signatures and names come from the kernel list (kernels.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "gradrt/gradrt.h"
#include "kernels.h"

namespace gradrt {

// Scratch memory for one kernel call: `bytes` at `data`, 64-byte aligned, contents unspecified.
struct Workspace {
  void* data = nullptr;
  size_t bytes = 0;
};

// What a kernel keeps in a plan between runs (e.g. packed filter panels): a backend derives
// from it. `weights`/`version` say what it was made from (see Exec::state_current).
struct KernelState {
  virtual ~KernelState() = default;
  const void* weights = nullptr;
  uint64_t version = 0;
};

struct Exec {
  int threads = 1;  // worker count for parallel_for; results never depend on it
  // Set by a plan (core/plan.cpp); empty/null when the call has none (a kernel then takes memory
  // of its own for the call and keeps nothing). The workspace has at least the bytes
  // workspace_size() asked for this kernel, params and threads.
  Workspace workspace;
  std::unique_ptr<KernelState>* state = nullptr;  // the plan's slot for this kernel's state
  uint64_t weights_version = 0;                   // PlanRunOptions::weights_version (0: unknown)
  // Whether *state was made from weights at `w` of this run's content version: a kernel that
  // keeps packed weights re-packs (and sets weights/version) when this is false.
  bool state_current(const void* w) const {
    return state && *state && weights_version != 0 && (*state)->version == weights_version && (*state)->weights == w;
  }
  // RunOptions::parallel when the caller gave one: parallel_for runs its workers there.
  const std::function<void(int, const std::function<void(int)>&)>* parallel = nullptr;
};

// A kernel call as prepare() sees it before any data: which kernel, in which compute dtype
// (float32 or float64), its params (the kernel list's params struct for that kernel), the
// work estimate, and the largest operand in elements.
struct KernelQuery {
  Kernel kernel;
  DType dtype = DType::float32;
  const void* params = nullptr;
  int64_t work = 0;
  int64_t max_elements = 0;
  int threads = 1;  // the workers the call runs on (Exec::threads): per-thread scratch scales with it
  template <class P> const P& params_as() const { return *static_cast<const P*>(params); }
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
  // Asked once per plan, before any data (ggml's supports_op): OK when this backend runs the
  // call, else Unimplemented with the reason (`auto` then takes cpu instead of retrying).
  virtual Status supports(const KernelQuery& /*q*/) { return Status::OK(); }
  // Scratch bytes the kernel wants for this call on q.threads threads (the plan allocates them
  // and passes them in Exec::workspace); 0: none.
  virtual size_t workspace_size(const KernelQuery& /*q*/) { return 0; }
  // How many times kernels.h's ns_per_work a unit of this call's work costs here, for its
  // thread count only (a path well below the FMA peak pays for a second thread sooner); q.threads
  // is not set. The offload decision keeps the plain work (it is about the transfers).
  virtual double thread_cost_scale(const KernelQuery& /*q*/) { return 1.0; }
  // The kernel the backend will run, as data for PlanInfo: its ISA or device, and its tile
  // choice where it has one ("" when not reported).
  virtual std::string isa_for(const KernelQuery& /*q*/) { return ""; }
  virtual std::string tiles_for(const KernelQuery& /*q*/) { return ""; }

#define GRADRT_KERNEL_VIRTUAL(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  virtual Status STEM(const Exec&, const P&, GRADRT_UNPACK ARGS);
  GRADRT_KERNELS(GRADRT_KERNEL_VIRTUAL, float)
  GRADRT_KERNELS(GRADRT_KERNEL_VIRTUAL, double)
#undef GRADRT_KERNEL_VIRTUAL

  // float16 storage (kernels.h GRADRT_F16_KERNELS): whether this backend runs `kernel`'s `_f16`
  // form here (the device has the feature and the backend has the kernel). Core then hands it
  // the float16 tensors as they are instead of widening them to float32 around the float kernel.
  virtual bool f16_storage(Kernel /*kernel*/) { return false; }
#define GRADRT_F16_VIRTUAL(STEM, P, ARGS, NAMES) virtual Status STEM##_f16(const Exec&, const P&, GRADRT_UNPACK ARGS);
  GRADRT_F16_KERNELS(GRADRT_F16_VIRTUAL)
#undef GRADRT_F16_VIRTUAL

  // Device memory and recording, for device tensors and gradrt::Sequence (core/device.cpp). A
  // backend without memory of its own answers Unimplemented to device_alloc and
  // sequence_create: core then keeps its tensors in host memory and runs recorded calls in order.
  // Kernels get a device tensor as its key (a pointer the backend recognises, never host data).
  virtual Status device_alloc(size_t /*bytes*/, void** /*key*/) { return unimplemented_device(); }
  virtual void device_free(void* /*key*/) {}
  virtual Status device_upload(void* /*key*/, const void* /*src*/, size_t /*bytes*/) { return unimplemented_device(); }
  virtual Status device_download(const void* /*key*/, void* /*dst*/, size_t /*bytes*/) { return unimplemented_device(); }
  virtual Status sequence_create(void** /*seq*/) { return unimplemented_device(); }
  // Runs `calls` (kernel calls on this thread) recording them into seq instead of running them.
  virtual Status sequence_record(void* /*seq*/, const std::function<Status()>& /*calls*/) { return unimplemented_device(); }
  virtual Status sequence_submit(void* /*seq*/) { return unimplemented_device(); }
  virtual void sequence_free(void* /*seq*/) {}
  virtual Status counters(DeviceCounters* out) {
    *out = {};
    return Status::OK();
  }

 private:
  Status unimplemented_device() const {
    return Status(Code::Unimplemented, std::string(name()) + ": no device memory of its own");
  }
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

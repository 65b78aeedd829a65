// Device tensors and sequences (gradrt.h): storage on a backend's device, explicit copies, ops
// recorded and submitted together. A device tensor's kernels see its key (Backend::device_alloc);
// run_op carries it as TensorView data and writes outputs to it through output_memory, so core
// passes it to the kernel untouched: that holds only where core neither converts nor stages
// the operand (float32/float64, NHWC, ops whose outputs the kernel writes directly, no empty
// operand: core writes those results itself), hence the checks in Sequence::record. float16
// tensors pass through only where the backend runs the op's kernel on float16 storage
// (Backend::f16_storage; core's run_f16 then hands the keys over as they are). Backends without device memory (cpu) keep tensors in host memory and run the
// recorded calls in order at submit.
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>

#include "backend.h"
#include "checked.h"
#include "status_macros.h"

namespace gradrt {

struct DeviceAccess {
  static const void* key(const Tensor& t) { return t.device_data_.get(); }
};

namespace {

Status find_device(std::string_view device, Backend** out) {
  *out = device == "reference" || device == "auto" ? nullptr : find_backend(device);
  if (!*out) return Status(Code::NotFound, "unknown device '" + std::string(device) + "' (vulkan or cpu)");
  return (*out)->available();
}

// Host memory for a device without its own (cpu): 64-byte aligned, at least 64 bytes.
void* host_alloc(size_t bytes) { return std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64); }

// The ops whose device operands core passes to the kernel as they are (see the file comment).
bool passes_through(std::string_view op) {
  static const std::set<std::string, std::less<>> ops = {
      "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropInputV2", "Conv2DBackpropFilter", "Conv2DBackpropFilterV2",
      "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter",
      "FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3"};
  return ops.count(op) > 0;
}

// The kernel of an op whose float16 operands the backend may take as they are (kernels.h
// GRADRT_F16_KERNELS), if it has one.
std::optional<Kernel> f16_kernel(std::string_view op) {
  // (V2's `input` / `filter` tensor gives only its shape: a float16 device tensor is fine there.)
  if (op == "Conv2DBackpropInput" || op == "Conv2DBackpropInputV2") return Kernel::conv2d_backprop_input;
  if (op == "Conv2DBackpropFilter" || op == "Conv2DBackpropFilterV2") return Kernel::conv2d_backprop_filter;
  if (op == "DepthwiseConv2dNativeBackpropInput") return Kernel::depthwise_conv2d_native_backprop_input;
  if (op == "DepthwiseConv2dNativeBackpropFilter") return Kernel::depthwise_conv2d_native_backprop_filter;
  // (FusedBatchNormGrad V1 takes float32/float64 x only, as TF declares.)
  if (op == "FusedBatchNormGradV2" || op == "FusedBatchNormGradV3") return Kernel::fused_batch_norm_grad;
  return std::nullopt;
}

}  // namespace

Status Tensor::allocate_on(std::string_view device, DType dtype, std::vector<int64_t> shape, Tensor* out) {
  Backend* b = nullptr;
  GRADRT_RETURN_IF_ERROR(find_device(device, &b));
  Tensor t;
  GRADRT_RETURN_IF_ERROR(adopt(dtype, shape, nullptr, &t));  // the checks alone
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  int64_t n = 1;
  for (int64_t d : t.shape_) n *= d;
  t.num_elements_ = n;
  void* key = nullptr;
  Status s = b->device_alloc(t.num_bytes(), &key);
  if (s.code() == Code::Unimplemented) {  // host memory
    key = host_alloc(t.num_bytes());
    if (!key) return Status(Code::ResourceExhausted, "out of host memory for a device tensor");
    t.device_data_ = std::shared_ptr<void>(key, [](void* p) { std::free(p); });
  } else {
    GRADRT_RETURN_IF_ERROR(s);
    t.device_data_ = std::shared_ptr<void>(key, [b](void* p) { b->device_free(p); });
  }
  t.device_ = b->name();
  *out = std::move(t);
  return Status::OK();
}

Status Tensor::upload(const void* src) {
  if (device_.empty()) return Status(Code::InvalidArgument, "upload: not a device tensor");
  Backend* b = find_backend(device_);
  Status s = b->device_upload(device_data_.get(), src, num_bytes());
  if (s.code() != Code::Unimplemented) return s;
  std::memcpy(device_data_.get(), src, num_bytes());
  return Status::OK();
}

Status Tensor::download(void* dst) const {
  if (device_.empty()) return Status(Code::InvalidArgument, "download: not a device tensor");
  Backend* b = find_backend(device_);
  Status s = b->device_download(device_data_.get(), dst, num_bytes());
  if (s.code() != Code::Unimplemented) return s;
  std::memcpy(dst, device_data_.get(), num_bytes());
  return Status::OK();
}

Status device_counters(std::string_view device, DeviceCounters* out) {
  Backend* b = nullptr;
  GRADRT_RETURN_IF_ERROR(find_device(device, &b));
  return b->counters(out);
}

struct Sequence::Impl {
  Backend* backend = nullptr;
  Status status;                              // of finding the device, then of the last record
  void* seq = nullptr;                        // the backend's recording, or null: host order
  std::vector<std::function<Status()>> calls;  // host order: what submit runs
};

Sequence::Sequence(std::string device) : impl_(std::make_unique<Impl>()) {
  impl_->status = find_device(device, &impl_->backend);
  if (!impl_->status.ok()) return;
  Status s = impl_->backend->sequence_create(&impl_->seq);
  if (s.code() != Code::Unimplemented) impl_->status = s;
}

Sequence::~Sequence() {
  if (impl_ && impl_->seq) impl_->backend->sequence_free(impl_->seq);
}
Sequence::Sequence(Sequence&&) noexcept = default;
Sequence& Sequence::operator=(Sequence&&) noexcept = default;

Status Sequence::record(std::string_view op, const std::map<std::string, const Tensor*, std::less<>>& device_inputs,
                        const Inputs& host_inputs, const Attrs& attrs,
                        const std::map<std::string, Tensor*, std::less<>>& outputs) {
  if (!impl_) return Status(Code::InvalidArgument, "Sequence: moved from");
  GRADRT_RETURN_IF_ERROR(impl_->status);
  const std::string where = "Sequence::record(" + std::string(op) + "): ";
  auto refuse = [&](const std::string& why) {
    impl_->status = Status(Code::InvalidArgument, where + why);
    return impl_->status;
  };
  if (!passes_through(op))
    return refuse("not one of the ops a sequence takes yet (the convolution ops and FusedBatchNormGrad)");
  if (auto it = attrs.find("data_format"); it != attrs.end() && it->second.s != "NHWC")
    return refuse("data_format must be NHWC on device tensors");
  if (attrs.count("T")) return refuse("attribute T is not taken on device tensors");
  const std::string device = impl_->backend->name();
  Inputs inputs = host_inputs;
  const std::optional<Kernel> f16 = f16_kernel(op);
  const bool takes_f16 = f16 && impl_->backend->f16_storage(*f16);
  auto device_tensor = [&](const std::string& name, const Tensor* t) {
    if (!t || t->device() != device) return refuse("'" + name + "' is not a tensor on " + device);
    if (t->dtype() == DType::float16 && !takes_f16)
      return refuse("'" + name + "' is float16: " + device + " has no float16-storage kernel for this op here "
                    "(Conv2DBackpropInput/Filter, DepthwiseConv2dNativeBackpropInput/Filter, "
                    "FusedBatchNormGradV2/V3 on a device with 16-bit storage)");
    if (t->dtype() != DType::float32 && t->dtype() != DType::float64 && t->dtype() != DType::float16)
      return refuse("'" + name + "' must be float32 or float64 (float16 where the op takes it) on a device");
    return Status::OK();
  };
  for (const auto& [name, t] : device_inputs) {
    GRADRT_RETURN_IF_ERROR(device_tensor(name, t));
    // An empty operand makes core answer on the host (zeros written through the output
    // pointer, which here is a key): refused.
    if (t->num_elements() == 0) return refuse("'" + name + "' is empty (empty device tensors are not taken)");
    inputs[name] = {t->dtype(), t->shape(), DeviceAccess::key(*t)};
  }
  for (const auto& [name, t] : outputs) GRADRT_RETURN_IF_ERROR(device_tensor(name, t));
  // The call: outputs into the named device tensors (a mismatch is reported after the call).
  auto call = [device, op = std::string(op), inputs, attrs, outputs, where] {
    std::string mismatch;
    RunOptions o;
    o.backend = device;
    o.output_memory = [&](std::string_view name, DType dtype, const std::vector<int64_t>& shape) -> void* {
      const auto it = outputs.find(name);
      if (it == outputs.end()) return nullptr;
      if (it->second->dtype() != dtype || it->second->shape() != shape) {
        mismatch = "output '" + std::string(name) + "' must be " + dtype_name(dtype) + " " + shape_string(shape);
        return nullptr;
      }
      return const_cast<void*>(DeviceAccess::key(*it->second));
    };
    Outputs out;
    Status s = run_op(op, inputs, attrs, &out, o);
    if (!mismatch.empty()) return Status(Code::InvalidArgument, where + mismatch);
    return s;
  };
  // Host order (cpu): the call runs once here too, so that a bad call fails at record as on a device.
  impl_->status = impl_->seq ? impl_->backend->sequence_record(impl_->seq, call) : call();
  if (impl_->status.ok() && !impl_->seq) impl_->calls.push_back(call);
  return impl_->status;
}

Status Sequence::submit() {
  if (!impl_) return Status(Code::InvalidArgument, "Sequence: moved from");
  if (!impl_->status.ok())
    return Status(impl_->status.code(), "Sequence::submit after a failed record: " + impl_->status.message());
  if (impl_->seq) return impl_->backend->sequence_submit(impl_->seq);
  for (auto& call : impl_->calls) GRADRT_RETURN_IF_ERROR(call());
  return Status::OK();
}

}  // namespace gradrt

// What an op implementation (core/ops/<stem>.cpp) works with: its inputs, attributes,
// the chosen backend, and helpers that turn user tensors into the compute form kernels
// expect (float or double, channels last) and back.
#pragma once

#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "attrs.h"
#include "backend.h"
#include "checked.h"
#include "gradrt/gradrt.h"
#include "status_macros.h"

namespace gradrt {

// Channels-first data seen as [outer, channels, inner] (NCHW: outer = N, inner = H*W).
// Kernels want [outer, inner, channels].
struct ChannelsFirst {
  int64_t outer = 0, channels = 0, inner = 0;
};

class OpContext {
 public:
  OpContext(std::string_view op, const Inputs& inputs, const Attrs& attrs, const RunOptions& options,
            Outputs* outputs);

  const std::string& op() const { return op_; }
  AttrReader& attrs() { return attrs_; }
  Status error(const std::string& message) const { return Status(Code::InvalidArgument, op_ + ": " + message); }
  Status unimplemented(const std::string& message) const { return Status(Code::Unimplemented, op_ + ": " + message); }

  // A required input by TF name; its shape's element count is checked (dims >= 0, no
  // overflow) and its data pointer must be non-null when it has elements.
  Status input(const char* name, const TensorView** out);
  Status num_elements(const TensorView& t, const char* name, int64_t* out) const;

  // Reads an integer shape/sequence vector (int32 or int64, rank 1) into `out`.
  Status int_vector(const TensorView& t, const char* name, std::vector<int64_t>* out) const;

  // The floating dtype the op computes in, from its first float operand. `allowed` lists
  // the dtypes TF declares for the op. Also applies the `T` attribute (T=bfloat16 with
  // float32 tensors means: round inputs and outputs to bfloat16, keep float32 storage).
  Status resolve_dtype(const TensorView& t, const char* name, std::initializer_list<DType> allowed);
  DType dtype() const { return dtype_; }              // dtype of the op's float tensors
  bool compute_double() const { return dtype_ == DType::float64; }
  Status expect_dtype(const TensorView& t, const char* name, DType want) const;

  // An input as compute type T, channels last: the user's memory itself when it already
  // is, else converted into `storage`.
  // `typed`: the tensor has the op's dtype T (false for FusedBatchNorm's float32 U operands),
  // so T=bfloat16 rounding applies to it.
  template <class T>
  const T* load(const TensorView& t, int64_t n, std::vector<T>* storage, const ChannelsFirst* cf = nullptr,
                bool typed = true) const;

  // Allocates an output of this dtype and shape; records it in the op's outputs. Its memory
  // is left as is: an output that nothing writes (output_buffer/store/mark_written) is
  // zeroed by finish(), which gives the "sum over nothing" results of policy 3.
  Status add_output(const char* name, DType dtype, std::vector<int64_t> shape, Tensor** out);
  void mark_written(const Tensor* t);
  // Where a kernel writes an output: the tensor itself when it is T and channels last,
  // else `storage`, which store() then converts into the tensor.
  template <class T>
  T* output_buffer(Tensor* out, std::vector<T>* storage, const ChannelsFirst* cf = nullptr, bool typed = true) const;
  template <class T>
  void store(const T* data, Tensor* out, const ChannelsFirst* cf = nullptr, bool typed = true) const;

  // Runs `call(Backend*)` on the backend chosen for `kernel` (of the list, kernels.h) at this
  // work estimate, which also caps the threads. With backend=auto, a device backend that
  // lacks the kernel (Unimplemented) hands over to cpu.
  template <class F>
  Status run_kernel(Kernel kernel, int64_t work, F call);

  const Exec& exec() const { return exec_; }
  const std::string& ran_on() const { return ran_on_; }
  void set_ran_on(std::string backend) { ran_on_ = std::move(backend); }
  Status finish();  // after a successful op: unknown attributes are refused

 private:
  // No kernel: the backend the call resolves to when nothing runs.
  Status choose_backend(std::optional<Kernel> kernel, int64_t work, Backend** out);
  std::string op_;
  const Inputs& inputs_;
  AttrReader attrs_;
  RunOptions options_;
  Outputs* outputs_;
  Exec exec_;
  DType dtype_ = DType::float32;
  bool round_bf16_ = false;  // T=bfloat16 given with float32 storage
  std::string ran_on_;
  std::vector<const Tensor*> unwritten_;
};

// ---- implementation of the templates

template <class T>
T read_scalar(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::float16: return static_cast<T>(half_to_float(static_cast<const uint16_t*>(data)[i]));
    case DType::bfloat16: return static_cast<T>(bfloat16_to_float(static_cast<const uint16_t*>(data)[i]));
    case DType::float32: return static_cast<T>(static_cast<const float*>(data)[i]);
    case DType::float64: return static_cast<T>(static_cast<const double*>(data)[i]);
    case DType::int32: return static_cast<T>(static_cast<const int32_t*>(data)[i]);
    case DType::int64: return static_cast<T>(static_cast<const int64_t*>(data)[i]);
  }
  return T(0);
}

template <class T>
constexpr DType dtype_of() {
  return std::is_same_v<T, float> ? DType::float32 : DType::float64;
}

template <class T>
const T* OpContext::load(const TensorView& t, int64_t n, std::vector<T>* storage, const ChannelsFirst* cf,
                         bool typed) const {
  bool round = typed && round_bf16_ && t.dtype == DType::float32;
  if (!cf && !round && t.dtype == dtype_of<T>()) return static_cast<const T*>(t.data);
  storage->resize(static_cast<size_t>(n));
  T* dst = storage->data();
  auto value = [&](int64_t i) {
    T v = read_scalar<T>(t.data, t.dtype, i);
    if constexpr (std::is_same_v<T, float>) {
      if (round) v = bfloat16_to_float(float_to_bfloat16(v));
    }
    return v;
  };
  if (!cf) {
    for (int64_t i = 0; i < n; ++i) dst[i] = value(i);
    return dst;
  }
  for (int64_t o = 0; o < cf->outer; ++o)
    for (int64_t c = 0; c < cf->channels; ++c)
      for (int64_t s = 0; s < cf->inner; ++s)
        dst[(o * cf->inner + s) * cf->channels + c] = value((o * cf->channels + c) * cf->inner + s);
  return dst;
}

template <class T>
void store_scalar(void* data, DType dtype, int64_t i, T v, bool round_bf16) {
  switch (dtype) {
    case DType::float16: static_cast<uint16_t*>(data)[i] = float_to_half(static_cast<float>(v)); break;
    case DType::bfloat16: static_cast<uint16_t*>(data)[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DType::float32: {
      float f = static_cast<float>(v);
      static_cast<float*>(data)[i] = round_bf16 ? bfloat16_to_float(float_to_bfloat16(f)) : f;
      break;
    }
    case DType::float64: static_cast<double*>(data)[i] = static_cast<double>(v); break;
    case DType::int32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v); break;
    case DType::int64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v); break;
  }
}

template <class T>
T* OpContext::output_buffer(Tensor* out, std::vector<T>* storage, const ChannelsFirst* cf, bool typed) const {
  bool round = typed && round_bf16_ && out->dtype() == DType::float32;
  if (!cf && !round && out->dtype() == dtype_of<T>()) {
    const_cast<OpContext*>(this)->mark_written(out);  // the kernel writes every element
    return out->data_as<T>();
  }
  storage->assign(static_cast<size_t>(out->num_elements()), T(0));
  return storage->data();
}

template <class T>
void OpContext::store(const T* data, Tensor* out, const ChannelsFirst* cf, bool typed) const {
  const_cast<OpContext*>(this)->mark_written(out);
  if (data == out->data()) return;  // the kernel wrote in place
  int64_t n = out->num_elements();
  bool round = typed && round_bf16_ && out->dtype() == DType::float32;
  if (!cf) {
    for (int64_t i = 0; i < n; ++i) store_scalar(out->data(), out->dtype(), i, data[i], round);
    return;
  }
  for (int64_t o = 0; o < cf->outer; ++o)
    for (int64_t c = 0; c < cf->channels; ++c)
      for (int64_t s = 0; s < cf->inner; ++s)
        store_scalar(out->data(), out->dtype(), (o * cf->channels + c) * cf->inner + s,
                     data[(o * cf->inner + s) * cf->channels + c], round);
}

template <class F>
Status OpContext::run_kernel(Kernel kernel, int64_t work, F call) {
  Backend* backend = nullptr;
  GRADRT_RETURN_IF_ERROR(choose_backend(kernel, work, &backend));
  ran_on_ = backend->name();
  Status s = call(backend);
  if (s.code() == Code::Unimplemented && options_.backend == "auto" && backend != cpu_backend()) {
    ran_on_ = cpu_backend()->name();
    s = call(cpu_backend());
  }
  if (s.code() == Code::Unimplemented && s.message().find(op_) == std::string::npos)
    s = Status(s.code(), op_ + " on backend " + ran_on_ + ": " + s.message());
  return s;
}

}  // namespace gradrt

// gradrt: TensorFlow's convolution, batch-norm and fractional-pooling gradients,
// with TensorFlow's semantics, on reference, cpu (xsimd) and vulkan backends.
//
// Two ways to call an op:
//   run_op("Conv2DBackpropInput", {{"input_sizes", ...}, {"filter", ...}, {"out_backprop", ...}},
//          {{"strides", AttrValue({1, 1, 1, 1})}, {"padding", "SAME"}}, &outputs);
//   conv2d_backprop_input(input_sizes, filter, out_backprop, ConvAttrs().Strides({1,1,1,1}).Padding("SAME"), &dx);
// Names (ops, inputs, attributes, outputs) are TensorFlow's.  Nothing here throws:
// every failure is a Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gradrt {

const char* version();

// ---------------------------------------------------------------- Status
enum class Code { OK = 0, InvalidArgument, ResourceExhausted, Unimplemented, NotFound, Unavailable, Internal };
const char* code_name(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status OK() { return {}; }
  bool ok() const { return code_ == Code::OK; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;  // "InvalidArgument: Conv2DBackpropInput: ..." or "OK"

 private:
  Code code_ = Code::OK;
  std::string message_;
};

// ---------------------------------------------------------------- Tensors
enum class DType { float16, bfloat16, float32, float64, int32, int64 };
const char* dtype_name(DType t);                     // TF's names: "float32", "bfloat16", ...
bool dtype_from_name(std::string_view name, DType* out);  // also accepts "float", "half", "double"
size_t dtype_size(DType t);

// A borrowed tensor: dense, row-major (C order), `data` holds product(shape) elements.
struct TensorView {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};

// An owned tensor (128-byte aligned storage, 16-byte in wasm with away_from). Movable, not copyable.
class Tensor {
 public:
  Tensor() = default;
  // Checked: negative dims, int64 overflow, or more elements than max_tensor_elements()
  // give a status; nothing is allocated then. away_from: data the op will read while it
  // writes this tensor; the WebAssembly build places a large tensor half a page from it (mod
  // 4096) against 4K aliasing (see core/tensor.cpp); elsewhere it is ignored.
  static Status allocate(DType dtype, std::vector<int64_t> shape, Tensor* out, const void* away_from = nullptr);
  // A tensor over memory the caller owns (num_bytes() of it, kept alive as long as the tensor),
  // after the same checks as allocate(); with data == nullptr only the checks run.
  static Status adopt(DType dtype, std::vector<int64_t> shape, void* data, Tensor* out);
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t num_elements() const { return num_elements_; }
  size_t num_bytes() const { return static_cast<size_t>(num_elements_) * dtype_size(dtype_); }
  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <class T> T* data_as() { return static_cast<T*>(data()); }
  template <class T> const T* data_as() const { return static_cast<const T*>(data()); }
  TensorView view() const { return {dtype_, shape_, data()}; }

  // A tensor on a device ("vulkan"; "cpu": host memory with the same API), for a Sequence (see
  // below). Its data() is null: it is not host memory (run_op refuses it: "has no data"); copies
  // are explicit. Contents are undefined until written.
  static Status allocate_on(std::string_view device, DType dtype, std::vector<int64_t> shape, Tensor* out);
  const std::string& device() const { return device_; }  // "" for host tensors
  Status upload(const void* src);                         // num_bytes() from host memory
  Status download(void* dst) const;                       // num_bytes() to host memory

 private:
  friend struct DeviceAccess;  // core/device.cpp
  struct Free {  // (no default member initializer: unique_ptr needs it default-constructible here)
    Free() : owned(true) {}
    explicit Free(bool owns) : owned(owns) {}
    bool owned;
    void operator()(void* p) const;
  };
  DType dtype_ = DType::float32;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::unique_ptr<void, Free> data_;
  std::string device_;                // device tensors: where, and the device's handle for it
  std::shared_ptr<void> device_data_;
};

// Largest tensor gradrt will allocate, in elements (default 2^34; the wasm build 2^29 bytes'
// worth). Beyond it an op returns ResourceExhausted before allocating anything.
int64_t max_tensor_elements();
void set_max_tensor_elements(int64_t n);

// Half-precision conversions (round to nearest even), exposed for tests and tools.
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);
uint16_t float_to_bfloat16(float f);
float bfloat16_to_float(uint16_t b);

// ---------------------------------------------------------------- Attributes
// A JSON value: what an attribute is on the command line, in JS and in C++.
struct AttrValue {
  enum class Kind { Null, Bool, Int, Float, String, List };
  Kind kind = Kind::Null;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<AttrValue> list;

  AttrValue() = default;
  AttrValue(bool v) : kind(Kind::Bool), b(v) {}
  AttrValue(int v) : kind(Kind::Int), i(v) {}
  AttrValue(int64_t v) : kind(Kind::Int), i(v) {}
  AttrValue(double v) : kind(Kind::Float), f(v) {}
  AttrValue(const char* v) : kind(Kind::String), s(v) {}
  AttrValue(std::string v) : kind(Kind::String), s(std::move(v)) {}
  AttrValue(const std::vector<int64_t>& v);
  AttrValue(const std::vector<double>& v);
  AttrValue(std::initializer_list<int64_t> v) : AttrValue(std::vector<int64_t>(v)) {}

  // Strict JSON (RFC 8259) for one value; nesting depth and length are bounded.
  static Status parse_json(std::string_view text, AttrValue* out);
  std::string to_json() const;
};
using Attrs = std::map<std::string, AttrValue, std::less<>>;

// ---------------------------------------------------------------- Running ops
struct RunOptions {
  std::string backend = "auto";  // reference | cpu | vulkan | auto
  int threads = 0;               // 0: the machine's hardware threads
  // Where outputs go (optional; a framework passes its own output buffers and saves a copy):
  // called once per output when its dtype and shape are known and valid; returns memory of
  // num_elements * dtype_size bytes, 64-byte aligned, for gradrt to write the output into (the
  // Tensor in `outputs` then refers to it without owning it), or nullptr to let gradrt allocate.
  std::function<void*(std::string_view name, DType dtype, const std::vector<int64_t>& shape)> output_memory;
  // Where parallel work runs (optional; a framework passes its own thread pool, so that gradrt's
  // pool threads and the framework's do not compete for the same cores): called with a worker count
  // (2 .. threads) and a function of the worker index; must call fn(i) once for every i in
  // [0, workers), concurrently where it can (the caller may run some itself), and return when all
  // have returned. The work is cut as always (results do not change); unset: gradrt's own pool.
  std::function<void(int workers, const std::function<void(int worker)>& fn)> parallel;
};
struct RunInfo {
  std::string backend;           // the backend that ran (what "auto" chose)
};

using Inputs = std::map<std::string, TensorView, std::less<>>;
using Outputs = std::vector<std::pair<std::string, Tensor>>;  // in the op's output order

// Runs an op by its TensorFlow name. On failure `outputs` is left empty.
Status run_op(std::string_view op, const Inputs& inputs, const Attrs& attrs, Outputs* outputs,
              const RunOptions& options = {}, RunInfo* info = nullptr);

struct OpInfo {
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};
const std::vector<OpInfo>& ops();

struct BackendInfo {
  std::string name;
  bool available = false;
  std::string detail;            // ISA in use, device name, or why it is unavailable
};
std::vector<BackendInfo> backends();
// The backend "auto" resolves to for op (cpu unless a faster one can run it).
std::string auto_backend(std::string_view op);

// ---------------------------------------------------------------- Plans
// prepare() does once what every run_op call does: attributes, validation, shapes, the backend
// and kernel choice, the workspace; Plan::run then gives the same bits as run_op with the same
// arguments (run_op itself is prepare + run behind a small per-thread plan cache).
//
//   gradrt::Plan plan;
//   s = gradrt::prepare("Conv2DBackpropFilter", {{"input", x_spec}, {"filter_sizes", sizes},
//                       {"out_backprop", dy_spec}}, attrs, &plan);
//   for (...) s = plan.run({{"input", x}, {"filter_sizes", sizes}, {"out_backprop", dy}}, &outputs);
//
// Input specs are TensorViews: dtype and shape are fixed for the plan. `data` is read only for
// the inputs whose values decide shapes (input_sizes, filter_sizes, orig_input_tensor_shape,
// row/col_pooling_sequence): those values are copied into the plan and run() must get the same
// ones. Other inputs' data may be null at prepare.

struct TensorSpec {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
};

// What prepare() resolved, as data.
struct PlanInfo {
  std::string op;
  std::string backend;         // where the kernel runs ("auto" resolved); empty when no kernel runs
  std::string kernel;          // its stem in the kernel list (core/kernels.h), e.g. "conv2d_backprop_filter"
  std::string isa;             // the backend's instruction set or device ("avx512", "wasm_simd128", ...)
  std::string tiles;           // the backend's tile choice for this kernel, where it reports one
  size_t workspace_bytes = 0;  // scratch the kernel (and the op around it) asked for; the plan owns it
  bool fast = false;           // run() skips the op's checks (they ran at prepare); false: run() redoes them
  std::vector<std::pair<std::string, TensorSpec>> outputs;  // in the op's output order
};

struct PlanRunOptions {
  // Content version of the weights (a conv's filter): state a kernel keeps in the plan (packed
  // filter panels) is reused only while this stays the same nonzero value and the weights are
  // at the same address. 0 (the default): unknown, so it is made again on every run.
  uint64_t weights_version = 0;
  // As RunOptions::output_memory.
  std::function<void*(std::string_view name, DType dtype, const std::vector<int64_t>& shape)> output_memory;
  // As RunOptions::parallel.
  std::function<void(int workers, const std::function<void(int worker)>& fn)> parallel;
};

// A prepared op. Movable, not copyable; one run at a time (its workspace and kernel state are
// its own: use a plan per thread).
class Plan {
 public:
  Plan();
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  bool valid() const { return impl_ != nullptr; }
  const PlanInfo& info() const;  // of a valid plan
  // Inputs must have the prepared dtypes and shapes (and values, for the shape inputs):
  // anything else is InvalidArgument naming the input. On failure `outputs` is left empty.
  Status run(const Inputs& inputs, Outputs* outputs, const PlanRunOptions& options = {}, RunInfo* info = nullptr);

  struct Impl;
 private:
  std::unique_ptr<Impl> impl_;
  friend struct PlanAccess;  // core/plan.cpp
};

// Validates op on input specs and attrs and fills *plan (left invalid on failure). options:
// backend and threads as for run_op (output_memory is per run: PlanRunOptions).
Status prepare(std::string_view op, const Inputs& specs, const Attrs& attrs, Plan* plan,
               const RunOptions& options = {});

// ---------------------------------------------------------------- Typed calls
// Attrs mirror TensorFlow's C++ `Attrs` setters; strides and padding are required.
struct ConvAttrs {
  std::vector<int64_t> strides;
  std::string padding;
  std::vector<int64_t> explicit_paddings;
  std::string data_format = "NHWC";
  std::vector<int64_t> dilations = {1, 1, 1, 1};
  bool use_cudnn_on_gpu = true;
  ConvAttrs& Strides(std::vector<int64_t> v) { strides = std::move(v); return *this; }
  ConvAttrs& Padding(std::string v) { padding = std::move(v); return *this; }
  ConvAttrs& ExplicitPaddings(std::vector<int64_t> v) { explicit_paddings = std::move(v); return *this; }
  ConvAttrs& DataFormat(std::string v) { data_format = std::move(v); return *this; }
  ConvAttrs& Dilations(std::vector<int64_t> v) { dilations = std::move(v); return *this; }
  ConvAttrs& UseCudnnOnGpu(bool v) { use_cudnn_on_gpu = v; return *this; }
  Attrs to_attrs() const;
};
using DepthwiseAttrs = ConvAttrs;  // use_cudnn_on_gpu is not sent for depthwise ops

struct FusedBatchNormAttrs {
  double epsilon = 0.0001;
  double exponential_avg_factor = 1.0;
  std::string data_format = "NHWC";
  bool is_training = true;
  FusedBatchNormAttrs& Epsilon(double v) { epsilon = v; return *this; }
  FusedBatchNormAttrs& ExponentialAvgFactor(double v) { exponential_avg_factor = v; return *this; }
  FusedBatchNormAttrs& DataFormat(std::string v) { data_format = std::move(v); return *this; }
  FusedBatchNormAttrs& IsTraining(bool v) { is_training = v; return *this; }
  Attrs to_attrs(bool with_factor) const;
};

struct FractionalAvgPoolAttrs {
  std::vector<double> pooling_ratio;
  bool pseudo_random = false;
  bool overlapping = false;
  bool deterministic = false;
  int64_t seed = 0;
  int64_t seed2 = 0;
  FractionalAvgPoolAttrs& PoolingRatio(std::vector<double> v) { pooling_ratio = std::move(v); return *this; }
  FractionalAvgPoolAttrs& PseudoRandom(bool v) { pseudo_random = v; return *this; }
  FractionalAvgPoolAttrs& Overlapping(bool v) { overlapping = v; return *this; }
  FractionalAvgPoolAttrs& Deterministic(bool v) { deterministic = v; return *this; }
  FractionalAvgPoolAttrs& Seed(int64_t v) { seed = v; return *this; }
  FractionalAvgPoolAttrs& Seed2(int64_t v) { seed2 = v; return *this; }
  Attrs to_attrs() const;
};

Status conv2d(const TensorView& input, const TensorView& filter, const ConvAttrs& attrs,
              Tensor* output, const RunOptions& options = {});
Status conv2d_backprop_input(const TensorView& input_sizes, const TensorView& filter,
                             const TensorView& out_backprop, const ConvAttrs& attrs,
                             Tensor* output, const RunOptions& options = {});
Status conv2d_backprop_filter(const TensorView& input, const TensorView& filter_sizes,
                              const TensorView& out_backprop, const ConvAttrs& attrs,
                              Tensor* output, const RunOptions& options = {});
Status depthwise_conv2d_native(const TensorView& input, const TensorView& filter,
                               const DepthwiseAttrs& attrs, Tensor* output,
                               const RunOptions& options = {});
Status depthwise_conv2d_native_backprop_input(const TensorView& input_sizes, const TensorView& filter,
                                              const TensorView& out_backprop, const DepthwiseAttrs& attrs,
                                              Tensor* output, const RunOptions& options = {});
Status depthwise_conv2d_native_backprop_filter(const TensorView& input, const TensorView& filter_sizes,
                                               const TensorView& out_backprop, const DepthwiseAttrs& attrs,
                                               Tensor* output, const RunOptions& options = {});

// The relu family and the bias ops (TF's Relu, Relu6, ReluGrad, Relu6Grad, BiasAdd, BiasAddGrad);
// data_format "NHWC" or "NCHW".
Status relu(const TensorView& features, Tensor* activations, const RunOptions& options = {});
Status relu6(const TensorView& features, Tensor* activations, const RunOptions& options = {});
Status relu_grad(const TensorView& gradients, const TensorView& features, Tensor* backprops,
                 const RunOptions& options = {});
Status relu6_grad(const TensorView& gradients, const TensorView& features, Tensor* backprops,
                  const RunOptions& options = {});
Status bias_add(const TensorView& value, const TensorView& bias, const std::string& data_format, Tensor* output,
                const RunOptions& options = {});
Status bias_add_grad(const TensorView& out_backprop, const std::string& data_format, Tensor* output,
                     const RunOptions& options = {});

struct FusedBatchNormOutputs { Tensor y, batch_mean, batch_variance, reserve_space_1, reserve_space_2, reserve_space_3; };
// Runs FusedBatchNormV3 (reserve_space_3 is an empty float32 tensor).
Status fused_batch_norm(const TensorView& x, const TensorView& scale, const TensorView& offset,
                        const TensorView& mean, const TensorView& variance,
                        const FusedBatchNormAttrs& attrs, FusedBatchNormOutputs* out,
                        const RunOptions& options = {});
struct FusedBatchNormGradOutputs { Tensor x_backprop, scale_backprop, offset_backprop; };
// Runs FusedBatchNormGradV2 (the reserve-space outputs are always empty and dropped here).
Status fused_batch_norm_grad(const TensorView& y_backprop, const TensorView& x, const TensorView& scale,
                             const TensorView& reserve_space_1, const TensorView& reserve_space_2,
                             const FusedBatchNormAttrs& attrs, FusedBatchNormGradOutputs* out,
                             const RunOptions& options = {});

struct FractionalAvgPoolOutputs { Tensor output, row_pooling_sequence, col_pooling_sequence; };
Status fractional_avg_pool(const TensorView& value, const FractionalAvgPoolAttrs& attrs,
                           FractionalAvgPoolOutputs* out, const RunOptions& options = {});
Status fractional_avg_pool_grad(const TensorView& orig_input_tensor_shape, const TensorView& out_backprop,
                                const TensorView& row_pooling_sequence, const TensorView& col_pooling_sequence,
                                bool overlapping, Tensor* output, const RunOptions& options = {});

// ---------------------------------------------------------------- Device tensors, sequences
// Ops on device tensors (Tensor::allocate_on) are recorded into a Sequence of that device and
// run together by submit(), as often as wanted (Vulkan: one command buffer, one submission, no
// copies between host and device; cpu: the calls in order on host memory). The device counts
// submissions and bytes copied each way (uploads, downloads, and every host-tensor op).
//
//   gradrt::Sequence seq("vulkan");
//   s = seq.record("Conv2DBackpropInput", {{"filter", &w}, {"out_backprop", &dy}},
//                  {{"input_sizes", sizes}}, attrs, {{"output", &dx}});   // device tensors
//   s = seq.submit();
struct DeviceCounters {
  uint64_t submissions = 0, bytes_to_device = 0, bytes_to_host = 0;
};
Status device_counters(std::string_view device, DeviceCounters* out);

class Sequence {
 public:
  explicit Sequence(std::string device = "vulkan");
  ~Sequence();
  Sequence(Sequence&&) noexcept;
  Sequence& operator=(Sequence&&) noexcept;

  // Records op: device_inputs are tensors of this sequence's device; host_inputs are the shape
  // inputs read on the host (input_sizes, filter_sizes); outputs are the op's outputs by name,
  // device tensors the caller made with the output's dtype and shape (outputs not named, TF's
  // empty reserve spaces, are dropped). Float32/float64 NHWC convolution ops (Conv2D,
  // DepthwiseConv2dNative and their input/filter gradients) on non-empty device inputs for now;
  // anything else, or a tensor of another device, is InvalidArgument, and after a failed record
  // the sequence refuses submit.
  // The tensors must outlive the sequence.
  Status record(std::string_view op, const std::map<std::string, const Tensor*, std::less<>>& device_inputs,
                const Inputs& host_inputs, const Attrs& attrs,
                const std::map<std::string, Tensor*, std::less<>>& outputs);
  // Runs everything recorded, in order (again on every call).
  Status submit();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gradrt

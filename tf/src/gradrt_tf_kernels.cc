// gradrt's cpu kernels as TensorFlow CPU kernels: one OpKernel class for every gradrt op,
// which hands TF's tensors to gradrt::run_op by the op's own name and copies the results
// back. Registered with Priority(1), so they win over TF's default CPU kernels wherever TF
// looks one up (eager, tf.function, Keras, tf.distribute). This is the only translation unit
// that includes TensorFlow's headers (C++17, TF's ABI flags); gradrt is reached through its
// public header only.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "tensorflow/core/framework/kernel_def_builder.h"
#include "tensorflow/core/framework/op_kernel.h"

namespace {

using tensorflow::DataType;
using tensorflow::OpKernel;
using tensorflow::OpKernelConstruction;
using tensorflow::OpKernelContext;

// The ops and the T values a kernel is registered for: TF's op definition allows them and
// gradrt computes them. TF keeps its own kernels for the rest (int32 convolutions: gradrt
// computes no integer convolution).
struct OpEntry {
  const char* name;
  std::vector<DataType> types;
};
const std::vector<OpEntry>& op_table() {
  using namespace tensorflow;
  static const std::vector<DataType> kFloat = {DT_HALF, DT_BFLOAT16, DT_FLOAT, DT_DOUBLE};
  static const std::vector<DataType> kBatchNorm = {DT_HALF, DT_BFLOAT16, DT_FLOAT};
  static const std::vector<DataType> kPool = {DT_FLOAT, DT_DOUBLE, DT_INT32, DT_INT64};
  static const std::vector<OpEntry> table = {
      {"Conv2DBackpropInput", kFloat},
      {"Conv2DBackpropInputV2", kFloat},
      {"Conv2DBackpropFilter", kFloat},
      {"Conv2DBackpropFilterV2", kFloat},
      {"DepthwiseConv2dNativeBackpropInput", kFloat},
      {"DepthwiseConv2dNativeBackpropFilter", kFloat},
      {"FractionalAvgPoolGrad", kPool},
      {"FusedBatchNormGrad", {DT_FLOAT}},  // the V1 op defines T = float only
      {"FusedBatchNormGradV2", kBatchNorm},
      {"FusedBatchNormGradV3", kBatchNorm},
      {"Conv2D", kFloat},
      {"DepthwiseConv2dNative", kFloat},
      {"FusedBatchNorm", {DT_FLOAT}},
      {"FusedBatchNormV2", kBatchNorm},
      {"FusedBatchNormV3", kBatchNorm},
      {"FractionalAvgPool", kPool},
  };
  return table;
}

// One counter per op in op_table(), read by gradrt_tf_kernel_calls().
std::atomic<long long>* counters() {
  static std::atomic<long long> c[32];
  return c;
}

// The thread count the last kernel call gave gradrt (tests check it follows TF's setting).
std::atomic<int> last_threads{0};

bool to_gradrt(DataType t, gradrt::DType* out) {
  switch (t) {
    case tensorflow::DT_HALF: *out = gradrt::DType::float16; return true;
    case tensorflow::DT_BFLOAT16: *out = gradrt::DType::bfloat16; return true;
    case tensorflow::DT_FLOAT: *out = gradrt::DType::float32; return true;
    case tensorflow::DT_DOUBLE: *out = gradrt::DType::float64; return true;
    case tensorflow::DT_INT32: *out = gradrt::DType::int32; return true;
    case tensorflow::DT_INT64: *out = gradrt::DType::int64; return true;
    default: return false;
  }
}

absl::StatusCode to_tf(gradrt::Code c) {
  switch (c) {
    case gradrt::Code::OK: return absl::StatusCode::kOk;
    case gradrt::Code::InvalidArgument: return absl::StatusCode::kInvalidArgument;
    case gradrt::Code::ResourceExhausted: return absl::StatusCode::kResourceExhausted;
    case gradrt::Code::Unimplemented: return absl::StatusCode::kUnimplemented;
    case gradrt::Code::NotFound: return absl::StatusCode::kNotFound;
    case gradrt::Code::Unavailable: return absl::StatusCode::kUnavailable;
    case gradrt::Code::Internal: return absl::StatusCode::kInternal;
  }
  return absl::StatusCode::kInternal;
}

// A NodeDef attribute as gradrt's JSON-like AttrValue. Type attributes (T, U) are not
// passed: the tensors carry their dtypes.
bool to_attr(const tensorflow::AttrValue& v, gradrt::AttrValue* out) {
  switch (v.value_case()) {
    case tensorflow::AttrValue::kI: *out = gradrt::AttrValue(static_cast<int64_t>(v.i())); return true;
    case tensorflow::AttrValue::kF: *out = gradrt::AttrValue(static_cast<double>(v.f())); return true;
    case tensorflow::AttrValue::kB: *out = gradrt::AttrValue(v.b()); return true;
    case tensorflow::AttrValue::kS: *out = gradrt::AttrValue(std::string(v.s())); return true;
    case tensorflow::AttrValue::kList: {
      gradrt::AttrValue list;
      list.kind = gradrt::AttrValue::Kind::List;
      for (auto i : v.list().i()) list.list.emplace_back(static_cast<int64_t>(i));
      // pooling_ratio is a list of floats; float attrs are float32 in a NodeDef, and TF's
      // kernels read them as float, so gradrt gets the float32 value widened exactly.
      for (float f : v.list().f()) list.list.emplace_back(static_cast<double>(f));
      *out = std::move(list);
      return true;
    }
    default: return false;
  }
}

class GradrtOp : public OpKernel {
 public:
  explicit GradrtOp(OpKernelConstruction* ctx) : OpKernel(ctx) {
    const auto& table = op_table();
    for (size_t i = 0; i < table.size(); ++i)
      if (type_string() == table[i].name) counter_ = &counters()[i];
    for (const auto& [name, value] : def().attr()) {
      if (name.empty() || name[0] == '_' || value.value_case() == tensorflow::AttrValue::kType) continue;
      gradrt::AttrValue a;
      OP_REQUIRES(ctx, to_attr(value, &a),
                  absl::InvalidArgumentError(type_string() + ": attribute '" + name + "' has an unsupported kind"));
      attrs_[name] = std::move(a);
    }
    for (const auto& info : gradrt::ops())
      if (info.name == type_string()) input_names_ = info.inputs, output_names_ = info.outputs;
    OP_REQUIRES(ctx, static_cast<int>(input_names_.size()) == ctx->num_inputs(),
                absl::InternalError(type_string() + ": gradrt and TensorFlow disagree on the inputs"));
    // FusedBatchNormV3's reserve_space_3 is a dummy: gradrt gives an empty tensor, TF's CPU kernel a
    // scalar 0. The plugin gives TF's, so graphs see the shape they always saw (no kernel reads it).
    if (type_string() == "FusedBatchNormV3") scalar_dummy_output_ = 5;
  }

  void Compute(OpKernelContext* ctx) override {
    gradrt::Inputs inputs;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const tensorflow::Tensor& t = ctx->input(i);
      gradrt::TensorView v;
      OP_REQUIRES(ctx, to_gradrt(t.dtype(), &v.dtype),
                  absl::InvalidArgumentError(type_string() + ": unsupported dtype of '" + input_names_[i] + "'"));
      for (int d = 0; d < t.dims(); ++d) v.shape.push_back(t.dim_size(d));
      v.data = t.tensor_data().data();
      inputs[input_names_[i]] = std::move(v);
    }
    gradrt::RunOptions options;
    options.backend = "cpu";
    // TF's intra-op setting: the device's worker-thread count (what
    // tf.config.threading.set_intra_op_parallelism_threads sets).
    options.threads = ctx->device()->tensorflow_cpu_worker_threads()->num_threads;
    last_threads.store(options.threads, std::memory_order_relaxed);
    // gradrt writes each output straight into TF's output tensor (no copy, and no second
    // buffer), unless the dtype differs or the output is empty or TF's dummy scalar.
    std::vector<tensorflow::Tensor*> given(ctx->num_outputs(), nullptr);
    options.output_memory = [&](std::string_view name, gradrt::DType dtype, const std::vector<int64_t>& dims) -> void* {
      int i = 0;
      while (i < static_cast<int>(output_names_.size()) && output_names_[i] != name) ++i;
      gradrt::DType want;
      if (i >= ctx->num_outputs() || given[i] != nullptr || i == scalar_dummy_output_ ||
          !to_gradrt(ctx->expected_output_dtype(i), &want) || want != dtype)
        return nullptr;
      tensorflow::TensorShape shape;
      if (!tensorflow::TensorShape::BuildTensorShape(dims, &shape).ok() || shape.num_elements() == 0 ||
          !ctx->allocate_output(i, shape, &given[i]).ok())
        return nullptr;
      return const_cast<char*>(given[i]->tensor_data().data());
    };
    gradrt::Outputs outputs;
    gradrt::Status s = gradrt::run_op(type_string(), inputs, attrs_, &outputs, options);
    OP_REQUIRES(ctx, s.ok(), absl::Status(to_tf(s.code()), s.message()));
    OP_REQUIRES(ctx, static_cast<int>(outputs.size()) == ctx->num_outputs(),
                absl::InternalError(type_string() + ": gradrt returned " + std::to_string(outputs.size()) +
                                    " outputs, TensorFlow expects " + std::to_string(ctx->num_outputs())));
    for (int i = 0; i < ctx->num_outputs(); ++i) {
      const gradrt::Tensor& r = outputs[i].second;
      gradrt::DType want;
      OP_REQUIRES(ctx, to_gradrt(ctx->expected_output_dtype(i), &want) && want == r.dtype(),
                  absl::InternalError(type_string() + ": output '" + outputs[i].first + "' has dtype " +
                                      gradrt::dtype_name(r.dtype()) + ", TensorFlow expects " +
                                      tensorflow::DataTypeString(ctx->expected_output_dtype(i))));
      tensorflow::Tensor* out = nullptr;
      if (i == scalar_dummy_output_) {
        OP_REQUIRES_OK(ctx, ctx->allocate_output(i, tensorflow::TensorShape({}), &out));
        out->scalar<float>()() = 0.0f;
        continue;
      }
      tensorflow::TensorShape shape;
      OP_REQUIRES_OK(ctx, tensorflow::TensorShape::BuildTensorShape(r.shape(), &shape));
      if (given[i] != nullptr) {
        OP_REQUIRES(ctx, given[i]->shape() == shape,
                    absl::InternalError(type_string() + ": output '" + outputs[i].first + "' changed shape"));
        if (given[i]->tensor_data().data() == r.data()) continue;  // written in place
        out = given[i];
      } else {
        OP_REQUIRES_OK(ctx, ctx->allocate_output(i, shape, &out));
      }
      if (r.num_bytes() > 0) std::memcpy(const_cast<char*>(out->tensor_data().data()), r.data(), r.num_bytes());
    }
    if (counter_) counter_->fetch_add(1, std::memory_order_relaxed);
  }

 private:
  gradrt::Attrs attrs_;
  std::vector<std::string> input_names_, output_names_;
  std::atomic<long long>* counter_ = nullptr;
  int scalar_dummy_output_ = -1;
};

OpKernel* create(OpKernelConstruction* ctx) { return new GradrtOp(ctx); }

// Registers every (op, T) of op_table() when the library is loaded.
const bool registered = [] {
  for (const auto& e : op_table())
    for (DataType t : e.types) {
      tensorflow::KernelDefBuilder b(e.name);
      b.Device(tensorflow::DEVICE_CPU).TypeConstraint("T", t).Priority(1);
      tensorflow::kernel_factory::OpKernelRegistrar r(b.Build(), "GradrtOp", &create);
      (void)r;
    }
  return true;
}();

}  // namespace

// For gradrt_tf.kernel_calls() (through ctypes): "Name count\n" for every op that ran,
// into buf (cap bytes, NUL-terminated). Returns the length the whole text needs.
extern "C" __attribute__((visibility("default"))) int gradrt_tf_kernel_calls(char* buf, int cap) {
  std::string text;
  const auto& table = op_table();
  for (size_t i = 0; i < table.size(); ++i) {
    long long n = counters()[i].load(std::memory_order_relaxed);
    if (n > 0) text += std::string(table[i].name) + " " + std::to_string(n) + "\n";
  }
  if (cap > 0) {
    size_t k = std::min(text.size(), static_cast<size_t>(cap - 1));
    std::memcpy(buf, text.data(), k);
    buf[k] = '\0';
  }
  return static_cast<int>(text.size());
}

// Adds delta to op's counter (load()'s probe takes its own call back out); a null op resets all.
extern "C" __attribute__((visibility("default"))) void gradrt_tf_add_kernel_calls(const char* op, long long delta) {
  const auto& table = op_table();
  for (size_t i = 0; i < table.size(); ++i) {
    if (!op) counters()[i].store(0);
    else if (std::strcmp(op, table[i].name) == 0) counters()[i].fetch_add(delta);
  }
}

extern "C" __attribute__((visibility("default"))) int gradrt_tf_last_threads() { return last_threads.load(); }

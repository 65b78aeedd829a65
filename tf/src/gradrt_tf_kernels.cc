// gradrt's cpu kernels as TensorFlow CPU kernels: one OpKernel class for every gradrt op,
// which hands TF's tensors to gradrt::run_op by the op's own name and lets gradrt write the
// results into TF's output tensors. Registered with Priority(1), so they win over TF's
// default CPU kernels wherever TF looks one up (eager, tf.function, Keras, tf.distribute).
//
// oneDNN: where TF's oneDNN is on (its default on x86), its graph pass and its eager rewrite
// rename the gradient ops to `_MklNative<Op>` (plus `_MklNativeConv2DBackpropFilterWithBias`,
// the filter gradient fused with BiasAddGrad) and mark the node with the kernel label
// `MklNameChangeOp`; TF's oneDNN kernels are registered for those names with that label at
// priority 0. The same kernel class is registered for those names, that label and the same
// T values with priority 1, so it wins the lookup while every other op stays on oneDNN.
//
// This is the only translation unit that includes TensorFlow's headers (C++17, TF's ABI
// flags); gradrt is reached through its public header only.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "tensorflow/core/framework/kernel_def_builder.h"
#include "tensorflow/core/framework/op_kernel.h"
#include "tensorflow/core/platform/threadpool.h"

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

// The oneDNN forms of gradrt's ops that TF 2.21's rewrite makes (mkl_layout_pass.cc for graphs,
// mkl_eager_op_rewrite.cc for eager ops; both checked by listing the kernels a tf-keras step runs):
// TF's op name, gradrt's op, and whether the form also returns BiasAddGrad(out_backprop) as a second
// output (the graph pass fuses a Conv2DBackpropFilter with the BiasAddGrad of the same out_backprop).
// Inputs, outputs and attributes are those of gradrt's op. The forward forms (_MklNativeConv2D,
// _MklNativeFusedConv2D, _MklNativeFusedBatchNormV3/Ex, ...) stay oneDNN's: it fuses them with the
// bias and the activation, which gradrt's single ops cannot.
struct MklForm {
  const char* tf_name;
  const char* op;
  bool with_bias;
};
const std::vector<MklForm>& mkl_forms() {
  static const std::vector<MklForm> forms = {
      {"_MklNativeConv2DBackpropInput", "Conv2DBackpropInput", false},
      {"_MklNativeConv2DBackpropFilter", "Conv2DBackpropFilter", false},
      {"_MklNativeConv2DBackpropFilterWithBias", "Conv2DBackpropFilter", true},
      {"_MklNativeDepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropInput", false},
      {"_MklNativeDepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2dNativeBackpropFilter", false},
      {"_MklNativeFusedBatchNormGrad", "FusedBatchNormGrad", false},
      {"_MklNativeFusedBatchNormGradV2", "FusedBatchNormGradV2", false},
      {"_MklNativeFusedBatchNormGradV3", "FusedBatchNormGradV3", false},
  };
  return forms;
}
constexpr const char* kMklLabel = "MklNameChangeOp";

// One counter per TF op name a kernel is registered for: op_table()'s names, then mkl_forms()'.
// Read by gradrt_tf_kernel_calls().
std::atomic<long long>* counters() {
  static std::atomic<long long> c[64];
  return c;
}
const char* counter_name(size_t i) {
  const auto& table = op_table();
  if (i < table.size()) return table[i].name;
  i -= table.size();
  return i < mkl_forms().size() ? mkl_forms()[i].tf_name : nullptr;
}

// GRADRT_TF_POOL=gradrt: gradrt's parallel loops on its own pool, as before gradrt_tf lent them TF's
// (for A/B measurements); default (tf): TF's intra-op pool.
bool use_tf_pool() {
  static const bool tf_pool = [] {
    const char* v = std::getenv("GRADRT_TF_POOL");
    return v == nullptr || std::strcmp(v, "gradrt") != 0;
  }();
  return tf_pool;
}

// How gradrt's workers run on TF's intra-op pool (GRADRT_TF_SPLIT, for A/B measurements):
// - pool (default since session 13): every worker on a pool thread while the caller sleeps, as
//   TF's oneDNN threadpool adapter does, so that at 2 intra-op threads the caller, a working pool
//   thread and the pool's idle one are not three runnable threads on two CPUs. model.fit's step
//   at 2 threads, quiet host (bench/results_keras_step.txt run 10): geomean stock/gradrt 1.19x
//   and 1.21x against 1.16x and 1.15x with `caller`, every model ahead, same CPU time. From a
//   pool thread itself (it would block a worker that another worker may wait on) it falls back
//   to ParallelFor.
// - caller: ParallelFor with blocks of one worker: the calling thread (TF's inter-op thread)
//   runs worker 0 and the pool the others; the caller then waits for them.
// Workers claim the kernel's chunks from a shared counter (core/parallel.cpp), so the split
// changes who computes a chunk, never the chunks or their summation order: same bits.
bool split_on_pool() {
  static const bool pool = [] {
    const char* v = std::getenv("GRADRT_TF_SPLIT");
    return v == nullptr || std::strcmp(v, "caller") != 0;
  }();
  return pool;
}

std::function<void(int, const std::function<void(int)>&)> tf_pool_parallel(tensorflow::thread::ThreadPool* pool) {
  return [pool](int workers, const std::function<void(int)>& fn) {
    if (split_on_pool() && workers > 1 && pool->CurrentThreadId() < 0) {
      std::mutex m;
      std::condition_variable cv;
      int left = workers;
      for (int i = 0; i < workers; ++i)
        pool->Schedule([&, i] {
          fn(i);
          std::lock_guard<std::mutex> lock(m);
          if (--left == 0) cv.notify_one();
        });
      std::unique_lock<std::mutex> lock(m);
      cv.wait(lock, [&] { return left == 0; });
      return;
    }
    pool->ParallelFor(workers, [&fn](int64_t begin, int64_t end) {  // blocks of one worker
      for (int64_t i = begin; i < end; ++i) fn(static_cast<int>(i));
    });
  };
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

// BiasAddGrad of an NCHW dy [N, C, HW], the second output of _MklNativeConv2DBackpropFilterWithBias:
// each channel's sum over every position. A float sum per image and channel, then the images in order
// in double, so the result is the same for any thread count; images are spread over TF's intra-op pool.
template <typename T>
void bias_grad_nchw(const T* dy, int64_t n, int64_t c, int64_t hw, T* out, tensorflow::thread::ThreadPool* pool) {
  std::vector<double> partial(static_cast<size_t>(n * c), 0.0);
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      for (int64_t ch = 0; ch < c; ++ch) {
        const T* p = dy + (b * c + ch) * hw;
        float s = 0.0f;
        for (int64_t i = 0; i < hw; ++i) s += static_cast<float>(p[i]);
        partial[b * c + ch] = s;
      }
  };
  if (pool != nullptr && n > 1) pool->ParallelFor(n, run);  // an image per task
  else run(0, n);
  for (int64_t ch = 0; ch < c; ++ch) {
    double s = 0.0;
    for (int64_t b = 0; b < n; ++b) s += partial[b * c + ch];
    out[ch] = static_cast<T>(static_cast<float>(s));
  }
}

class GradrtOp : public OpKernel {
 public:
  explicit GradrtOp(OpKernelConstruction* ctx) : OpKernel(ctx), op_(type_string()) {
    for (size_t i = 0; counter_name(i) != nullptr; ++i)
      if (type_string() == counter_name(i)) counter_ = &counters()[i];
    for (const auto& f : mkl_forms())
      if (type_string() == f.tf_name) op_ = f.op, with_bias_ = f.with_bias;
    for (const auto& [name, value] : def().attr()) {
      if (name.empty() || name[0] == '_' || value.value_case() == tensorflow::AttrValue::kType) continue;
      gradrt::AttrValue a;
      OP_REQUIRES(ctx, to_attr(value, &a),
                  absl::InvalidArgumentError(type_string() + ": attribute '" + name + "' has an unsupported kind"));
      attrs_[name] = std::move(a);
    }
    for (const auto& info : gradrt::ops())
      if (info.name == op_) input_names_ = info.inputs, output_names_ = info.outputs;
    OP_REQUIRES(ctx, static_cast<int>(input_names_.size()) == ctx->num_inputs(),
                absl::InternalError(type_string() + ": gradrt and TensorFlow disagree on the inputs"));
    // FusedBatchNormV3's reserve_space_3 is a dummy: gradrt gives an empty tensor, TF's CPU kernel a
    // scalar 0. The plugin gives TF's, so graphs see the shape they always saw (no kernel reads it).
    if (op_ == "FusedBatchNormV3") scalar_dummy_output_ = 5;
    OP_REQUIRES(ctx, static_cast<int>(output_names_.size()) + (with_bias_ ? 1 : 0) == ctx->num_outputs(),
                absl::InternalError(type_string() + ": gradrt and TensorFlow disagree on the outputs"));
  }

  void Compute(OpKernelContext* ctx) override {
    // One call at a time uses the kernel's own inputs map and plans (TF may call Compute of one
    // node concurrently, e.g. two steps of a graph in flight: the second goes through run_op).
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    gradrt::Inputs local;
    gradrt::Inputs& inputs = lock.owns_lock() ? inputs_ : local;
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const tensorflow::Tensor& t = ctx->input(i);
      gradrt::TensorView& v = inputs[input_names_[i]];  // the names stay: shapes and data change
      OP_REQUIRES(ctx, to_gradrt(t.dtype(), &v.dtype),
                  absl::InvalidArgumentError(type_string() + ": unsupported dtype of '" + input_names_[i] + "'"));
      v.shape.resize(t.dims());
      for (int d = 0; d < t.dims(); ++d) v.shape[d] = t.dim_size(d);
      v.data = t.tensor_data().data();
    }
    gradrt::RunOptions options;
    options.backend = "cpu";
    // TF's intra-op setting: the device's worker-thread count (what
    // tf.config.threading.set_intra_op_parallelism_threads sets).
    const auto* threads = ctx->device()->tensorflow_cpu_worker_threads();
    options.threads = threads->num_threads;
    last_threads.store(options.threads, std::memory_order_relaxed);
    // gradrt's parallel loops run on that pool too, the threads TF's own and oneDNN's kernels use:
    // with gradrt's own pool, its helpers spin for a while after each gradrt op (they wait for the
    // next job) on the cores TF's next op needs, and TF's idle workers spin on gradrt's.
    if (use_tf_pool() && threads->workers != nullptr) {
      options.parallel = tf_pool_parallel(threads->workers);
    }
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
    gradrt::Status s;
    if (lock.owns_lock()) {
      gradrt::Plan* plan = nullptr;
      s = plan_for(ctx, inputs, options, &plan);
      OP_REQUIRES(ctx, s.ok(), absl::Status(to_tf(s.code()), s.message()));
      gradrt::PlanRunOptions run;
      run.output_memory = std::move(options.output_memory);
      run.parallel = std::move(options.parallel);
      s = plan->run(inputs, &outputs, run);
    } else {
      s = gradrt::run_op(op_, inputs, attrs_, &outputs, options);
    }
    OP_REQUIRES(ctx, s.ok(), absl::Status(to_tf(s.code()), s.message()));
    OP_REQUIRES(ctx, outputs.size() == output_names_.size(),
                absl::InternalError(type_string() + ": gradrt returned " + std::to_string(outputs.size()) +
                                    " outputs, TensorFlow expects " + std::to_string(output_names_.size())));
    for (int i = 0; i < static_cast<int>(outputs.size()); ++i) {
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
    if (with_bias_) compute_bias_grad(ctx, inputs.at("out_backprop"), threads, lock.owns_lock());
    if (counter_) counter_->fetch_add(1, std::memory_order_relaxed);
  }

 private:
  // The plan for this call's inputs: the kept one of the same signature, else a new one prepared
  // (it replaces the least recently used when kPlans are kept). prepare() is what run_op does on a
  // miss of its per-thread cache, whose 16 plans a Keras step's 20-60 gradient nodes cycle through.
  gradrt::Status plan_for(OpKernelContext* ctx, const gradrt::Inputs& inputs, const gradrt::RunOptions& options,
                          gradrt::Plan** out) {
    signature(ctx, options.threads, &key_);
    for (size_t i = 0; i < plans_.size(); ++i) {
      if (plans_[i].key != key_) continue;
      std::rotate(plans_.begin(), plans_.begin() + i, plans_.begin() + i + 1);
      *out = &plans_.front().plan;
      return gradrt::Status::OK();
    }
    Prepared p;
    p.key = key_;
    gradrt::RunOptions prep;
    prep.backend = options.backend;
    prep.threads = options.threads;
    gradrt::Status s = gradrt::prepare(op_, inputs, attrs_, &p.plan, prep);
    if (!s.ok()) return s;
    if (plans_.size() == kPlans) plans_.pop_back();
    plans_.insert(plans_.begin(), std::move(p));
    *out = &plans_.front().plan;
    return s;
  }

  // What a plan depends on besides the attributes (fixed per node): the thread count, and per input
  // its dtype and shape, plus the values of int32/int64 vectors (input_sizes, filter_sizes, pooling
  // sequences: values that decide shapes; the plan refuses a run with other ones).
  static void signature(OpKernelContext* ctx, int threads, std::vector<int64_t>* key) {
    key->clear();
    key->push_back(threads);
    for (int i = 0; i < ctx->num_inputs(); ++i) {
      const tensorflow::Tensor& t = ctx->input(i);
      key->push_back(t.dtype());
      key->push_back(t.dims());
      for (int d = 0; d < t.dims(); ++d) key->push_back(t.dim_size(d));
      if (t.dims() != 1) continue;
      const int64_t n = t.NumElements();
      if (t.dtype() == tensorflow::DT_INT32)
        for (int64_t j = 0; j < n; ++j) key->push_back(t.vec<int32_t>()(j));
      else if (t.dtype() == tensorflow::DT_INT64)
        for (int64_t j = 0; j < n; ++j) key->push_back(t.vec<int64_t>()(j));
    }
  }

  // The bias gradient output (index 1) of the WithBias form; gradrt has validated out_backprop
  // (input 2) as the filter gradient's, so it is 4-D. NHWC: gradrt's BiasAddGrad (its plan kept
  // like the filter gradient's when this call holds the kernel). NCHW: the channel sums below, over
  // each [HW] plane in place (gradrt's NCHW BiasAddGrad transposes dy first: ~0.3x, NOTES).
  void compute_bias_grad(OpKernelContext* ctx, const gradrt::TensorView& dy_view,
                         const tensorflow::DeviceBase::CpuWorkerThreads* threads, bool owns_kernel) {
    const tensorflow::Tensor& dy = ctx->input(2);
    const auto format = attrs_.find("data_format");
    const bool nchw = format != attrs_.end() && format->second.s == "NCHW";
    const int64_t n = dy.dim_size(0), c = dy.dim_size(nchw ? 1 : 3);
    const int64_t hw = dy.dim_size(nchw ? 2 : 1) * dy.dim_size(nchw ? 3 : 2);
    tensorflow::Tensor* out = nullptr;
    OP_REQUIRES_OK(ctx, ctx->allocate_output(1, tensorflow::TensorShape({c}), &out));
    if (!nchw) {
      gradrt::Inputs in{{"out_backprop", dy_view}};
      const gradrt::Attrs attrs{{"data_format", gradrt::AttrValue("NHWC")}};
      gradrt::RunOptions options;
      options.backend = "cpu";
      options.threads = threads->num_threads;
      if (use_tf_pool() && threads->workers != nullptr) {
        options.parallel = tf_pool_parallel(threads->workers);
      }
      void* memory = const_cast<char*>(out->tensor_data().data());
      options.output_memory = [memory](std::string_view, gradrt::DType, const std::vector<int64_t>&) { return memory; };
      gradrt::Outputs outputs;
      gradrt::Status s;
      if (owns_kernel) {
        const std::vector<int64_t> key = {options.threads, dy.dtype(), n, dy.dim_size(1), dy.dim_size(2), c};
        if (!bias_plan_.valid() || bias_key_ != key) {
          s = gradrt::prepare("BiasAddGrad", in, attrs, &bias_plan_, options);
          bias_key_ = s.ok() ? key : std::vector<int64_t>{};
        }
        if (s.ok()) {
          gradrt::PlanRunOptions run;
          run.output_memory = std::move(options.output_memory);
          run.parallel = std::move(options.parallel);
          s = bias_plan_.run(in, &outputs, run);
        }
      } else {
        s = gradrt::run_op("BiasAddGrad", in, attrs, &outputs, options);
      }
      OP_REQUIRES(ctx, s.ok(), absl::Status(to_tf(s.code()), s.message()));
      OP_REQUIRES(ctx, outputs.size() == 1 && outputs[0].second.num_bytes() == out->TotalBytes(),
                  absl::InternalError(type_string() + ": BiasAddGrad gave no output of " + std::to_string(c) +
                                      " channels"));
      if (outputs[0].second.data() != memory) std::memcpy(memory, outputs[0].second.data(), out->TotalBytes());
      return;
    }
    auto* pool = ctx->device()->tensorflow_cpu_worker_threads()->workers;
    switch (dy.dtype()) {
      case tensorflow::DT_FLOAT:
        return bias_grad_nchw(dy.flat<float>().data(), n, c, hw, out->flat<float>().data(), pool);
      case tensorflow::DT_HALF:
        return bias_grad_nchw(dy.flat<Eigen::half>().data(), n, c, hw, out->flat<Eigen::half>().data(), pool);
      case tensorflow::DT_BFLOAT16:
        return bias_grad_nchw(dy.flat<tensorflow::bfloat16>().data(), n, c, hw,
                              out->flat<tensorflow::bfloat16>().data(), pool);
      default:
        ctx->CtxFailure(absl::InternalError(type_string() + ": no bias gradient for this dtype"));
    }
  }

  std::string op_;  // gradrt's op: TF's op name, or the one a oneDNN form stands for
  bool with_bias_ = false;
  gradrt::Attrs attrs_;
  std::vector<std::string> input_names_, output_names_;
  std::atomic<long long>* counter_ = nullptr;
  int scalar_dummy_output_ = -1;

  struct Prepared {
    std::vector<int64_t> key;  // signature()
    gradrt::Plan plan;
  };
  static constexpr size_t kPlans = 4;
  std::mutex mu_;                 // held by a Compute call that uses the members below
  std::vector<Prepared> plans_;   // most recently used first
  std::vector<int64_t> key_;      // this call's signature
  gradrt::Plan bias_plan_;        // the WithBias form's NHWC BiasAddGrad, for bias_key_ (threads, dtype, dy's shape)
  std::vector<int64_t> bias_key_;
  gradrt::Inputs inputs_;         // this call's inputs (kept: its names and shape vectors)
};

OpKernel* create(OpKernelConstruction* ctx) { return new GradrtOp(ctx); }

void register_kernel(const char* name, DataType t, const char* label) {
  tensorflow::KernelDefBuilder b(name);
  b.Device(tensorflow::DEVICE_CPU).TypeConstraint("T", t).Priority(1);
  if (label != nullptr) b.Label(label);
  tensorflow::kernel_factory::OpKernelRegistrar r(b.Build(), "GradrtOp", &create);
  (void)r;
}

// The T values TF registered its oneDNN kernel of a form for (with the name-change label): the
// rewrite only makes a form for those, and a TF built without oneDNN registers none.
std::vector<DataType> onednn_types(const char* tf_name) {
  std::vector<DataType> types;
  const tensorflow::KernelList list = tensorflow::GetRegisteredKernelsForOp(tf_name);  // kept: kernel() refers into it
  for (const auto& k : list.kernel()) {
    if (k.device_type() != tensorflow::DEVICE_CPU || k.label() != kMklLabel) continue;
    for (const auto& c : k.constraint())
      if (c.name() == "T")
        for (int t : c.allowed_values().list().type()) types.push_back(static_cast<DataType>(t));
  }
  return types;
}

// Registers every (op, T) of op_table(), and every oneDNN form for the T values both TF's oneDNN
// kernel and gradrt's op take, when the library is loaded (TF's own kernels are registered by then).
const bool registered = [] {
  for (const auto& e : op_table())
    for (DataType t : e.types) register_kernel(e.name, t, nullptr);
  for (const auto& f : mkl_forms()) {
    const auto& ours = std::find_if(op_table().begin(), op_table().end(),
                                    [&](const OpEntry& e) { return std::strcmp(e.name, f.op) == 0; })->types;
    for (DataType t : onednn_types(f.tf_name))
      if (std::find(ours.begin(), ours.end(), t) != ours.end()) register_kernel(f.tf_name, t, kMklLabel);
  }
  return true;
}();

}  // namespace

// For gradrt_tf.kernel_calls() (through ctypes): "Name count\n" for every TF op name that ran
// (a oneDNN form under its own name, _MklNativeConv2DBackpropFilter ...),
// into buf (cap bytes, NUL-terminated). Returns the length the whole text needs.
extern "C" __attribute__((visibility("default"))) int gradrt_tf_kernel_calls(char* buf, int cap) {
  std::string text;
  for (size_t i = 0; counter_name(i) != nullptr; ++i) {
    long long n = counters()[i].load(std::memory_order_relaxed);
    if (n > 0) text += std::string(counter_name(i)) + " " + std::to_string(n) + "\n";
  }
  if (cap > 0) {
    size_t k = std::min(text.size(), static_cast<size_t>(cap - 1));
    std::memcpy(buf, text.data(), k);
    buf[k] = '\0';
  }
  return static_cast<int>(text.size());
}

// Adds delta to the counter of TF op name op (load()'s probes take their own calls back out); a null
// op resets all.
extern "C" __attribute__((visibility("default"))) void gradrt_tf_add_kernel_calls(const char* op, long long delta) {
  for (size_t i = 0; counter_name(i) != nullptr; ++i) {
    if (!op) counters()[i].store(0);
    else if (std::strcmp(op, counter_name(i)) == 0) counters()[i].fetch_add(delta);
  }
}

extern "C" __attribute__((visibility("default"))) int gradrt_tf_last_threads() { return last_threads.load(); }

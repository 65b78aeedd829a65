// What an op implementation (core/ops/<stem>.cpp) works with: its inputs, attributes,
// outputs and the dtype policy; load/output_buffer/store hand tensors to convert.h when
// they are not already in the compute form kernels expect (float or double, channels last).
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "attrs.h"
#include "backend.h"
#include "checked.h"
#include "convert.h"
#include "gradrt/gradrt.h"
#include "status_macros.h"

namespace gradrt {

// What prepare() records of an op (core/plan.cpp) and hands back to the context of a run.
// Scratch a plan keeps for its kernels between runs (Exec::workspace), grown to what a
// kernel's backend asks (Backend::workspace_size) before it runs.
class PlanWorkspace {
 public:
  Status reserve(size_t bytes);  // ResourceExhausted when it cannot grow
  Workspace view() const { return {data_.get(), bytes_}; }
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  size_t bytes_ = 0;
};

struct PreparedKernel {
  std::optional<Kernel> kernel;  // the kernel the op's deferred tail calls (none: no tail)
  Backend* backend = nullptr;    // where it runs
  size_t workspace_bytes = 0;    // what the backend asked for it
  std::string isa, tiles;        // the backend's description of its choice
};

class OpContext {
 public:
  // How the op function runs. kRun: at once (run_op before plans). kPrepare: up to its data
  // phase: outputs are recorded, not allocated, and defer() keeps the tail instead of running
  // it; with specs_only, inputs other than shape values need no data. kResume: a plan's run:
  // only the recorded tail runs (the checks and attributes were done at prepare).
  enum class Mode { kRun, kPrepare, kResume };
  using Tail = std::function<Status(OpContext&)>;

  OpContext(const OpInfo& info, const Inputs& inputs, const Attrs& attrs, const RunOptions& options,
            Outputs* outputs, Mode mode = Mode::kRun, bool specs_only = false);
  bool preparing() const { return mode_ == Mode::kPrepare; }
  // While preparing there is no tensor data (specs-only inputs, outputs not allocated): every
  // data accessor below (load, load_weights, output_buffer, store, input_data, output_data,
  // run_kernel) refuses instead of touching memory. It does nothing (pointers come back null),
  // records the refusal, and run_kernel returns it, so an op's data phase ends there. `refused()`
  // is that status (Internal, naming the op and the access); OK when nothing was refused.
  const Status& refused() const { return refused_; }
  // What prepare makes of the op function's status `s`: an op without a deferred tail that
  // stopped at a refused access reached its data phase (its plan runs the whole op each run):
  // OK. An op that deferred a tail must not touch data at prepare: the refusal is its status.
  Status end_prepare(Status s) const;

  // The op's data phase, after every check and add_output: kRun runs tail(*this) now;
  // kPrepare chooses the backend for kernel call `q` (Backend::supports) and keeps `tail`,
  // which Plan::run calls on the context of each run (it must fetch its inputs with input()
  // and its outputs with output(i), and capture nothing by reference). q.params is read
  // during this call only. op_bytes: scratch the tail itself takes with op_scratch (the plan's
  // workspace is sized for the kernel's and this, so a plan run allocates none).
  Status defer(const KernelQuery& q, Tail tail, size_t op_bytes = 0);
  // The name of input `t` (a pointer input() gave), for tails that fetch it again.
  const std::string& input_name(const TensorView* t) const;
  Tensor* output(size_t i) { return &(*outputs_)[i].second; }

  // What kPrepare recorded, for the plan; then what kResume restores.
  Tail take_tail() { return std::move(tail_); }
  const PreparedKernel& prepared() const { return prepared_; }
  const std::vector<std::pair<std::string, std::vector<int64_t>>>& values_read() const { return values_read_; }
  const std::vector<std::pair<std::string, TensorSpec>>& output_specs() const { return output_specs_; }
  DType round_state(bool* round_bf16) const { *round_bf16 = round_bf16_; return dtype_; }
  // plan_exec: the plan's kernel state and weights version (its workspace: use_workspace); weights: the plan's
  // slot for load_weights.
  void resume(const PreparedKernel& k, DType dtype, bool round_bf16, const Exec& plan_exec,
              std::unique_ptr<KernelState>* weights);

  const std::string& op() const { return op_; }
  const OpInfo& info() const { return info_; }  // the op's names of inputs and outputs (ops.inc)
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

  // Raw typed access for data that no conversion applies to (integer pooling, int64 sequences
  // written by the op): the tensor's memory, or nullptr with a refusal while preparing.
  template <class T>
  const T* input_data(const TensorView& t) const {
    return refuse("reads input data") ? nullptr : static_cast<const T*>(t.data);
  }
  template <class T>
  T* output_data(Tensor* t) {
    if (refuse("writes output data")) return nullptr;
    mark_written(t);
    return t->data_as<T>();
  }

  // An input as compute type T, channels last: the user's memory itself when it already
  // is, else converted into `storage`.
  // `typed`: the tensor has the op's dtype T (false for FusedBatchNorm's float32 U operands),
  // so T=bfloat16 rounding applies to it.
  template <class T>
  const T* load(const TensorView& t, int64_t n, Scratch<T>* storage, const ChannelsFirst* cf = nullptr,
                bool typed = true) const;
  // load() of a weights operand (a conv's filter): in a plan's run, a conversion is kept in
  // the plan and made again only when PlanRunOptions::weights_version or the address changed
  // (Exec::state_current); elsewhere the same as load().
  template <class T>
  const T* load_weights(const TensorView& t, int64_t n, Scratch<T>* storage);

  // Allocates an output of this dtype and shape; records it in the op's outputs. Its memory
  // is left as is: an output that nothing writes (output_buffer/store/mark_written) is
  // zeroed by finish(), which gives the "sum over nothing" results of policy 3.
  Status add_output(const char* name, DType dtype, std::vector<int64_t> shape, Tensor** out);
  void mark_written(const Tensor* t);
  // Where a kernel writes an output: the tensor itself when it is T and channels last,
  // else `storage`, which store() then converts into the tensor.
  template <class T>
  T* output_buffer(Tensor* out, Scratch<T>* storage, const ChannelsFirst* cf = nullptr, bool typed = true) const;
  template <class T>
  void store(const T* data, Tensor* out, const ChannelsFirst* cf = nullptr, bool typed = true) const;

  // Runs `call(Backend*)` on the backend chosen for `kernel` (of the list, kernels.h) at this
  // work estimate, which also caps the threads. `params` (the kernel's params struct) sizes
  // the scratch: ctx.exec().workspace then has what the backend asks for it. With
  // backend=auto, a device backend that lacks the kernel (Unimplemented) hands over to cpu.
  template <class F>
  Status run_kernel(Kernel kernel, int64_t work, const void* params, F call);
  // float16 storage (kernels.h GRADRT_F16_KERNELS): when the op's float tensors are float16 and
  // channels last, and the backend chosen for `kernel` runs its `_f16` form (Backend::f16_storage),
  // runs call(backend) as run_kernel would and sets *ran. call fetches its own pointers
  // (input_data / output_data: the tensors as they are). Otherwise, and when an `auto` call's
  // kernel answers Unimplemented, *ran stays false and nothing was touched: the caller widens
  // to float32 as before (and run_kernel's cpu fallback applies there).
  template <class F>
  Status run_f16(Kernel kernel, int64_t work, const void* params, bool channels_last, F call, bool* ran);
  // Where run_kernel grows the kernels' scratch (a plan's, kept between its runs); without
  // one, the context's own.
  void use_workspace(PlanWorkspace* ws) { ws_ = ws; }
  // Scratch of the op itself (not the kernel's), inside run_kernel's call: `bytes` of the same
  // workspace, after the kernel's part (at kernel bytes rounded up to 64; 64-aligned), so the
  // two never overlap (exec().workspace then ends there). Grows the workspace when defer's
  // op_bytes did not size it, which moves it: take this before copying exec(). Null (and
  // ResourceExhausted in *status) without memory.
  void* op_scratch(size_t bytes, Status* status);

  const Exec& exec() const { return exec_; }
  // RunOptions::backend as the caller asked ("auto", "cpu", "reference", ...).
  const std::string& backend_option() const { return options_.backend; }
  // Whether `kernel` with `work` goes to the cpu backend, as defer and run_kernel choose first: an
  // op whose cpu kernel takes a layout other backends do not (BatchNormParams::plane) asks.
  bool runs_on_cpu(Kernel kernel, int64_t work) {
    Backend* b = nullptr;
    return choose_backend(kernel, work, &b).ok() && b == cpu_backend();
  }
  const std::string& ran_on() const { return ran_on_; }
  void set_ran_on(std::string backend) { ran_on_ = std::move(backend); }
  Status finish();  // after a successful op: unknown attributes are refused

 private:
  // No kernel: the backend the call resolves to when nothing runs.
  // params (the kernel's params struct, or null) refine the thread count: set_threads.
  Status choose_backend(std::optional<Kernel> kernel, int64_t work, Backend** out, const void* params = nullptr);
  // exec_.threads for `kernel` on `backend`: the requested count, cut to what the work is worth
  // there (kernels.h's ns_per_work times the backend's thread_cost_scale for these params).
  void set_threads(Backend* backend, std::optional<Kernel> kernel, int64_t work, const void* params);
  // Grows the workspace to what `backend` asks for `kernel` with `params`; sets exec_.workspace.
  Status reserve_workspace(Backend* backend, Kernel kernel, int64_t work, const void* params);
  // True (and records refused_) while preparing: the caller must not touch tensor data.
  bool refuse(const char* what) const;
  mutable Status refused_;  // the first refused data access at prepare
  PlanWorkspace own_ws_;
  PlanWorkspace* ws_ = &own_ws_;
  // An Unimplemented status from a backend, prefixed with the op and the backend it ran on
  // (unless the message names the op already); other statuses as they are.
  Status named_unimplemented(Status s) const {
    if (s.code() == Code::Unimplemented && s.message().find(op_) == std::string::npos)
      s = Status(s.code(), op_ + " on backend " + ran_on_ + ": " + s.message());
    return s;
  }
  size_t kernel_ws_bytes_ = 0;  // what reserve_workspace's backend asked for the kernel about to run
  const OpInfo& info_;
  Mode mode_;
  bool specs_only_;
  Tail tail_;
  PreparedKernel prepared_;
  mutable std::vector<std::pair<std::string, std::vector<int64_t>>> values_read_;  // by int_vector, when preparing
  std::unique_ptr<KernelState>* weights_ = nullptr;  // a plan's converted weights (resume)
  std::vector<std::pair<std::string, TensorSpec>> output_specs_;  // add_output's, when preparing
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

// The weights in compute form, kept by a plan between runs.
template <class T>
struct ConvertedWeights : KernelState {
  std::vector<T> data;
};

template <class T>
constexpr DType dtype_of() {
  return std::is_same_v<T, float> ? DType::float32 : DType::float64;
}

template <class T>
const T* OpContext::load(const TensorView& t, int64_t n, Scratch<T>* storage, const ChannelsFirst* cf,
                         bool typed) const {
  if (refuse("reads input data")) return nullptr;
  // T=bfloat16 rounding applies to float compute only (float64 tensors never carry it).
  const bool round = std::is_same_v<T, float> && typed && round_bf16_ && t.dtype == DType::float32;
  if (!cf && !round && t.dtype == dtype_of<T>()) return static_cast<const T*>(t.data);
  T* dst = storage->allocate(n);
  convert_in<T>(exec_, t.data, t.dtype, n, cf, round, dst);
  return dst;
}

template <class T>
const T* OpContext::load_weights(const TensorView& t, int64_t n, Scratch<T>* storage) {
  if (refuse("reads weights data")) return nullptr;
  const bool round = std::is_same_v<T, float> && round_bf16_ && t.dtype == DType::float32;
  if (!weights_ || (!round && t.dtype == dtype_of<T>())) return load<T>(t, n, storage);
  Exec current = exec_;
  current.state = weights_;
  if (!*weights_) *weights_ = std::make_unique<ConvertedWeights<T>>();  // (T is fixed per plan)
  auto* kept = static_cast<ConvertedWeights<T>*>(weights_->get());
  if (!current.state_current(t.data)) {
    kept->data.resize(static_cast<size_t>(n));
    convert_in<T>(exec_, t.data, t.dtype, n, nullptr, round, kept->data.data());
    kept->weights = t.data;
    kept->version = exec_.weights_version;
  }
  return kept->data.data();
}

template <class T>
T* OpContext::output_buffer(Tensor* out, Scratch<T>* storage, const ChannelsFirst* cf, bool typed) const {
  if (refuse("writes output data")) return nullptr;
  bool round = typed && round_bf16_ && out->dtype() == DType::float32;
  if (!cf && !round && out->dtype() == dtype_of<T>()) {
    const_cast<OpContext*>(this)->mark_written(out);  // the kernel writes every element
    return out->data_as<T>();
  }
  return storage->allocate(out->num_elements());  // the kernel writes every element
}

template <class T>
void OpContext::store(const T* data, Tensor* out, const ChannelsFirst* cf, bool typed) const {
  if (refuse("stores output data")) return;
  const_cast<OpContext*>(this)->mark_written(out);
  if (data == out->data()) return;  // the kernel wrote in place
  const bool round = typed && round_bf16_ && out->dtype() == DType::float32;
  convert_out<T>(exec_, data, out->data(), out->dtype(), out->num_elements(), cf, round);
}

template <class F>
Status OpContext::run_kernel(Kernel kernel, int64_t work, const void* params, F call) {
  if (refuse("runs a kernel")) return refused_;  // (call is not made)
  Backend* backend = nullptr;
  GRADRT_RETURN_IF_ERROR(choose_backend(kernel, work, &backend, params));
  ran_on_ = backend->name();
  GRADRT_RETURN_IF_ERROR(reserve_workspace(backend, kernel, work, params));
  Status s = call(backend);
  if (s.code() == Code::Unimplemented && options_.backend == "auto" && backend != cpu_backend()) {
    ran_on_ = cpu_backend()->name();
    set_threads(cpu_backend(), kernel, work, params);
    GRADRT_RETURN_IF_ERROR(reserve_workspace(cpu_backend(), kernel, work, params));
    s = call(cpu_backend());
  }
  return named_unimplemented(std::move(s));
}

template <class F>
Status OpContext::run_f16(Kernel kernel, int64_t work, const void* params, bool channels_last, F call, bool* ran) {
  *ran = false;
  if (dtype_ != DType::float16 || !channels_last) return Status::OK();
  if (refuse("runs a kernel")) return refused_;
  Backend* backend = nullptr;
  GRADRT_RETURN_IF_ERROR(choose_backend(kernel, work, &backend, params));
  if (!backend->f16_storage(kernel)) return Status::OK();
  GRADRT_RETURN_IF_ERROR(reserve_workspace(backend, kernel, work, params));
  Status s = call(backend);
  if (s.code() == Code::Unimplemented && options_.backend == "auto") return Status::OK();
  *ran = true;
  ran_on_ = backend->name();
  return named_unimplemented(std::move(s));
}

}  // namespace gradrt

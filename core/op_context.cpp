#include "op_context.h"

#include <algorithm>
#include <string_view>

#include "backend_choice.h"
#include "parallel.h"
#include "status_macros.h"

namespace gradrt {

OpContext::OpContext(const OpInfo& info, const Inputs& inputs, const Attrs& attrs, const RunOptions& options,
                     Outputs* outputs, Mode mode, bool specs_only)
    : info_(info), mode_(mode), specs_only_(specs_only), op_(info.name), inputs_(inputs), attrs_(attrs, info.name),
      options_(options), outputs_(outputs) {
  exec_.threads = options.threads > 0 ? options.threads : default_threads();
  if (options_.parallel) exec_.parallel = &options_.parallel;
  // add_output hands out pointers into this vector: no reallocation may move them.
  outputs_->reserve(8);
}

Status OpContext::num_elements(const TensorView& t, const char* name, int64_t* out) const {
  return checked_num_elements(t.shape, op_ + ": input '" + name + "'", out);
}

Status OpContext::input(const char* name, const TensorView** out) {
  auto it = inputs_.find(name);
  if (it == inputs_.end()) return error(std::string("missing input '") + name + "'");
  int64_t n = 0;
  GRADRT_RETURN_IF_ERROR(num_elements(it->second, name, &n));
  if (n > 0 && it->second.data == nullptr && !specs_only_) return error(std::string("input '") + name + "' has no data");
  *out = &it->second;
  return Status::OK();
}

Status OpContext::int_vector(const TensorView& t, const char* name, std::vector<int64_t>* out) const {
  if (t.dtype != DType::int32 && t.dtype != DType::int64)
    return error(std::string("input '") + name + "' must be int32 or int64, got " + dtype_name(t.dtype));
  if (t.shape.size() != 1)
    return error(std::string("input '") + name + "' must be 1-dimensional, got rank " +
                 std::to_string(t.shape.size()) + " (shape " + shape_string(t.shape) + ")");
  // Bounded by the input itself: its element count was checked when it was fetched.
  const int64_t n = t.shape[0];
  if (n > 0 && t.data == nullptr)  // a spec without the values (prepare)
    return error(std::string("input '") + name + "' gives shape values: its spec must carry its data");
  out->resize(static_cast<size_t>(n));
  if (t.dtype == DType::int64) std::copy_n(static_cast<const int64_t*>(t.data), n, out->begin());
  else std::copy_n(static_cast<const int32_t*>(t.data), n, out->begin());
  if (preparing()) values_read_.emplace_back(name, *out);
  return Status::OK();
}

Status OpContext::resolve_dtype(const TensorView& t, const char* name, std::initializer_list<DType> allowed) {
  DType storage = t.dtype;
  DType semantic = t.dtype;  // what the op computes as
  if (const AttrValue* v = attrs_.raw("T")) {
    DType want;
    if (v->kind != AttrValue::Kind::String || !dtype_from_name(v->s, &want))
      return error("attribute 'T' must be a dtype name such as \"float32\" or \"bfloat16\"");
    if (want == DType::bfloat16 && t.dtype == DType::float32) {
      semantic = DType::bfloat16;
      round_bf16_ = true;
    } else if (want != t.dtype) {
      return error(std::string("attribute T=") + dtype_name(want) + " does not match input '" + name +
                   "' of dtype " + dtype_name(t.dtype));
    }
  }
  bool ok = false;
  std::string names;
  for (DType d : allowed) {
    ok = ok || d == semantic;
    names += std::string(names.empty() ? "" : ", ") + dtype_name(d);
  }
  if (!ok)
    return error(std::string("input '") + name + "' has dtype " + dtype_name(semantic) + "; this op takes " + names);
  dtype_ = storage;
  return Status::OK();
}

Status OpContext::expect_dtype(const TensorView& t, const char* name, DType want) const {
  if (t.dtype == want) return Status::OK();
  return error(std::string("input '") + name + "' must have dtype " + dtype_name(want) + ", got " +
               dtype_name(t.dtype));
}

Status OpContext::add_output(const char* name, DType dtype, std::vector<int64_t> shape, Tensor** out) {
  // WASM: the op's largest input, which the output is placed away from (see Tensor::allocate;
  // native builds ignore the hint, so they skip the search).
  const void* largest = nullptr;
#if defined(__EMSCRIPTEN__)
  int64_t most = 0;
  for (const auto& [in_name, view] : inputs_) {
    int64_t n = 0;
    if (view.data != nullptr && checked_num_elements(view.shape, "", &n).ok() && n > most) {
      most = n;
      largest = view.data;
    }
  }
#endif
  Tensor t;
  Status s = Tensor::adopt(dtype, shape, nullptr, &t);  // the checks alone
  if (preparing()) {  // recorded (the plan allocates at each run); the tensor stays empty
    if (!s.ok()) return Status(s.code(), op_ + ": output '" + name + "': " + s.message());
    output_specs_.push_back({name, {dtype, std::move(shape)}});
    outputs_->emplace_back(name, std::move(t));
    *out = &outputs_->back().second;
    return Status::OK();
  }
  void* given = nullptr;
  if (s.ok() && options_.output_memory) given = options_.output_memory(name, dtype, shape);
  // Kernels may use aligned (e.g. non-temporal) stores: memory under 64-byte alignment is not taken.
  if (s.ok()) {
    s = given != nullptr && reinterpret_cast<uintptr_t>(given) % 64 == 0
            ? Tensor::adopt(dtype, std::move(shape), given, &t)
            : Tensor::allocate(dtype, std::move(shape), &t, largest);
  }
  if (!s.ok()) return Status(s.code(), op_ + ": output '" + name + "': " + s.message());
  outputs_->emplace_back(name, std::move(t));
  *out = &outputs_->back().second;
  unwritten_.push_back(*out);
  return Status::OK();
}

void OpContext::mark_written(const Tensor* t) {
  unwritten_.erase(std::remove(unwritten_.begin(), unwritten_.end(), t), unwritten_.end());
}

Status OpContext::choose_backend(std::optional<Kernel> kernel, int64_t work, Backend** out, const void* params) {
  if (options_.threads < 0) return Status(Code::InvalidArgument, "threads must be >= 0, got " + std::to_string(options_.threads));
  if (kernel && prepared_.backend && prepared_.kernel == *kernel) *out = prepared_.backend;  // chosen at prepare
  else GRADRT_RETURN_IF_ERROR(backend_for(options_.backend, kernel, work, out));
  set_threads(*out, kernel, work, params);
  return Status::OK();
}

void OpContext::set_threads(Backend* backend, std::optional<Kernel> kernel, int64_t work, const void* params) {
  // The kernel about to run gets no more threads than its work is worth on `backend` (results do
  // not depend on the count). Recomputed from the request, so a second call does not compound.
  const int requested = options_.threads > 0 ? options_.threads : default_threads();
  const double per = kernel ? kernel_info(*kernel).ns_per_work : -1;
  double scale = 1.0;
  if (kernel && params)
    scale = backend->thread_cost_scale({*kernel, compute_double() ? DType::float64 : DType::float32, params, work});
  exec_.threads = threads_for_work(requested, per < 0 ? -1.0 : per * scale * static_cast<double>(work));
}

namespace {
// Where an op's own scratch starts in a workspace whose first `kernel` bytes are the kernel's.
size_t op_scratch_offset(size_t kernel) { return (kernel + 63) / 64 * 64; }
}  // namespace

Status OpContext::defer(const KernelQuery& q, Tail tail, size_t op_bytes) {
  if (!preparing()) return tail(*this);
  // The backend as run_kernel would choose it, but asked first whether it takes the call: an
  // `auto` device backend that does not is replaced by cpu here, not after an Unimplemented run.
  Backend* b = nullptr;
  GRADRT_RETURN_IF_ERROR(choose_backend(q.kernel, q.work, &b, q.params));
  Status s = b->supports(q);
  if (!s.ok() && options_.backend == "auto" && b != cpu_backend()) {
    b = cpu_backend();
    s = b->supports(q);
    set_threads(b, q.kernel, q.work, q.params);  // the count a run on cpu gets
  }
  if (!s.ok() && s.message().find(op_) == std::string::npos)
    return Status(s.code(), op_ + " on backend " + b->name() + ": " + s.message());
  GRADRT_RETURN_IF_ERROR(s);
  KernelQuery sized = q;
  sized.threads = exec_.threads;  // what choose_backend gave this kernel (a run gives the same)
  const size_t kernel_bytes = b->workspace_size(sized);
  prepared_ = {q.kernel, b, op_bytes ? op_scratch_offset(kernel_bytes) + op_bytes : kernel_bytes, b->isa_for(q),
               b->tiles_for(q)};
  tail_ = std::move(tail);
  return Status::OK();
}

bool OpContext::refuse(const char* what) const {
  if (!preparing()) return false;
  if (refused_.ok())
    refused_ = Status(Code::Internal, op_ + ": " + what + " while preparing (a prepare has no tensor data: " +
                                          "the data phase belongs in a deferred tail or in the plan's run)");
  return true;
}

Status OpContext::end_prepare(Status s) const {
  if (refused_.ok() || tail_) return s.ok() && !refused_.ok() ? refused_ : s;
  // No tail: the refused access was the op's data phase (its error, if it returned one, is it).
  return s.ok() || s.message() == refused_.message() ? Status::OK() : s;
}

Status PlanWorkspace::reserve(size_t bytes) {
  if (bytes <= bytes_) return Status::OK();
  const size_t size = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, size);
  if (!p) return Status(Code::ResourceExhausted, "workspace of " + std::to_string(bytes) + " bytes");
  data_.reset(p);
  bytes_ = size;
  return Status::OK();
}

Status OpContext::reserve_workspace(Backend* backend, Kernel kernel, int64_t work, const void* params) {
  kernel_ws_bytes_ = 0;
  if (params) {
    KernelQuery q{kernel, compute_double() ? DType::float64 : DType::float32, params, work, 0, exec_.threads};
    kernel_ws_bytes_ = backend->workspace_size(q);
    Status s = ws_->reserve(kernel_ws_bytes_);
    if (!s.ok()) return Status(s.code(), op_ + ": " + s.message());
  }
  exec_.workspace = ws_->view();
  return Status::OK();
}

void* OpContext::op_scratch(size_t bytes, Status* status) {
  const size_t offset = op_scratch_offset(kernel_ws_bytes_);
  *status = ws_->reserve(offset + bytes);  // no growth when the plan was sized for it
  if (!status->ok()) {
    *status = Status(status->code(), op_ + ": " + status->message());
    return nullptr;
  }
  // The kernel's view ends where the op's scratch begins: a kernel that took more than it
  // asked for would fall back to memory of its own (counted), never write into the op's part.
  exec_.workspace = {ws_->view().data, offset};
  return static_cast<char*>(exec_.workspace.data) + offset;
}

const std::string& OpContext::input_name(const TensorView* t) const {
  for (const auto& [name, view] : inputs_)
    if (&view == t) return name;
  static const std::string none;
  return none;
}

void OpContext::resume(const PreparedKernel& k, DType dtype, bool round_bf16, const Exec& plan_exec,
                       std::unique_ptr<KernelState>* weights) {
  weights_ = weights;
  prepared_ = k;
  dtype_ = dtype;
  round_bf16_ = round_bf16;
  exec_.state = plan_exec.state;
  exec_.weights_version = plan_exec.weights_version;
}

Status OpContext::finish() {
  if (preparing()) return attrs_.check_unknown();
  for (const Tensor* t : unwritten_)
    if (t->num_bytes()) std::memset(const_cast<Tensor*>(t)->data(), 0, t->num_bytes());
  unwritten_.clear();
  const bool resumed = mode_ == Mode::kResume;  // the attributes were checked at prepare
  if (!ran_on_.empty()) return resumed ? Status::OK() : attrs_.check_unknown();
  // No kernel ran (empty result): still report which backend the call resolved to.
  Backend* b = nullptr;
  GRADRT_RETURN_IF_ERROR(choose_backend(std::nullopt, 0, &b));
  ran_on_ = b->name();
  return resumed ? Status::OK() : attrs_.check_unknown();
}

}  // namespace gradrt

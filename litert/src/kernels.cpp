#include "kernels.h"

#include <climits>
#include <cstring>

#include "checked.h"
#include "registry.h"
#include "status_macros.h"

namespace gradrt::litert {

namespace {

// One counter per op of gradrt's table, created once.
std::vector<std::atomic<long long>>& counters() {
  static std::vector<std::atomic<long long>> c(ops().size());
  return c;
}

// A locked LiteRT tensor buffer: its type, shape and host pointer; unlocked on destruction.
struct Locked {
  const Api* api = nullptr;
  LiteRtTensorBuffer buffer = nullptr;
  void* data = nullptr;
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  int64_t elements = 1;
  Locked() = default;
  Locked(const Locked&) = delete;
  ~Locked() {
    if (data) api->LiteRtUnlockTensorBuffer(buffer);
  }
  Status lock(const Api* a, LiteRtTensorBuffer b, int mode, const std::string& what) {
    api = a;
    buffer = b;
    LiteRtRankedTensorType type;
    if (a->LiteRtGetTensorBufferTensorType(b, &type) != kLiteRtStatusOk)
      return Status(Code::Internal, what + ": LiteRtGetTensorBufferTensorType failed");
    if (!dtype_from_litert(type.element_type, &dtype))
      return Status(Code::InvalidArgument, what + ": LiteRT element type " + std::to_string(type.element_type) +
                                               " is not a dtype gradrt computes");
    for (unsigned d = 0; d < type.layout.rank && d < kLiteRtTensorMaxRank; ++d) shape.push_back(type.layout.dimensions[d]);
    GRADRT_RETURN_IF_ERROR(checked_num_elements(shape, what, &elements));
    void* p = nullptr;
    if (a->LiteRtLockTensorBuffer(b, &p, mode) != kLiteRtStatusOk || (!p && elements > 0))
      return Status(Code::Internal, what + ": LiteRtLockTensorBuffer failed");
    data = p;
    return Status::OK();
  }
};

extern "C" {
LiteRtStatus kernel_init(void*, const void*, size_t) { return kLiteRtStatusOk; }
LiteRtStatus kernel_destroy(void*) { return kLiteRtStatusOk; }  // the KernelSet owns the state

LiteRtStatus kernel_output_layouts(void* user_data, size_t, const LiteRtLayout*, size_t num_outputs,
                                   LiteRtLayout* layouts) {
  auto* k = static_cast<NodeKernel*>(user_data);
  if (num_outputs != k->output_shapes.size()) {
    k->set->record(Status(Code::Internal, k->node.name + ": LiteRT asks for " + std::to_string(num_outputs) +
                                              " output layouts, the model has " + std::to_string(k->output_shapes.size())));
    return kLiteRtStatusErrorInvalidArgument;
  }
  for (size_t i = 0; i < num_outputs; ++i) {
    std::memset(&layouts[i], 0, sizeof(LiteRtLayout));
    const auto& s = k->output_shapes[i];
    layouts[i].rank = static_cast<unsigned>(s.size());
    for (size_t d = 0; d < s.size(); ++d) layouts[i].dimensions[d] = static_cast<int32_t>(s[d]);
  }
  return kLiteRtStatusOk;
}

LiteRtStatus kernel_run(void* user_data, size_t num_inputs, const LiteRtTensorBuffer* inputs, size_t num_outputs,
                        LiteRtTensorBuffer* outputs) {
  auto* k = static_cast<NodeKernel*>(user_data);
  Status s = k->run(num_inputs, inputs, num_outputs, outputs);
  if (!s.ok()) {
    k->set->record(Status(s.code(), s.message() + " (LiteRT node " + k->node.name + ")"));
    return kLiteRtStatusErrorRuntimeFailure;
  }
  if (k->counter) k->counter->fetch_add(1, std::memory_order_relaxed);
  return kLiteRtStatusOk;
}
}  // extern "C"

const LiteRtCustomOpKernel kKernel = {kernel_init, kernel_output_layouts, kernel_run, kernel_destroy};

}  // namespace

bool dtype_from_litert(int element_type, DType* out) {
  switch (element_type) {
    case kLiteRtElementTypeFloat32: *out = DType::float32; return true;
    case kLiteRtElementTypeFloat16: *out = DType::float16; return true;
    case kLiteRtElementTypeFloat64: *out = DType::float64; return true;
    case kLiteRtElementTypeBFloat16: *out = DType::bfloat16; return true;
    case kLiteRtElementTypeInt32: *out = DType::int32; return true;
    case kLiteRtElementTypeInt64: *out = DType::int64; return true;
    default: return false;
  }
}

int litert_element_type(int t) {
  // file TensorType:      FLOAT32 0, FLOAT16 1, INT32 2, UINT8 3, INT64 4, BOOL 6, INT16 7, INT8 9, FLOAT64 10, BFLOAT16 18
  static const int map[] = {kLiteRtElementTypeFloat32, kLiteRtElementTypeFloat16, kLiteRtElementTypeInt32,
                            kLiteRtElementTypeUInt8,   kLiteRtElementTypeInt64,   0,
                            kLiteRtElementTypeBool,    kLiteRtElementTypeInt16,   0,
                            kLiteRtElementTypeInt8,    kLiteRtElementTypeFloat64};
  if (t >= 0 && t < static_cast<int>(sizeof map / sizeof map[0])) return map[t];
  return t == 18 ? kLiteRtElementTypeBFloat16 : 0;
}

Status NodeKernel::run(size_t num_inputs, const LiteRtTensorBuffer* in, size_t num_outputs, LiteRtTensorBuffer* out) {
  const Api* api = set->api();
  if (num_inputs != info->inputs.size() || num_outputs != info->outputs.size())
    return Status(Code::InvalidArgument, node.tf_op + ": the node has " + std::to_string(num_inputs) + " inputs and " +
                                             std::to_string(num_outputs) + " outputs, gradrt's op " +
                                             std::to_string(info->inputs.size()) + " and " +
                                             std::to_string(info->outputs.size()));
  std::vector<Locked> ins(num_inputs), outs(num_outputs);
  Inputs inputs;
  for (size_t i = 0; i < num_inputs; ++i) {
    GRADRT_RETURN_IF_ERROR(ins[i].lock(api, in[i], kLiteRtTensorBufferLockModeRead, node.tf_op + " input '" + info->inputs[i] + "'"));
    inputs[info->inputs[i]] = TensorView{ins[i].dtype, ins[i].shape, ins[i].data};
  }
  for (size_t i = 0; i < num_outputs; ++i)
    GRADRT_RETURN_IF_ERROR(outs[i].lock(api, out[i], kLiteRtTensorBufferLockModeWrite, node.tf_op + " output '" + info->outputs[i] + "'"));
  RunOptions options;
  options.backend = "cpu";
  options.threads = set->threads();
  // gradrt writes an output straight into LiteRT's tensor when dtype and element count agree.
  options.output_memory = [&](std::string_view name, DType dtype, const std::vector<int64_t>& shape) -> void* {
    for (size_t i = 0; i < num_outputs; ++i) {
      if (info->outputs[i] != name) continue;
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      return (dtype == outs[i].dtype && n == outs[i].elements && n > 0) ? outs[i].data : nullptr;
    }
    return nullptr;
  };
  Outputs results;
  GRADRT_RETURN_IF_ERROR(run_op(node.tf_op, inputs, node.attrs, &results, options));
  if (results.size() != num_outputs)
    return Status(Code::Internal, node.tf_op + ": gradrt returned " + std::to_string(results.size()) + " outputs, the node has " +
                                      std::to_string(num_outputs));
  for (size_t i = 0; i < num_outputs; ++i) {
    const Tensor& r = results[i].second;
    const size_t bytes = static_cast<size_t>(outs[i].elements) * dtype_size(outs[i].dtype);
    if (r.data() == outs[i].data && r.num_bytes() > 0) continue;  // written in place
    if (r.dtype() == outs[i].dtype && r.num_bytes() == bytes) {
      if (bytes) std::memcpy(outs[i].data, r.data(), bytes);
    } else if (r.num_elements() == 0) {
      // An output gradrt leaves empty (e.g. FusedBatchNormV3's reserve_space_3) that the model
      // gives a shape (or that got [1] instead of a zero-byte tensor): zeros.
      if (bytes) std::memset(outs[i].data, 0, bytes);
    } else {
      return Status(Code::Internal, node.tf_op + ": output '" + results[i].first + "' is " + dtype_name(r.dtype()) +
                                        shape_string(r.shape()) + ", the model's tensor " + dtype_name(outs[i].dtype) +
                                        shape_string(outs[i].shape));
    }
  }
  return Status::OK();
}

void KernelSet::record(const Status& s) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_.ok()) error_ = s;
}

Status KernelSet::take_error() {
  std::lock_guard<std::mutex> lock(mutex_);
  Status s = error_;
  error_ = Status::OK();
  return s;
}

Status KernelSet::create(const Api* api, LiteRtOptions options, const Model& model, const ModelPlan& plan, int threads,
                         std::unique_ptr<KernelSet>* out) {
  if (!plan.prepared())
    return Status(Code::InvalidArgument, "model: not prepared (call gradrt_litert_prepare first): " +
                                             std::to_string(plan.renames.size()) + " node(s) without their own operator code, " +
                                             std::to_string(plan.misaligned.size()) + " unaligned buffer(s)");
  auto set = std::make_unique<KernelSet>();
  set->api_ = api;
  set->threads_ = threads;
  const auto& table = ops();
  for (const GradrtNode& n : plan.nodes) {
    auto k = std::make_unique<NodeKernel>();
    k->set = set.get();
    k->node = n;
    k->info = find_op(n.tf_op);
    for (size_t i = 0; i < table.size(); ++i)  // (find_op's entry is not an element of ops())
      if (table[i].name == n.tf_op) k->counter = &counters()[i];
    const ModelSubgraph& g = model.subgraphs[n.subgraph];
    for (int32_t t : g.operators[n.index].outputs) {
      std::vector<int64_t> shape = t >= 0 ? g.tensors[static_cast<size_t>(t)].shape : std::vector<int64_t>{};
      int64_t elements = 1;
      bool overflow = false;
      for (int64_t d : shape) overflow |= d > INT32_MAX || mul_overflows(elements, std::max<int64_t>(d, 0), &elements);
      if (shape.size() > kLiteRtTensorMaxRank || overflow)
        return Status(Code::InvalidArgument, n.name + ": an output of shape " + shape_string(shape) + " (LiteRT: rank <= 8, int32 sizes)");
      if (elements == 0) shape = {1};
      k->output_shapes.push_back(std::move(shape));
    }
    // TF's shape function gives FractionalAvgPool's row/col pooling sequences the output's
    // [rows] / [cols], and the converter writes that, but the kernel returns the rows + 1 (cols
    // + 1) cell boundaries: take them from the pooled output's static shape [N, rows, cols, C].
    auto& out = k->output_shapes;
    if (n.tf_op == "FractionalAvgPool" && out.size() == 3 && out[0].size() == 4) {
      out[1] = {out[0][1] + 1};
      out[2] = {out[0][2] + 1};
    }
    if (api->LiteRtAddCustomOpKernelOption(options, k->node.name.c_str(), n.version, &kKernel, k.get()) != kLiteRtStatusOk)
      return Status(Code::Internal, "LiteRtAddCustomOpKernelOption failed for " + n.name);
    set->kernels_.push_back(std::move(k));
  }
  *out = std::move(set);
  return Status::OK();
}

std::string kernel_calls_text() {
  std::string text;
  const auto& table = ops();
  for (size_t i = 0; i < table.size(); ++i) {
    const long long n = counters()[i].load(std::memory_order_relaxed);
    if (n > 0) text += table[i].name + " " + std::to_string(n) + "\n";
  }
  return text;
}

void reset_kernel_calls() {
  for (auto& c : counters()) c.store(0);
}

}  // namespace gradrt::litert

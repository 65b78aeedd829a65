#include "runner.h"

#include <cstdlib>
#include <cstring>

#include "checked.h"
#include "status_macros.h"

namespace gradrt::litert {

void AlignedBytes::Free::operator()(void* p) const { std::free(p); }

Status AlignedBytes::allocate(size_t size, AlignedBytes* out) {
  // At least one block, rounded up to the alignment (aligned_alloc's rule).
  const size_t rounded = (std::max<size_t>(size, 1) + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
  void* p = rounded < size ? nullptr : std::aligned_alloc(kBufferAlignment, rounded);
  if (!p) return Status(Code::ResourceExhausted, "cannot allocate " + std::to_string(size) + " bytes");
  std::memset(p, 0, rounded);
  out->data.reset(static_cast<uint8_t*>(p));
  out->size = size;
  return Status::OK();
}

namespace {
Status litert_call(LiteRtStatus s, const char* what) {
  if (s == kLiteRtStatusOk) return Status::OK();
  return Status(Code::Internal, std::string(what) + " failed (LiteRtStatus " + std::to_string(s) + ")");
}

// A signature input/output's info from the model's tensor (static shape and type).
Status io_info(const ModelTensor& t, const std::string& name, gradrt_litert_tensor_info* info) {
  info->dtype = tensor_type_name(t.type);
  info->tflite_type = t.type;
  const size_t elem = tensor_type_size(t.type);
  if (!info->dtype || elem == 0 || litert_element_type(t.type) == 0)
    return Status(Code::Unimplemented, "signature tensor '" + name + "' has TFLite type " + std::to_string(t.type) +
                                           ", which the runner does not bind");
  if (t.shape.size() > 8) return Status(Code::InvalidArgument, "signature tensor '" + name + "' has rank > 8");
  info->rank = static_cast<int>(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) info->shape[d] = t.shape[d];
  int64_t n;
  GRADRT_RETURN_IF_ERROR(checked_num_elements(t.shape, "signature tensor '" + name + "'", &n));
  int64_t bytes;
  if (mul_overflows(n, static_cast<int64_t>(elem), &bytes)) return Status(Code::InvalidArgument, "signature tensor '" + name + "' is too large");
  info->bytes = static_cast<size_t>(bytes);
  return Status::OK();
}
}  // namespace

Status Runner::create(const void* prepared, size_t size, const char* library, int threads, std::unique_ptr<Runner>* out) {
  if (!prepared && size) return Status(Code::InvalidArgument, "model: null with size " + std::to_string(size));
  if (threads < 0) return Status(Code::InvalidArgument, "threads must be >= 0, got " + std::to_string(threads));
  auto r = std::unique_ptr<Runner>(new Runner());
  GRADRT_RETURN_IF_ERROR(load_api(library, &r->api_));
  // The runner's own 64-byte aligned copy: buffer alignment is relative to the model's first byte.
  GRADRT_RETURN_IF_ERROR(AlignedBytes::allocate(size, &r->bytes_));
  if (size) std::memcpy(r->bytes_.data.get(), prepared, size);
  GRADRT_RETURN_IF_ERROR(read_model({r->bytes_.data.get(), size}, &r->model_));
  GRADRT_RETURN_IF_ERROR(make_plan(r->model_, &r->plan_));
  if (!r->plan_.unsupported.empty()) return Status(Code::NotFound, unsupported_message(r->plan_));
  const Api* api = r->api_;
  GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtCreateEnvironment(0, nullptr, &r->env_), "LiteRtCreateEnvironment"));
  GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtCreateOptions(&r->options_), "LiteRtCreateOptions"));
  GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtSetOptionsHardwareAccelerators(r->options_, kLiteRtHwAcceleratorCpu),
                                     "LiteRtSetOptionsHardwareAccelerators"));
  GRADRT_RETURN_IF_ERROR(KernelSet::create(api, r->options_, r->model_, r->plan_, threads, &r->kernels_));
  GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtCreateModelFromBuffer(r->env_, r->bytes_.data.get(), size, &r->lmodel_),
                                     "LiteRtCreateModelFromBuffer"));
  Status s = litert_call(api->LiteRtCreateCompiledModel(r->env_, r->lmodel_, r->options_, &r->compiled_), "LiteRtCreateCompiledModel");
  Status k = r->kernels_->take_error();  // a kernel's GetOutputLayouts may have failed during compilation
  GRADRT_RETURN_IF_ERROR(k);
  GRADRT_RETURN_IF_ERROR(s);
  GRADRT_RETURN_IF_ERROR(r->open_signatures());
  *out = std::move(r);
  return Status::OK();
}

// Signatures in LiteRT's order, their tensors by name from the model's SignatureDefs.
Status Runner::open_signatures() {
  const Api* api = api_;
  LiteRtParamIndex n = 0;
  GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtGetNumModelSignatures(lmodel_, &n), "LiteRtGetNumModelSignatures"));
  sigs_.resize(n);
  for (LiteRtParamIndex i = 0; i < n; ++i) {
    LiteRtSignature sig;
    const char* key = nullptr;
    GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtGetModelSignature(lmodel_, i, &sig), "LiteRtGetModelSignature"));
    GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtGetSignatureKey(sig, &key), "LiteRtGetSignatureKey"));
    SignatureRun& run = sigs_[i];
    run.key = key ? key : "";
    const ModelSignature* def = nullptr;
    for (const ModelSignature& m : model_.signatures)
      if (m.key == run.key) def = &m;
    if (!def) return Status(Code::Unimplemented, "signature '" + run.key + "' has no SignatureDef in the model");
    for (int io = 0; io < 2; ++io) {
      LiteRtParamIndex count = 0;
      GRADRT_RETURN_IF_ERROR(litert_call(io == 0 ? api->LiteRtGetNumSignatureInputs(sig, &count)
                                                 : api->LiteRtGetNumSignatureOutputs(sig, &count), "LiteRtGetNumSignature*"));
      auto& list = io == 0 ? run.inputs : run.outputs;
      list.resize(count);
      for (LiteRtParamIndex j = 0; j < count; ++j) {
        IoTensor& t = list[j];
        const char* name = nullptr;
        GRADRT_RETURN_IF_ERROR(litert_call(io == 0 ? api->LiteRtGetSignatureInputName(sig, j, &name)
                                                   : api->LiteRtGetSignatureOutputName(sig, j, &name), "LiteRtGetSignature*Name"));
        t.name = name ? name : "";
        const auto& maps = io == 0 ? def->inputs : def->outputs;
        const ModelTensor* mt = nullptr;
        for (const auto& [mname, index] : maps)
          if (mname == t.name) mt = &model_.subgraphs[def->subgraph].tensors[index];
        if (!mt) return Status(Code::Unimplemented, "signature '" + run.key + "': no tensor named '" + t.name + "'");
        GRADRT_RETURN_IF_ERROR(io_info(*mt, t.name, &t.info));
        t.info.name = t.name.c_str();
        GRADRT_RETURN_IF_ERROR(AlignedBytes::allocate(t.info.bytes, &t.host));
        LiteRtRankedTensorType type;
        std::memset(&type, 0, sizeof type);
        type.element_type = litert_element_type(t.info.tflite_type);
        type.layout.rank = static_cast<unsigned>(t.info.rank);
        for (int d = 0; d < t.info.rank; ++d) type.layout.dimensions[d] = static_cast<int32_t>(t.info.shape[d]);
        GRADRT_RETURN_IF_ERROR(litert_call(api->LiteRtCreateTensorBufferFromHostMemory(
                                               &type, t.host.data.get(), t.info.bytes, nullptr, &t.buffer),
                                           "LiteRtCreateTensorBufferFromHostMemory"));
      }
    }
  }
  return Status::OK();
}

Status Runner::find(const char* key, const SignatureRun** out) const {
  for (const SignatureRun& s : sigs_)
    if (key && s.key == key) {
      *out = &s;
      return Status::OK();
    }
  std::string known;
  for (const SignatureRun& s : sigs_) known += (known.empty() ? "" : ", ") + s.key;
  return Status(Code::NotFound, std::string("signature '") + (key ? key : "(null)") + "' is not in the model (" + known + ")");
}

Status Runner::run(const char* key, size_t n, const char* const* names, const void* const* data, const size_t* bytes) {
  const SignatureRun* found;
  GRADRT_RETURN_IF_ERROR(find(key, &found));
  SignatureRun& sig = const_cast<SignatureRun&>(*found);
  if (n && (!names || !data || !bytes)) return Status(Code::InvalidArgument, "run: names, data and bytes must be given");
  std::vector<bool> given(sig.inputs.size(), false);
  for (size_t i = 0; i < n; ++i) {
    size_t j = 0;
    while (j < sig.inputs.size() && (!names[i] || sig.inputs[j].name != names[i])) ++j;
    if (j == sig.inputs.size())
      return Status(Code::InvalidArgument, "signature '" + sig.key + "' has no input '" + (names[i] ? names[i] : "(null)") + "'");
    if (given[j]) return Status(Code::InvalidArgument, "input '" + sig.inputs[j].name + "' is given twice");
    if (bytes[i] != sig.inputs[j].info.bytes || (!data[i] && bytes[i]))
      return Status(Code::InvalidArgument, "input '" + sig.inputs[j].name + "' needs " + std::to_string(sig.inputs[j].info.bytes) +
                                               " bytes, got " + std::to_string(bytes[i]));
    given[j] = true;
  }
  for (size_t j = 0; j < sig.inputs.size(); ++j)
    if (!given[j]) return Status(Code::InvalidArgument, "input '" + sig.inputs[j].name + "' of signature '" + sig.key + "' is missing");
  for (size_t i = 0; i < n; ++i)
    for (IoTensor& t : sig.inputs)
      if (t.name == names[i] && bytes[i]) std::memcpy(t.host.data.get(), data[i], bytes[i]);
  std::vector<LiteRtTensorBuffer> ins, outs;
  for (IoTensor& t : sig.inputs) ins.push_back(t.buffer);
  for (IoTensor& t : sig.outputs) outs.push_back(t.buffer);
  const size_t index = static_cast<size_t>(&sig - sigs_.data());
  kernels_->take_error();  // nothing from before this run
  const LiteRtStatus st = api_->LiteRtRunCompiledModel(compiled_, index, ins.size(), ins.data(), outs.size(), outs.data());
  GRADRT_RETURN_IF_ERROR(kernels_->take_error());
  GRADRT_RETURN_IF_ERROR(litert_call(st, "LiteRtRunCompiledModel"));
  for (IoTensor& t : sig.outputs) {
    void* p = nullptr;
    GRADRT_RETURN_IF_ERROR(litert_call(api_->LiteRtLockTensorBuffer(t.buffer, &p, kLiteRtTensorBufferLockModeRead), "LiteRtLockTensorBuffer"));
    t.result.assign(static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + (p ? t.info.bytes : 0));
    api_->LiteRtUnlockTensorBuffer(t.buffer);
  }
  return Status::OK();
}

Runner::~Runner() {
  if (!api_) return;
  for (SignatureRun& s : sigs_)
    for (auto* list : {&s.inputs, &s.outputs})
      for (IoTensor& t : *list)
        if (t.buffer) api_->LiteRtDestroyTensorBuffer(t.buffer);
  if (compiled_) api_->LiteRtDestroyCompiledModel(compiled_);
  if (lmodel_) api_->LiteRtDestroyModel(lmodel_);
  if (options_) api_->LiteRtDestroyOptions(options_);
  if (env_) api_->LiteRtDestroyEnvironment(env_);
}

}  // namespace gradrt::litert

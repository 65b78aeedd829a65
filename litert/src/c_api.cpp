// The C functions of gradrt/litert.h over the C++ inside; every exception-free path sets this
// thread's last error.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "gradrt/litert.h"
#include "runner.h"
#include "status_macros.h"

using namespace gradrt;
using namespace gradrt::litert;

struct gradrt_litert_kernels {
  std::unique_ptr<KernelSet> set;
};
struct gradrt_litert_model {
  std::unique_ptr<Runner> runner;
};

namespace {

thread_local std::string last_error;
thread_local int last_code = GRADRT_LITERT_OK;

// Records s as this thread's last error; UnsupportedOp statuses carry their own code name.
int fail(const Status& s) {
  const bool unsupported = s.message().rfind("UnsupportedOp: ", 0) == 0;
  last_code = unsupported ? GRADRT_LITERT_UNSUPPORTED_OP : static_cast<int>(s.code());
  last_error = unsupported ? s.message() : s.to_string();
  return last_code;
}
int done(const Status& s) {
  if (!s.ok()) return fail(s);
  last_error.clear();
  last_code = GRADRT_LITERT_OK;
  return GRADRT_LITERT_OK;
}
Status null_arg(const char* fn, const char* arg) {
  return Status(Code::InvalidArgument, std::string(fn) + ": " + arg + " must not be null");
}

// Reads a model and plans it; an op nobody runs is the UnsupportedOp status.
Status read_and_plan(const void* bytes, size_t size, Model* model, ModelPlan* plan) {
  if (!bytes && size) return Status(Code::InvalidArgument, "model: null with size " + std::to_string(size));
  Status s = read_model({static_cast<const uint8_t*>(bytes), size}, model);
  if (s.ok()) s = make_plan(*model, plan);
  if (s.ok() && !plan->unsupported.empty()) s = Status(Code::NotFound, unsupported_message(*plan));
  return s;
}

template <class F> int guarded(F&& f) {
  try {
    return done(f());
  } catch (const std::bad_alloc&) {
    return fail(Status(Code::ResourceExhausted, "out of memory"));
  } catch (...) {
    return fail(Status(Code::Internal, "unexpected exception"));
  }
}

}  // namespace

extern "C" {

const char* gradrt_litert_last_error(void) { return last_error.c_str(); }
int gradrt_litert_last_error_code(void) { return last_code; }
const char* gradrt_litert_version(void) { return gradrt::version(); }

int gradrt_litert_prepare(const void* model, size_t size, void** out, size_t* out_size) {
  return guarded([&]() -> Status {
    if (!out || !out_size) return null_arg("gradrt_litert_prepare", "out/out_size");
    *out = nullptr;
    *out_size = 0;
    Model m;
    ModelPlan plan;
    GRADRT_RETURN_IF_ERROR(read_and_plan(model, size, &m, &plan));
    std::vector<uint8_t> bytes;
    GRADRT_RETURN_IF_ERROR(prepare_bytes(m, plan, &bytes));
    AlignedBytes aligned;
    GRADRT_RETURN_IF_ERROR(AlignedBytes::allocate(bytes.size(), &aligned));
    std::memcpy(aligned.data.get(), bytes.data(), bytes.size());
    *out_size = bytes.size();
    *out = aligned.data.release();
    return Status::OK();
  });
}

void gradrt_litert_free(void* p) { std::free(p); }

int gradrt_litert_register_kernels(void* litert_options, const void* prepared, size_t size, const char* litert_library,
                                   int threads, gradrt_litert_kernels** out) {
  return guarded([&]() -> Status {
    if (!litert_options || !out) return null_arg("gradrt_litert_register_kernels", "litert_options/out");
    *out = nullptr;
    if (threads < 0) return Status(Code::InvalidArgument, "threads must be >= 0, got " + std::to_string(threads));
    const Api* api;
    GRADRT_RETURN_IF_ERROR(load_api(litert_library, &api));
    Model m;
    ModelPlan plan;
    GRADRT_RETURN_IF_ERROR(read_and_plan(prepared, size, &m, &plan));
    auto k = std::make_unique<gradrt_litert_kernels>();
    GRADRT_RETURN_IF_ERROR(KernelSet::create(api, static_cast<LiteRtOptions>(litert_options), m, plan, threads, &k->set));
    *out = k.release();
    return Status::OK();
  });
}

int gradrt_litert_kernels_take_error(gradrt_litert_kernels* kernels) {
  return guarded([&]() -> Status {
    if (!kernels) return null_arg("gradrt_litert_kernels_take_error", "kernels");
    return kernels->set->take_error();
  });
}

void gradrt_litert_kernels_destroy(gradrt_litert_kernels* kernels) { delete kernels; }

int gradrt_litert_model_create(const void* prepared, size_t size, const char* litert_library, int threads,
                               gradrt_litert_model** out) {
  return guarded([&]() -> Status {
    if (!out) return null_arg("gradrt_litert_model_create", "out");
    *out = nullptr;
    auto m = std::make_unique<gradrt_litert_model>();
    GRADRT_RETURN_IF_ERROR(Runner::create(prepared, size, litert_library, threads, &m->runner));
    *out = m.release();
    return Status::OK();
  });
}

void gradrt_litert_model_destroy(gradrt_litert_model* model) { delete model; }

size_t gradrt_litert_num_signatures(const gradrt_litert_model* model) {
  return model ? model->runner->signatures().size() : 0;
}

const char* gradrt_litert_signature_key(const gradrt_litert_model* model, size_t index) {
  if (!model || index >= model->runner->signatures().size()) return nullptr;
  return model->runner->signatures()[index].key.c_str();
}

int gradrt_litert_num_io(const gradrt_litert_model* model, const char* signature, int is_output, size_t* count) {
  return guarded([&]() -> Status {
    if (!model || !count) return null_arg("gradrt_litert_num_io", "model/count");
    const SignatureRun* s;
    GRADRT_RETURN_IF_ERROR(model->runner->find(signature, &s));
    *count = is_output ? s->outputs.size() : s->inputs.size();
    return Status::OK();
  });
}

int gradrt_litert_io_info(const gradrt_litert_model* model, const char* signature, int is_output, size_t index,
                          gradrt_litert_tensor_info* info) {
  return guarded([&]() -> Status {
    if (!model || !info) return null_arg("gradrt_litert_io_info", "model/info");
    const SignatureRun* s;
    GRADRT_RETURN_IF_ERROR(model->runner->find(signature, &s));
    const auto& list = is_output ? s->outputs : s->inputs;
    if (index >= list.size())
      return Status(Code::InvalidArgument, "signature '" + s->key + "' has " + std::to_string(list.size()) +
                                               (is_output ? " outputs" : " inputs") + ", index " + std::to_string(index));
    *info = list[index].info;
    return Status::OK();
  });
}

int gradrt_litert_run(gradrt_litert_model* model, const char* signature, size_t num_inputs, const char* const* names,
                      const void* const* data, const size_t* bytes) {
  return guarded([&]() -> Status {
    if (!model) return null_arg("gradrt_litert_run", "model");
    return model->runner->run(signature, num_inputs, names, data, bytes);
  });
}

int gradrt_litert_output(const gradrt_litert_model* model, const char* signature, const char* name, const void** data,
                         size_t* bytes) {
  return guarded([&]() -> Status {
    if (!model || !name || !data || !bytes) return null_arg("gradrt_litert_output", "model/name/data/bytes");
    const SignatureRun* s;
    GRADRT_RETURN_IF_ERROR(model->runner->find(signature, &s));
    for (const IoTensor& t : s->outputs)
      if (t.name == name) {
        *data = t.result.data();
        *bytes = t.result.size();
        return Status::OK();
      }
    return Status(Code::NotFound, "signature '" + s->key + "' has no output '" + name + "'");
  });
}

size_t gradrt_litert_kernel_calls(char* buf, size_t cap) {
  const std::string text = kernel_calls_text();
  if (buf && cap > 0) {
    const size_t k = std::min(text.size(), cap - 1);
    std::memcpy(buf, text.data(), k);
    buf[k] = '\0';
  }
  return text.size();
}

void gradrt_litert_reset_kernel_calls(void) { reset_kernel_calls(); }

}  // extern "C"

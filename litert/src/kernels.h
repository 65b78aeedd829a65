// One LiteRtCustomOpKernel per gradrt node of a prepared model, and the set that owns them.
//
// LiteRT calls GetOutputLayouts once at compile with input shapes only and resizes every output
// to what it returns, so each node carries its outputs' static shapes from the model (a
// zero-element output gets shape [1]: LiteRT cannot wrap a zero-byte tensor). Run gets LiteRT
// tensor buffers, locks them (host pointers into the interpreter's tensors, no copy) and calls
// gradrt::run_op by TF op name, writing outputs in place. LiteRT ignores a kernel's status, so
// the first failure is kept in the set for the caller (KernelSet::take_error).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "litert_c.h"
#include "prepare.h"

namespace gradrt::litert {

class KernelSet;

struct NodeKernel {
  KernelSet* set = nullptr;
  GradrtNode node;
  const OpInfo* info = nullptr;
  std::vector<std::vector<int64_t>> output_shapes;  // static, from the model's tensors
  std::atomic<long long>* counter = nullptr;
  Status run(size_t num_inputs, const LiteRtTensorBuffer* inputs, size_t num_outputs, LiteRtTensorBuffer* outputs);
};

class KernelSet {
 public:
  // Registers a kernel per node of `plan` (the model must be prepared) on `options`.
  static Status create(const Api* api, LiteRtOptions options, const Model& model, const ModelPlan& plan, int threads,
                       std::unique_ptr<KernelSet>* out);
  const Api* api() const { return api_; }
  int threads() const { return threads_; }
  void record(const Status& s);
  Status take_error();  // the first error since the last call, then OK again

 private:
  const Api* api_ = nullptr;
  int threads_ = 0;
  std::vector<std::unique_ptr<NodeKernel>> kernels_;
  std::mutex mutex_;
  Status error_;
};

// Calls of gradrt's kernels by TF op name (process-wide).
std::string kernel_calls_text();
void reset_kernel_calls();

// dtype mapping between LiteRT element types (TfLiteType values) and gradrt.
bool dtype_from_litert(int element_type, DType* out);
int litert_element_type(int tflite_file_type);  // file TensorType -> TfLiteType (0: unmapped)

}  // namespace gradrt::litert

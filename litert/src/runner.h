// The runner behind gradrt_litert_model: a LiteRT compiled model (CPU) of a prepared model with
// gradrt's kernels registered, and one 64-byte aligned host buffer per signature input/output.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gradrt/litert.h"
#include "kernels.h"

namespace gradrt::litert {

// 64-byte aligned bytes (what LiteRtCreateTensorBufferFromHostMemory requires).
struct AlignedBytes {
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<uint8_t, Free> data;
  size_t size = 0;
  static Status allocate(size_t size, AlignedBytes* out);  // ResourceExhausted when it cannot
};

struct IoTensor {
  std::string name;
  gradrt_litert_tensor_info info{};
  AlignedBytes host;
  LiteRtTensorBuffer buffer = nullptr;
  std::vector<uint8_t> result;  // outputs: a copy after each run
};

struct SignatureRun {
  std::string key;
  std::vector<IoTensor> inputs, outputs;  // LiteRT's order
};

class Runner {
 public:
  static Status create(const void* prepared, size_t size, const char* library, int threads, std::unique_ptr<Runner>* out);
  ~Runner();
  const std::vector<SignatureRun>& signatures() const { return sigs_; }
  Status find(const char* key, const SignatureRun** out) const;
  Status run(const char* key, size_t n, const char* const* names, const void* const* data, const size_t* bytes);

 private:
  Status open_signatures();
  const Api* api_ = nullptr;
  AlignedBytes bytes_;
  Model model_;
  ModelPlan plan_;
  std::unique_ptr<KernelSet> kernels_;
  LiteRtEnvironment env_ = nullptr;
  LiteRtModel lmodel_ = nullptr;
  LiteRtOptions options_ = nullptr;
  LiteRtCompiledModel compiled_ = nullptr;
  std::vector<SignatureRun> sigs_;
};

}  // namespace gradrt::litert

// The `reference` backend: the kernels of reference.h behind the Backend interface.
#include "backend.h"
#include "reference.h"

namespace gradrt {
namespace {

class ReferenceBackend final : public Backend {
 public:
  const char* name() const override { return "reference"; }
  std::string detail() override { return "plain loops, double accumulation (the test oracle)"; }

#define GRADRT_REF_FORWARD(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES)   \
  Status STEM(const Exec&, const P& p, GRADRT_UNPACK ARGS) override { \
    ref::STEM(p, GRADRT_UNPACK NAMES);                                \
    return Status::OK();                                              \
  }
  GRADRT_KERNELS(GRADRT_REF_FORWARD, float)
  GRADRT_KERNELS(GRADRT_REF_FORWARD, double)
#undef GRADRT_REF_FORWARD
};

}  // namespace

Backend* reference_backend() {
  static ReferenceBackend backend;
  return &backend;
}

}  // namespace gradrt

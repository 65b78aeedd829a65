// libFuzzer target: litert/'s model preparation (gradrt_litert_prepare's steps) on arbitrary bytes.
// Invariants: no crash, leak or UB; a refusal is a status with a message; a prepared model reads
// back (every reference still inside the buffer) with every buffer 64-byte aligned.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "prepare.h"

namespace {
[[noreturn]] void fail(const char* what, const gradrt::Status& s) {
  std::fprintf(stderr, "fuzz_litert_prepare invariant broken: %s (%s)\n", what, s.to_string().c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gradrt::litert;
  Model model;
  ModelPlan plan;
  gradrt::Status s = read_model({data, size}, &model);
  if (s.ok()) s = make_plan(model, &plan);
  if (!s.ok()) {
    if (s.message().empty()) fail("error without a message", s);
    return 0;
  }
  std::vector<uint8_t> out;
  s = prepare_bytes(model, plan, &out);
  if (!s.ok()) {
    if (s.message().empty()) fail("error without a message", s);
    return 0;
  }
  Model again;
  s = read_model({out.data(), out.size()}, &again);
  if (!s.ok()) fail("the prepared model does not read back", s);
  for (const ModelBuffer& b : again.buffers)
    if (b.size && b.data % kBufferAlignment) fail("a prepared buffer is not 64-byte aligned", s);
  ModelPlan plan2;
  s = make_plan(again, &plan2);
  if (!s.ok()) fail("the prepared model does not plan", s);
  return 0;
}

// libFuzzer target: the .npy reader (gradrt::npy::read_bytes) on arbitrary bytes.
// Invariants: no crash, leak or UB; a refusal is a non-OK status with a message and
// leaves the output untouched; an accepted file re-encodes to a file that reads back
// to the same dtype, shape and bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "gradrt/gradrt.h"
#include "npy.h"

namespace {
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_npy invariant broken: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gradrt::set_max_tensor_elements(int64_t{1} << 24);  // keep the fuzzer's memory small
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gradrt::Tensor t;
  gradrt::Status s = gradrt::npy::read_bytes(size ? data : nullptr, size, &t);
  if (!s.ok()) {
    if (s.message().empty()) fail("error without a message");
    if (t.data() != nullptr || !t.shape().empty()) fail("output written on error");
    return 0;
  }
  // The data section is exactly product(shape) * itemsize bytes of the input.
  if (t.num_bytes() > size) fail("more data than input bytes");
  if (t.num_bytes() && std::memcmp(t.data(), data + (size - t.num_bytes()), t.num_bytes()) != 0)
    fail("data differs from the file's tail");
  std::string again = gradrt::npy::encode(t.view());
  if (again.empty()) fail("encode refused a tensor read_bytes produced");
  gradrt::Tensor u;
  s = gradrt::npy::read_bytes(again.data(), again.size(), &u);
  if (!s.ok()) fail("re-encoded file does not read back");
  if (u.dtype() != t.dtype() || u.shape() != t.shape() || u.num_bytes() != t.num_bytes() ||
      (t.num_bytes() && std::memcmp(u.data(), t.data(), t.num_bytes()) != 0))
    fail("round trip changed the tensor");
  return 0;
}

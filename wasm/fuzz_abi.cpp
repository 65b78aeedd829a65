// libFuzzer target for the wasm C ABI's argument decoding (abi.cpp), built natively with
// sanitizers as fuzz_wasm_decode by tests/fuzz (tests/fuzz/run_fuzzers.sh).
// A fuzz input is a heap image. Bytes 0..15 hold four little-endian u32: table address,
// table length (float64 entries), attrs address, op index; addresses point into the
// image itself. Decoded inputs and attrs then run on the reference backend (tensors
// limited to 2^16 elements), so core's validation is fuzzed too.
#include <cstdint>
#include <cstring>
#include <vector>

#include "abi.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gradrt::wasm;
  if (size < 16) return 0;
  static const bool limited = (gradrt::set_max_tensor_elements(1 << 16), true);
  (void)limited;
  std::vector<double> storage((size + 7) / 8);  // 8-aligned, like the wasm heap
  std::memcpy(storage.data(), data, size);
  const Heap heap{reinterpret_cast<uintptr_t>(storage.data()), size};
  uint32_t word[4];
  std::memcpy(word, data, sizeof(word));

  gradrt::Inputs inputs;
  gradrt::Status s = decode_inputs(heap, word[0], word[1], &inputs);
  std::string_view text;
  gradrt::Attrs attrs;
  if (s.ok()) s = read_string(heap, word[2], kMaxAttrsBytes, "attrs", &text);
  if (s.ok()) s = decode_attrs(text, &attrs);
  if (!s.ok()) return 0;
  const auto& ops = gradrt::ops();
  gradrt::Outputs outputs;
  outputs.reserve(8);
  gradrt::RunOptions options;
  options.backend = "reference";
  options.threads = 1;
  (void)gradrt::run_op(ops[word[3] % ops.size()].name, inputs, attrs, &outputs, options);
  return 0;
}

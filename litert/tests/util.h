// Helpers of the litert tests: the committed converted model and the LiteRT library to test with.
#pragma once

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace litert_test {

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// TF 2.21's conversion of the smoke CNN (litert/tests/make_smoke_model.py).
inline std::vector<uint8_t> smoke_model() { return read_file(std::string(GRADRT_LITERT_DATA) + "/smoke_cnn.tflite"); }

// GRADRT_LITERT_LIBRARY: ai-edge-litert 2.3.0's libLiteRt.so ("" when not set: LiteRT tests skip).
inline std::string litert_library() {
  const char* p = std::getenv("GRADRT_LITERT_LIBRARY");
  return p ? p : "";
}

// Replaces the first occurrence of `from` by `to` (same length) in bytes; false if absent.
inline bool patch(std::vector<uint8_t>* bytes, const std::string& from, const std::string& to) {
  const std::string s(bytes->begin(), bytes->end());
  const size_t at = s.find(from);
  if (at == std::string::npos || from.size() != to.size()) return false;
  std::copy(to.begin(), to.end(), bytes->begin() + static_cast<long>(at));
  return true;
}

}  // namespace litert_test

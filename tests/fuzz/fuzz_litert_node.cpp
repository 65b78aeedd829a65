// libFuzzer target: litert/'s custom-option readers (FlexBuffer [op, NodeDef] of Flex ops, the
// protobuf NodeDef, FlexBuffer attribute maps of plain custom ops) on arbitrary bytes.
// Invariants: no crash, leak or UB; a refusal is InvalidArgument with a message; an accepted
// NodeDef names its op.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "node_attrs.h"

namespace {
void check(const gradrt::Status& s) {
  if (!s.ok() && (s.message().empty() || s.code() != gradrt::Code::InvalidArgument)) {
    std::fprintf(stderr, "fuzz_litert_node invariant broken: %s\n", s.to_string().c_str());
    std::abort();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string op;
  gradrt::Attrs attrs;
  check(gradrt::litert::flex_node_attrs(bytes, &op, &attrs));
  gradrt::Status s = gradrt::litert::node_def_attrs(bytes, &op, &attrs);
  check(s);
  if (s.ok() && op.empty()) std::abort();
  check(gradrt::litert::flex_map_attrs(bytes, &attrs));
  return 0;
}

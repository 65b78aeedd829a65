// libFuzzer target: the attribute decoder (AttrValue::parse_json) on arbitrary text.
// Invariants: no crash or UB; a refusal has a message; an accepted value prints
// (to_json) to text that parses back to a value that prints identically.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "gradrt/gradrt.h"

namespace {
[[noreturn]] void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "fuzz_json invariant broken: %s\n  text: %s\n", what, text.c_str());
  std::abort();
}

bool same(const gradrt::AttrValue& a, const gradrt::AttrValue& b) {
  using K = gradrt::AttrValue::Kind;
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case K::Null: return true;
    case K::Bool: return a.b == b.b;
    case K::Int: return a.i == b.i;
    case K::Float: return a.f == b.f || (a.f != a.f && b.f != b.f);
    case K::String: return a.s == b.s;
    case K::List:
      if (a.list.size() != b.list.size()) return false;
      for (size_t i = 0; i < a.list.size(); ++i)
        if (!same(a.list[i], b.list[i])) return false;
      return true;
  }
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  gradrt::AttrValue v;
  gradrt::Status s = gradrt::AttrValue::parse_json(text, &v);
  if (!s.ok()) {
    if (s.message().empty()) fail("error without a message", std::string(text));
    return 0;
  }
  std::string printed = v.to_json();
  gradrt::AttrValue w;
  s = gradrt::AttrValue::parse_json(printed, &w);
  if (!s.ok()) fail(("printed value does not parse: " + s.message() + " / " + printed).c_str(), std::string(text));
  if (!same(v, w)) fail(("printed value parses to a different value: " + printed).c_str(), std::string(text));
  if (w.to_json() != printed) fail("printing is not stable", std::string(text));
  return 0;
}

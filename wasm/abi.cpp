#include "abi.h"

#include "checked.h"

#include <cmath>
#include <cstring>
#include <string>
#include <utility>

namespace gradrt::wasm {
namespace {

constexpr double kMaxExact = 9007199254740992.0;  // 2^53

// A table entry that must be an integer in [lo, hi].
bool as_int(double v, double lo, double hi, int64_t* out) {
  if (!(v >= lo && v <= hi) || std::floor(v) != v) return false;
  *out = static_cast<int64_t>(v);
  return true;
}

// s[*i] is the opening quote of a string: advance past its closing quote.
bool skip_string(std::string_view s, size_t* i) {
  for (++*i; *i < s.size(); ++*i) {
    if (s[*i] == '\\') {
      ++*i;
    } else if (s[*i] == '"') {
      ++*i;
      return true;
    }
  }
  return false;
}

// Advances to the end of the JSON value starting at s[*i]: the first ',' or '}' outside
// strings and brackets. The value itself is checked later by AttrValue::parse_json.
bool skip_value(std::string_view s, size_t* i) {
  int depth = 0;
  while (*i < s.size()) {
    char c = s[*i];
    if (c == '"') {
      if (!skip_string(s, i)) return false;
      continue;
    }
    if (c == '[' || c == '{') {
      if (++depth > 64) return false;
    } else if (c == ']' || c == '}') {
      if (depth == 0) return c == '}';
      --depth;
    } else if (c == ',' && depth == 0) {
      return true;
    }
    ++*i;
  }
  return false;
}

void skip_ws(std::string_view s, size_t* i) {
  while (*i < s.size() && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\n' || s[*i] == '\r')) ++*i;
}

}  // namespace

Status read_string(const Heap& heap, uint64_t addr, size_t max, const char* what, std::string_view* out) {
  if (!heap.contains(addr, 1)) return {Code::InvalidArgument, std::string(what) + ": address outside the heap"};
  size_t room = heap.size - static_cast<size_t>(addr);
  const char* s = heap.at(addr);
  size_t n = strnlen(s, room < max + 1 ? room : max + 1);
  if (n == room) return {Code::InvalidArgument, std::string(what) + ": string is not terminated"};
  if (n > max) return {Code::InvalidArgument, std::string(what) + ": longer than " + std::to_string(max) + " bytes"};
  *out = std::string_view(s, n);
  return Status::OK();
}

Status decode_inputs(const Heap& heap, uint64_t table_addr, uint32_t table_len, Inputs* inputs, bool specs) {
  if (table_len == 0) return Status::OK();
  if (table_len > kMaxInputs * (5 + kMaxRank) || !heap.contains(table_addr, uint64_t{table_len} * 8) || table_addr % 8 != 0)
    return {Code::InvalidArgument, "input table: bad address or length"};
  const double* t = heap.at<double>(table_addr);
  uint32_t i = 0;
  while (i < table_len) {
    if (inputs->size() == kMaxInputs) return {Code::InvalidArgument, "input table: too many inputs"};
    int64_t name_addr, dtype, rank, data_addr, data_bytes;
    if (table_len - i < 5 || !as_int(t[i], 0, 4294967295.0, &name_addr) || !as_int(t[i + 1], 0, 5, &dtype) ||
        !as_int(t[i + 2], 0, kMaxRank, &rank) || !as_int(t[i + 3], 0, 4294967295.0, &data_addr) ||
        !as_int(t[i + 4], 0, 4294967295.0, &data_bytes) || table_len - i - 5 < rank)
      return {Code::InvalidArgument, "input table: malformed record " + std::to_string(inputs->size())};
    std::string_view name;
    Status s = read_string(heap, static_cast<uint64_t>(name_addr), kMaxNameBytes, "input name", &name);
    if (!s.ok()) return s;
    // Only for error messages: built when one is (a string per input and call otherwise).
    auto label = [&] { return "input '" + std::string(name) + "'"; };
    TensorView view;
    view.dtype = static_cast<DType>(dtype);
    view.shape.reserve(static_cast<size_t>(rank));
    int64_t elements = 1;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t dim;
      if (!as_int(t[i + 5 + d], 0, kMaxExact, &dim))
        return {Code::InvalidArgument, label() + ": shape entries must be integers >= 0"};
      if (__builtin_mul_overflow(elements, dim, &elements))
        return {Code::InvalidArgument, label() + ": shape has more elements than int64 holds"};
      view.shape.push_back(dim);
    }
    int64_t elem = static_cast<int64_t>(dtype_size(view.dtype)), need;
    if (__builtin_mul_overflow(elements, elem, &need) || need != data_bytes)
      return {Code::InvalidArgument, label() + ": data has " + std::to_string(data_bytes) + " bytes, its shape needs " +
                                         std::to_string(elements) + " elements of " + std::to_string(elem) + " bytes"};
    if (data_bytes > 0 && !(specs && data_addr == 0)) {
      if (!heap.contains(static_cast<uint64_t>(data_addr), static_cast<uint64_t>(data_bytes)) || data_addr % elem != 0)
        return {Code::InvalidArgument, label() + ": data address outside the heap or misaligned"};
      view.data = heap.at<void>(static_cast<uint64_t>(data_addr));
    }
    if (!inputs->emplace(std::string(name), std::move(view)).second)
      return {Code::InvalidArgument, label() + ": given twice"};
    i += 5 + static_cast<uint32_t>(rank);
  }
  return Status::OK();
}

Status decode_plan_args(const Heap& heap, uint64_t args_addr, Inputs* inputs, const std::vector<size_t>& out_bytes,
                        std::vector<void*>* dest) {
  const uint64_t words = 2 * uint64_t{inputs->size()} + out_bytes.size();
  if (!heap.contains(args_addr, words * 4) || args_addr % 4 != 0) return {Code::InvalidArgument, "plan arguments: bad address"};
  const uint32_t* w = heap.at<uint32_t>(args_addr);
  for (auto& [name, view] : *inputs) {
    const uint64_t addr = w[0], bytes = w[1], elem = dtype_size(view.dtype);
    w += 2;
    uint64_t need = elem;
    for (int64_t d : view.shape) need *= static_cast<uint64_t>(d);  // the spec's, checked at prepare
    if (bytes != need)
      return {Code::InvalidArgument, "input '" + name + "': data has " + std::to_string(bytes) + " bytes, the plan's " +
                                         dtype_name(view.dtype) + " " + shape_string(view.shape) + " needs " + std::to_string(need)};
    if (bytes > 0 && (!heap.contains(addr, bytes) || addr % elem != 0))
      return {Code::InvalidArgument, "input '" + name + "': data address outside the heap or misaligned"};
    view.data = bytes ? heap.at<void>(addr) : nullptr;
  }
  dest->assign(out_bytes.size(), nullptr);
  for (size_t j = 0; j < out_bytes.size(); ++j, ++w) {
    if (*w == 0) continue;
    if (!heap.contains(*w, out_bytes[j])) return {Code::InvalidArgument, "output " + std::to_string(j) + ": address outside the heap"};
    (*dest)[j] = const_cast<char*>(heap.at<char>(*w));
  }
  return Status::OK();
}

Status decode_attrs(std::string_view s, Attrs* attrs) {
  const Status bad{Code::InvalidArgument, "attrs: expected a JSON object {\"name\": value, ...}"};
  if (s.size() > kMaxAttrsBytes) return {Code::InvalidArgument, "attrs: longer than " + std::to_string(kMaxAttrsBytes) + " bytes"};
  size_t i = 0;
  skip_ws(s, &i);
  if (i == s.size() || s[i] != '{') return bad;
  ++i;
  skip_ws(s, &i);
  if (i < s.size() && s[i] == '}') {
    ++i;
  } else {
    for (;;) {
      size_t key_begin = i;
      if (i == s.size() || s[i] != '"' || !skip_string(s, &i)) return bad;
      AttrValue key;
      Status st = AttrValue::parse_json(s.substr(key_begin, i - key_begin), &key);
      if (!st.ok() || key.kind != AttrValue::Kind::String) return bad;
      skip_ws(s, &i);
      if (i == s.size() || s[i] != ':') return bad;
      size_t value_begin = i + 1, end = value_begin;
      if (!skip_value(s, &end)) return bad;
      AttrValue value;
      st = AttrValue::parse_json(s.substr(value_begin, end - value_begin), &value);
      if (!st.ok()) return {Code::InvalidArgument, "attr '" + key.s + "': " + st.message()};
      if (!attrs->emplace(key.s, std::move(value)).second) return {Code::InvalidArgument, "attr '" + key.s + "' given twice"};
      i = end + 1;
      if (s[end] == '}') break;
      skip_ws(s, &i);
    }
  }
  skip_ws(s, &i);
  if (i != s.size()) return bad;
  return Status::OK();
}

}  // namespace gradrt::wasm

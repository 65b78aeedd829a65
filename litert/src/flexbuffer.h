// A bounds-checked reader of FlexBuffers (the format of TFLite's custom-op options).
//
// Facts used: the root is at the end: last byte = the root's byte width, the byte before = its
// packed type (type << 2 | log2 bit width), the root value before that. An offset-typed value
// (string, key, map, vector, blob, indirect scalars) at position p holds an unsigned distance
// back: target = p - value. Strings, blobs and vectors have their length in the `width` bytes
// just before the target; an untyped vector is followed by one packed-type byte per element; a
// map is a vector of values with, 3 and 2 widths before it, the offset to and the width of its
// (typed, KEY) keys vector.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gradrt/gradrt.h"

namespace gradrt::litert::flex {

enum Type : uint8_t {
  kNull = 0, kInt = 1, kUInt = 2, kFloat = 3, kKey = 4, kString = 5, kIndirectInt = 6, kIndirectUInt = 7,
  kIndirectFloat = 8, kMap = 9, kVector = 10, kVectorInt = 11, kVectorUInt = 12, kVectorFloat = 13,
  kVectorKey = 14, kVectorString = 15, kVectorInt2 = 16, kVectorFloat4 = 24, kBlob = 25, kBool = 26,
  kVectorBool = 36
};

// One value: where it is stored (`pos`, `parent_width` bytes), its type and own width.
class Ref {
 public:
  static Status root(std::string_view buf, Ref* out);
  Type type() const { return type_; }
  Status as_int(int64_t* out) const;    // Int, UInt, Bool, indirect ints
  Status as_double(double* out) const;  // Float (32/64 bit), indirect float, or an int
  Status as_string(std::string_view* out) const;  // String, Key, Blob
  bool is_vector() const;               // untyped, typed, fixed-size typed, or a map (its values)
  Status size(size_t* out) const;       // elements of a vector or map
  Status at(size_t i, Ref* out) const;  // element i
  Status key(size_t i, std::string_view* out) const;  // key i of a map

 private:
  Status target(size_t* out) const;  // pos - stored distance, checked
  Status read_uint(size_t pos, size_t width, uint64_t* out) const;
  Status bad(const std::string& msg) const;
  std::string_view buf_;
  size_t pos_ = 0, parent_width_ = 1, width_ = 1;
  Type type_ = kNull;
};

}  // namespace gradrt::litert::flex

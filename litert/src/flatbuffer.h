// A small bounds-checked FlatBuffer reader and a forward appender (gradrt's own; no flatc).
//
// FlatBuffer facts used here: little-endian; the root is a uoffset (uint32) at byte 0 to a table;
// a uoffset at position p points to p + value (always forward); a table starts with an int32
// soffset to its vtable at (table - soffset); a vtable is uint16 [vtable bytes, table bytes,
// field 0 offset, field 1 offset, ...] where 0 means "absent: default value"; vectors and strings
// are a uint32 length followed by the elements (strings also by a NUL).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gradrt/gradrt.h"

namespace gradrt::litert::fb {

struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// A table of a FlatBuffer: every read is checked against the buffer.
class Table {
 public:
  // The table at `pos` (its vtable is checked too). `what` names it in errors.
  static Status at(Bytes b, size_t pos, const char* what, Table* out);
  size_t pos() const { return pos_; }
  // Position of field `id`'s bytes (0: absent).
  size_t field(int id) const;
  Status u8(int id, uint8_t def, uint8_t* out) const { return scalar(id, def, out); }
  Status i32(int id, int32_t def, int32_t* out) const { return scalar(id, def, out); }
  Status u32(int id, uint32_t def, uint32_t* out) const { return scalar(id, def, out); }
  Status u64(int id, uint64_t def, uint64_t* out) const { return scalar(id, def, out); }
  // The target of offset field `id` (0: absent).
  Status target(int id, size_t* out) const;
  Status table(int id, const char* what, Table* out, bool* present) const;
  // A vector: `count` elements of `elem` bytes starting at *data (count 0 when absent).
  Status vector(int id, size_t elem, size_t* data, uint32_t* count) const;
  Status string(int id, std::string_view* out) const;  // "" when absent
  // Element i of a vector of tables.
  Status table_at(size_t data, uint32_t i, const char* what, Table* out) const;

 private:
  template <class T> Status scalar(int id, T def, T* out) const;
  Status error(const std::string& msg) const;
  Bytes b_;
  size_t pos_ = 0, vtable_ = 0;
  uint16_t vt_size_ = 0;
  const char* what_ = "";
};

Status read_u32(Bytes b, size_t pos, uint32_t* out);
Status vector_at(Bytes b, size_t vec, size_t elem, size_t* data, uint32_t* count);
Status string_at(Bytes b, size_t pos, std::string_view* out);

template <class T> inline T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class T> inline void store(uint8_t* p, T v) { std::memcpy(p, &v, sizeof v); }

// Appends objects after a FlatBuffer's last byte. Only forward references are legal, so a table
// is written before its children, which are then linked with patch().
class Appender {
 public:
  explicit Appender(std::vector<uint8_t>* out) : out_(out) {}
  size_t size() const { return out_->size(); }
  // Pads with zeros so that (size + extra) % align == 0.
  void align(size_t align, size_t extra = 0);
  // Writes a uoffset at `at` pointing to `target` (> at).
  void patch(size_t at, size_t target);
  // A vector of `count` elements of `elem` bytes whose first element lands on a multiple of
  // data_align; returns the position of its length word.
  size_t vector(const void* data, uint32_t count, size_t elem, size_t data_align = 4);
  size_t string(std::string_view s);
  // A table: fields[i] = {id, bytes, size (1, 4 or 8)}; an offset field is a 4-byte 0 to patch.
  // Returns the table's position; field_pos[i] gets each field's position.
  struct Field {
    int id;
    uint64_t value;
    int size;
  };
  size_t table(const std::vector<Field>& fields, std::vector<size_t>* field_pos);

 private:
  std::vector<uint8_t>* out_;
};

}  // namespace gradrt::litert::fb

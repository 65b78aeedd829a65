#include "flatbuffer.h"

#include <algorithm>

#include "status_macros.h"

namespace gradrt::litert::fb {

namespace {
Status oob(const char* what, size_t pos, size_t need, size_t size) {
  return Status(Code::InvalidArgument, std::string("model: ") + what + " at byte " + std::to_string(pos) + " (" +
                                           std::to_string(need) + " bytes) is outside the " +
                                           std::to_string(size) + "-byte buffer");
}
bool fits(Bytes b, size_t pos, size_t n) { return pos <= b.size && n <= b.size - pos; }
}  // namespace

Status read_u32(Bytes b, size_t pos, uint32_t* out) {
  if (!fits(b, pos, 4)) return oob("offset", pos, 4, b.size);
  *out = load<uint32_t>(b.data + pos);
  return Status::OK();
}

// vec: position of the length word. Elements must fit in the buffer (checked in 64 bits).
Status vector_at(Bytes b, size_t vec, size_t elem, size_t* data, uint32_t* count) {
  uint32_t n;
  GRADRT_RETURN_IF_ERROR(read_u32(b, vec, &n));
  if (!fits(b, vec + 4, static_cast<uint64_t>(n) * elem)) return oob("vector", vec, uint64_t{n} * elem + 4, b.size);
  *data = vec + 4;
  *count = n;
  return Status::OK();
}

Status string_at(Bytes b, size_t pos, std::string_view* out) {
  size_t data;
  uint32_t n;
  GRADRT_RETURN_IF_ERROR(vector_at(b, pos, 1, &data, &n));
  *out = std::string_view(reinterpret_cast<const char*>(b.data + data), n);
  return Status::OK();
}

Status Table::at(Bytes b, size_t pos, const char* what, Table* out) {
  if (!fits(b, pos, 4)) return oob(what, pos, 4, b.size);
  // vtable = pos - soffset, in 64-bit signed arithmetic (soffset may be negative).
  const int64_t vt = static_cast<int64_t>(pos) - load<int32_t>(b.data + pos);
  if (vt < 0 || !fits(b, static_cast<size_t>(vt), 4)) return oob("vtable", static_cast<size_t>(vt < 0 ? 0 : vt), 4, b.size);
  const uint16_t vt_size = load<uint16_t>(b.data + vt), tbl_size = load<uint16_t>(b.data + vt + 2);
  if (vt_size < 4 || (vt_size & 1) || !fits(b, static_cast<size_t>(vt), vt_size) || !fits(b, pos, tbl_size))
    return oob(what, pos, tbl_size, b.size);
  out->b_ = b;
  out->pos_ = pos;
  out->vtable_ = static_cast<size_t>(vt);
  out->vt_size_ = vt_size;
  out->what_ = what;
  return Status::OK();
}

size_t Table::field(int id) const {
  const size_t slot = 4 + 2 * static_cast<size_t>(id);
  if (slot + 2 > vt_size_) return 0;
  const uint16_t off = load<uint16_t>(b_.data + vtable_ + slot);
  return off == 0 ? 0 : pos_ + off;
}

Status Table::error(const std::string& msg) const {
  return Status(Code::InvalidArgument, std::string("model: ") + what_ + " at byte " + std::to_string(pos_) + ": " + msg);
}

template <class T> Status Table::scalar(int id, T def, T* out) const {
  const size_t p = field(id);
  if (p == 0) {
    *out = def;
    return Status::OK();
  }
  if (!fits(b_, p, sizeof(T))) return error("field " + std::to_string(id) + " is out of bounds");
  *out = load<T>(b_.data + p);
  return Status::OK();
}

template Status Table::scalar(int, uint8_t, uint8_t*) const;
template Status Table::scalar(int, int32_t, int32_t*) const;
template Status Table::scalar(int, uint32_t, uint32_t*) const;
template Status Table::scalar(int, uint64_t, uint64_t*) const;

Status Table::target(int id, size_t* out) const {
  const size_t p = field(id);
  *out = 0;
  if (p == 0) return Status::OK();
  uint32_t off;
  if (!read_u32(b_, p, &off).ok() || off == 0 || !fits(b_, p, uint64_t{off}))
    return error("offset field " + std::to_string(id) + " points outside the buffer");
  *out = p + off;
  return Status::OK();
}

Status Table::table(int id, const char* what, Table* out, bool* present) const {
  size_t t;
  GRADRT_RETURN_IF_ERROR(target(id, &t));
  *present = t != 0;
  return t == 0 ? Status::OK() : Table::at(b_, t, what, out);
}

Status Table::vector(int id, size_t elem, size_t* data, uint32_t* count) const {
  size_t t;
  GRADRT_RETURN_IF_ERROR(target(id, &t));
  *data = 0;
  *count = 0;
  return t == 0 ? Status::OK() : vector_at(b_, t, elem, data, count);
}

Status Table::string(int id, std::string_view* out) const {
  size_t t;
  GRADRT_RETURN_IF_ERROR(target(id, &t));
  *out = {};
  return t == 0 ? Status::OK() : string_at(b_, t, out);
}

Status Table::table_at(size_t data, uint32_t i, const char* what, Table* out) const {
  const size_t slot = data + 4 * static_cast<size_t>(i);
  uint32_t off;
  GRADRT_RETURN_IF_ERROR(read_u32(b_, slot, &off));
  if (off == 0 || !fits(b_, slot, uint64_t{off})) return oob(what, slot, off, b_.size);
  return Table::at(b_, slot + off, what, out);
}

void Appender::align(size_t align, size_t extra) {
  while ((out_->size() + extra) % align != 0) out_->push_back(0);
}

void Appender::patch(size_t at, size_t target) { store<uint32_t>(out_->data() + at, static_cast<uint32_t>(target - at)); }

size_t Appender::vector(const void* data, uint32_t count, size_t elem, size_t data_align) {
  align(std::max<size_t>(data_align, 4), 4);
  const size_t pos = out_->size();
  out_->resize(pos + 4 + count * elem);
  store<uint32_t>(out_->data() + pos, count);
  if (count) std::memcpy(out_->data() + pos + 4, data, count * elem);
  return pos;
}

size_t Appender::string(std::string_view s) {
  const size_t pos = vector(s.data(), static_cast<uint32_t>(s.size()), 1);
  out_->push_back(0);
  return pos;
}

size_t Appender::table(const std::vector<Field>& fields, std::vector<size_t>* field_pos) {
  // Layout: vtable (uint16s), then the table 8-aligned: soffset, then fields largest first so
  // each lands aligned (8-byte fields at table + 8k; the soffset occupies the first 4 bytes).
  int max_id = -1;
  for (const Field& f : fields) max_id = std::max(max_id, f.id);
  std::vector<size_t> order(fields.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fields[a].size > fields[b].size; });
  std::vector<uint16_t> offs(fields.size());
  size_t cursor = 4;
  bool wide = false;
  for (size_t i : order) {
    const size_t sz = static_cast<size_t>(fields[i].size);
    if (sz == 8) wide = true;
    cursor = (cursor + sz - 1) / sz * sz;
    offs[i] = static_cast<uint16_t>(cursor);
    cursor += sz;
  }
  const size_t tbl_size = (cursor + 3) / 4 * 4;
  const size_t vt_bytes = 4 + 2 * static_cast<size_t>(max_id + 1);
  align(2);
  // Place the vtable so that the table right after it (4-aligned, or 8 with wide fields) follows.
  const size_t tbl_align = wide ? 8 : 4;
  align(tbl_align, vt_bytes % tbl_align);
  const size_t vt = out_->size();
  out_->resize(vt + vt_bytes, 0);
  store<uint16_t>(out_->data() + vt, static_cast<uint16_t>(vt_bytes));
  store<uint16_t>(out_->data() + vt + 2, static_cast<uint16_t>(tbl_size));
  for (size_t i = 0; i < fields.size(); ++i) store<uint16_t>(out_->data() + vt + 4 + 2 * fields[i].id, offs[i]);
  align(tbl_align);
  const size_t tbl = out_->size();
  out_->resize(tbl + tbl_size, 0);
  store<int32_t>(out_->data() + tbl, static_cast<int32_t>(tbl - vt));
  field_pos->assign(fields.size(), 0);
  for (size_t i = 0; i < fields.size(); ++i) {
    uint8_t* p = out_->data() + tbl + offs[i];
    switch (fields[i].size) {
      case 1: store<uint8_t>(p, static_cast<uint8_t>(fields[i].value)); break;
      case 4: store<uint32_t>(p, static_cast<uint32_t>(fields[i].value)); break;
      default: store<uint64_t>(p, fields[i].value); break;
    }
    (*field_pos)[i] = tbl + offs[i];
  }
  return tbl;
}

}  // namespace gradrt::litert::fb

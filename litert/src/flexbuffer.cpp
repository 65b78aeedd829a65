#include "flexbuffer.h"

#include <cstring>

#include "status_macros.h"

namespace gradrt::litert::flex {

namespace {
bool valid_width(size_t w) { return w == 1 || w == 2 || w == 4 || w == 8; }
bool is_typed_vector(Type t) { return (t >= kVectorInt && t <= kVectorString) || t == kVectorBool; }
bool is_fixed_vector(Type t) { return t >= kVectorInt2 && t <= kVectorFloat4; }
}  // namespace

Status Ref::bad(const std::string& msg) const {
  return Status(Code::InvalidArgument, "custom options (FlexBuffer): " + msg);
}

Status Ref::read_uint(size_t pos, size_t width, uint64_t* out) const {
  if (!valid_width(width) || pos > buf_.size() || width > buf_.size() - pos)
    return bad(std::to_string(width) + "-byte value at byte " + std::to_string(pos) + " is outside the " +
               std::to_string(buf_.size()) + "-byte buffer");
  uint64_t v = 0;
  std::memcpy(&v, buf_.data() + pos, width);  // little-endian hosts only (x86-64, aarch64)
  *out = v;
  return Status::OK();
}

Status Ref::root(std::string_view buf, Ref* out) {
  Ref r;
  r.buf_ = buf;
  if (buf.size() < 3) return r.bad("shorter than 3 bytes");
  const size_t width = static_cast<uint8_t>(buf[buf.size() - 1]);
  const uint8_t packed = static_cast<uint8_t>(buf[buf.size() - 2]);
  if (!valid_width(width) || width > buf.size() - 2) return r.bad("root width " + std::to_string(width) + " is invalid");
  r.pos_ = buf.size() - 2 - width;
  r.parent_width_ = width;
  r.width_ = size_t{1} << (packed & 3);
  r.type_ = static_cast<Type>(packed >> 2);
  *out = r;
  return Status::OK();
}

Status Ref::target(size_t* out) const {
  uint64_t d;
  GRADRT_RETURN_IF_ERROR(read_uint(pos_, parent_width_, &d));
  if (d > pos_) return bad("offset " + std::to_string(d) + " at byte " + std::to_string(pos_) + " points before the buffer");
  *out = pos_ - static_cast<size_t>(d);
  return Status::OK();
}

Status Ref::as_int(int64_t* out) const {
  uint64_t v;
  size_t at = pos_, width = parent_width_;
  if (type_ == kIndirectInt || type_ == kIndirectUInt) {
    GRADRT_RETURN_IF_ERROR(target(&at));
    width = width_;
  } else if (type_ != kInt && type_ != kUInt && type_ != kBool) {
    return bad("value of type " + std::to_string(type_) + " is not an integer");
  }
  GRADRT_RETURN_IF_ERROR(read_uint(at, width, &v));
  if (type_ == kInt || type_ == kIndirectInt) {  // sign-extend from `width` bytes
    const int shift = 64 - 8 * static_cast<int>(width);
    *out = shift ? static_cast<int64_t>(v << shift) >> shift : static_cast<int64_t>(v);
  } else {
    *out = static_cast<int64_t>(v);
  }
  return Status::OK();
}

Status Ref::as_double(double* out) const {
  if (type_ != kFloat && type_ != kIndirectFloat) {
    int64_t i;
    GRADRT_RETURN_IF_ERROR(as_int(&i));
    *out = static_cast<double>(i);
    return Status::OK();
  }
  size_t at = pos_, width = parent_width_;
  if (type_ == kIndirectFloat) {
    GRADRT_RETURN_IF_ERROR(target(&at));
    width = width_;
  }
  uint64_t v;
  GRADRT_RETURN_IF_ERROR(read_uint(at, width, &v));
  if (width == 4) {
    float f;
    const uint32_t u = static_cast<uint32_t>(v);
    std::memcpy(&f, &u, 4);
    *out = f;
  } else if (width == 8) {
    std::memcpy(out, &v, 8);
  } else {
    return bad("a float of " + std::to_string(width) + " bytes");
  }
  return Status::OK();
}

Status Ref::as_string(std::string_view* out) const {
  size_t t;
  if (type_ == kKey) {  // NUL-terminated, no length
    GRADRT_RETURN_IF_ERROR(target(&t));
    const void* end = t < buf_.size() ? std::memchr(buf_.data() + t, 0, buf_.size() - t) : nullptr;
    if (!end) return bad("key at byte " + std::to_string(t) + " has no terminating NUL");
    *out = std::string_view(buf_.data() + t, static_cast<const char*>(end) - (buf_.data() + t));
    return Status::OK();
  }
  if (type_ != kString && type_ != kBlob) return bad("value of type " + std::to_string(type_) + " is not a string");
  GRADRT_RETURN_IF_ERROR(target(&t));
  uint64_t n;
  if (t < width_) return bad("string at byte " + std::to_string(t) + " has no room for its length");
  GRADRT_RETURN_IF_ERROR(read_uint(t - width_, width_, &n));
  if (n > buf_.size() - t) return bad("string of " + std::to_string(n) + " bytes at byte " + std::to_string(t) + " is outside the buffer");
  *out = std::string_view(buf_.data() + t, static_cast<size_t>(n));
  return Status::OK();
}

bool Ref::is_vector() const {
  return type_ == kVector || type_ == kMap || is_typed_vector(type_) || is_fixed_vector(type_);
}

Status Ref::size(size_t* out) const {
  if (!is_vector()) return bad("value of type " + std::to_string(type_) + " is not a vector");
  if (is_fixed_vector(type_)) {
    *out = static_cast<size_t>((type_ - kVectorInt2) / 3 + 2);
    return Status::OK();
  }
  size_t t;
  GRADRT_RETURN_IF_ERROR(target(&t));
  if (t < width_) return bad("vector at byte " + std::to_string(t) + " has no room for its length");
  uint64_t n;
  GRADRT_RETURN_IF_ERROR(read_uint(t - width_, width_, &n));
  // Elements (and, untyped, one type byte each) must lie inside the buffer.
  const uint64_t per = width_ + ((type_ == kVector || type_ == kMap) ? 1 : 0);
  if (n > (buf_.size() - t) / per) return bad("vector of " + std::to_string(n) + " elements at byte " + std::to_string(t) + " is outside the buffer");
  *out = static_cast<size_t>(n);
  return Status::OK();
}

Status Ref::at(size_t i, Ref* out) const {
  size_t n, t;
  GRADRT_RETURN_IF_ERROR(size(&n));
  if (i >= n) return bad("element " + std::to_string(i) + " of a " + std::to_string(n) + "-element vector");
  GRADRT_RETURN_IF_ERROR(target(&t));
  Ref r;
  r.buf_ = buf_;
  r.pos_ = t + i * width_;
  r.parent_width_ = width_;
  if (type_ == kVector || type_ == kMap) {
    const uint8_t packed = static_cast<uint8_t>(buf_[t + n * width_ + i]);
    r.type_ = static_cast<Type>(packed >> 2);
    r.width_ = size_t{1} << (packed & 3);
  } else {
    r.type_ = type_ == kVectorBool        ? kBool
              : is_fixed_vector(type_)    ? static_cast<Type>((type_ - kVectorInt2) % 3 + kInt)
                                          : static_cast<Type>(type_ - kVectorInt + kInt);
    r.width_ = width_;
  }
  *out = r;
  return Status::OK();
}

Status Ref::key(size_t i, std::string_view* out) const {
  if (type_ != kMap) return bad("value of type " + std::to_string(type_) + " is not a map");
  size_t n, t;
  GRADRT_RETURN_IF_ERROR(size(&n));
  if (i >= n) return bad("key " + std::to_string(i) + " of a " + std::to_string(n) + "-entry map");
  GRADRT_RETURN_IF_ERROR(target(&t));
  if (t < 3 * width_) return bad("map at byte " + std::to_string(t) + " has no room for its keys");
  // Keys: a typed vector of KEY at (t - 3w) - stored offset, with its own width at t - 2w.
  Ref keys;
  keys.buf_ = buf_;
  keys.pos_ = t - 3 * width_;
  keys.parent_width_ = width_;
  uint64_t kw;
  GRADRT_RETURN_IF_ERROR(read_uint(t - 2 * width_, width_, &kw));
  if (!valid_width(static_cast<size_t>(kw))) return bad("map keys width " + std::to_string(kw));
  keys.width_ = static_cast<size_t>(kw);
  keys.type_ = kVectorKey;
  Ref k;
  GRADRT_RETURN_IF_ERROR(keys.at(i, &k));
  return k.as_string(out);
}

}  // namespace gradrt::litert::flex

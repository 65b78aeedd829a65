#include "npy.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "checked.h"
#include "status_macros.h"

namespace gradrt::npy {

// '=' and '|' mean "the host's order", and the data is copied without swapping.
static_assert(std::endian::native == std::endian::little, "npy.cpp assumes a little-endian host");

namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr uint64_t kMaxHeaderLen = uint64_t{1} << 20;  // NumPy writes ~128 bytes; refuse absurd ones
constexpr size_t kMaxDims = 64;
constexpr size_t kAlign = 64;  // NumPy aligns the data offset to 64 bytes

Status bad(const std::string& message) { return Status(Code::InvalidArgument, "npy: " + message); }

// ---------------------------------------------------------------- reading

// What the header says about the data that follows it.
struct Header {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  uint64_t data_offset = 0;  // bytes before the data: prefix + header dict
  uint64_t data_bytes = 0;   // product(shape) * itemsize
};

// The fixed prefix: magic, version, header length. `n` bytes are available at p.
// On success *dict_start/*dict_len locate the header dict (not yet checked against n).
Status parse_prefix(const unsigned char* p, size_t n, uint64_t* dict_start, uint64_t* dict_len) {
  if (n == 0) return bad("empty file: not a .npy file");
  if (n < sizeof(kMagic) && std::memcmp(p, kMagic, n) == 0)
    return bad("truncated header: file ends inside the magic string");
  if (n < sizeof(kMagic) || std::memcmp(p, kMagic, sizeof(kMagic)) != 0)
    return bad("bad magic: not a .npy file (it must start with \\x93NUMPY)");
  if (n < 8) return bad("truncated header: file ends inside the version bytes");
  const unsigned major = p[6], minor = p[7];
  if (major < 1 || major > 3 || minor != 0)
    return bad("unsupported format version " + std::to_string(major) + "." + std::to_string(minor) +
               " (supported: 1.0, 2.0, 3.0)");
  // 1.0 stores the header length in 2 bytes, 2.0 and 3.0 in 4; both little-endian.
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (n < 8 + len_bytes) return bad("truncated header: file ends inside the header length");
  uint64_t len = 0;
  for (size_t i = 0; i < len_bytes; ++i) len |= uint64_t{p[8 + i]} << (8 * i);
  if (len > kMaxHeaderLen)
    return bad("header length " + std::to_string(len) + " exceeds the limit of " + std::to_string(kMaxHeaderLen));
  *dict_start = 8 + len_bytes;
  *dict_len = len;
  return Status::OK();
}

// A parser for the one Python literal NumPy writes:
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// followed by padding spaces and '\n'. Keys may come in any order; all three are required.
class DictParser {
 public:
  explicit DictParser(std::string_view text) : t_(text) {}

  Status parse(std::string* descr, bool* fortran_order, std::vector<int64_t>* shape) {
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    skip_space();
    if (!eat('{')) return error("expected '{'");
    for (;;) {
      skip_space();
      if (eat('}')) break;
      std::string key;
      Status s = string_literal(&key);
      if (!s.ok()) return s;
      skip_space();
      if (!eat(':')) return error("expected ':' after key '" + key + "'");
      skip_space();
      bool* seen = key == "descr" ? &seen_descr : key == "fortran_order" ? &seen_fortran
                 : key == "shape" ? &seen_shape : nullptr;
      if (seen == nullptr) return error("unexpected key '" + key + "'");
      if (*seen) return error("duplicate key '" + key + "'");
      *seen = true;
      if (key == "descr") {
        if (peek() == '[') return bad("structured dtypes (a list as 'descr') are not supported");
        s = string_literal(descr);
      } else if (key == "fortran_order") {
        s = boolean(fortran_order);
      } else {
        s = tuple(shape);
      }
      if (!s.ok()) return s;
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) break;
      return error("expected ',' or '}'");
    }
    skip_space();
    if (pos_ != t_.size()) return error("unexpected characters after '}'");
    if (!seen_descr || !seen_fortran || !seen_shape)
      return error(std::string("missing key '") + (!seen_descr ? "descr" : !seen_fortran ? "fortran_order" : "shape") +
                   "'");
    return Status::OK();
  }

 private:
  char peek() const { return pos_ < t_.size() ? t_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || pos_ >= t_.size()) return false;
    ++pos_;
    return true;
  }
  bool eat_word(std::string_view w) {
    if (t_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  void skip_space() {
    while (pos_ < t_.size() && (t_[pos_] == ' ' || t_[pos_] == '\n' || t_[pos_] == '\r' || t_[pos_] == '\t')) ++pos_;
  }
  Status error(const std::string& what) const {
    return bad("malformed header dict: " + what + " at offset " + std::to_string(pos_));
  }

  // 'text' or "text"; NumPy never writes escapes, so a backslash is refused.
  Status string_literal(std::string* out) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return error("expected a quoted string");
    ++pos_;
    const size_t begin = pos_;
    while (pos_ < t_.size() && t_[pos_] != quote) {
      if (t_[pos_] == '\\' || t_[pos_] == '\n') return error("unsupported character in string");
      ++pos_;
    }
    if (pos_ >= t_.size()) return error("unterminated string");
    *out = std::string(t_.substr(begin, pos_ - begin));
    ++pos_;
    return Status::OK();
  }

  Status boolean(bool* out) {
    if (eat_word("True")) *out = true;
    else if (eat_word("False")) *out = false;
    else return error("expected True or False");
    return Status::OK();
  }

  // (), (3,), (2, 3) — and (3) too. Python 2 wrote long dims as 3L.
  Status tuple(std::vector<int64_t>* out) {
    out->clear();
    if (!eat('(')) return error("'shape' must be a tuple");
    for (;;) {
      skip_space();
      if (eat(')')) return Status::OK();
      if (out->size() == kMaxDims) return bad("shape has more than " + std::to_string(kMaxDims) + " dimensions");
      int64_t dim = 0;
      GRADRT_RETURN_IF_ERROR(dimension(&dim));
      out->push_back(dim);
      skip_space();
      if (eat(',')) continue;
      if (eat(')')) return Status::OK();
      return error("expected ',' or ')' in shape");
    }
  }

  Status dimension(int64_t* out) {
    if (peek() == '-') return bad("negative dimension in shape");
    if (peek() < '0' || peek() > '9') return error("expected a dimension");
    int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (mul_overflows(v, 10, &v) || add_overflows(v, peek() - '0', &v))
        return bad("shape dimension overflows int64");
      ++pos_;
    }
    eat('L');
    *out = v;
    return Status::OK();
  }

  std::string_view t_;
  size_t pos_ = 0;
};

Status dtype_from_descr(const std::string& descr, DType* out) {
  if (descr.size() == 3 && descr[0] == '>')
    return bad("big-endian data ('" + descr + "') is not supported; save it little-endian ('<" + descr.substr(1) + "')");
  struct Entry { const char* code; DType dtype; };
  static const Entry codes[] = {{"f2", DType::float16}, {"f4", DType::float32}, {"f8", DType::float64},
                               {"i4", DType::int32},   {"i8", DType::int64}};
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '=' || descr[0] == '|')) {
    for (const Entry& c : codes) {
      if (descr.compare(1, 2, c.code) == 0) {
        *out = c.dtype;
        return Status::OK();
      }
    }
  }
  return bad("unsupported dtype '" + descr + "' (supported: <f2, <f4, <f8, <i4, <i8)");
}

// Parses prefix and dict from the first n bytes of a file (they must hold the whole header).
Status parse_header(const unsigned char* p, size_t n, Header* h) {
  uint64_t dict_start = 0, dict_len = 0;
  GRADRT_RETURN_IF_ERROR(parse_prefix(p, n, &dict_start, &dict_len));
  if (dict_len > n - dict_start)
    return bad("truncated header: it claims " + std::to_string(dict_len) + " bytes, the file has " +
               std::to_string(n - dict_start) + " after the prefix");
  std::string descr;
  bool fortran_order = false;
  const std::string_view dict(reinterpret_cast<const char*>(p) + dict_start, dict_len);
  GRADRT_RETURN_IF_ERROR(DictParser(dict).parse(&descr, &fortran_order, &h->shape));
  if (fortran_order) return bad("fortran_order True is not supported; save the array in C order");
  GRADRT_RETURN_IF_ERROR(dtype_from_descr(descr, &h->dtype));
  int64_t elements = 0, bytes = 0;
  GRADRT_RETURN_IF_ERROR(checked_num_elements(h->shape, "npy: shape", &elements));
  if (mul_overflows(elements, static_cast<int64_t>(dtype_size(h->dtype)), &bytes))
    return bad("shape " + shape_string(h->shape) + " is too large");
  h->data_offset = dict_start + dict_len;
  h->data_bytes = static_cast<uint64_t>(bytes);
  return Status::OK();
}

Status check_data_size(const Header& h, uint64_t available) {
  if (available == h.data_bytes) return Status::OK();
  const std::string what = "shape " + shape_string(h.shape) + " of " + dtype_name(h.dtype) + " needs " +
                           std::to_string(h.data_bytes) + " data bytes, the file has " + std::to_string(available);
  return bad(available < h.data_bytes ? "data truncated: " + what : "trailing bytes after the data: " + what);
}

// ---------------------------------------------------------------- writing

std::string shape_tuple(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return "(" + std::to_string(shape[0]) + ",)";  // Python's 1-tuple
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + ")";
}

const char* descr_for(DType t) {
  switch (t) {
    case DType::float16: return "<f2";
    case DType::bfloat16:  // written as float32 values
    case DType::float32: return "<f4";
    case DType::float64: return "<f8";
    case DType::int32: return "<i4";
    case DType::int64: return "<i8";
  }
  return "<f4";
}

// The format 1.0 prefix + header for t, and the number of elements to write after it.
Status make_header(const TensorView& t, std::string* header, int64_t* elements) {
  GRADRT_RETURN_IF_ERROR(checked_num_elements(t.shape, "npy: shape", elements));
  const int64_t file_item = t.dtype == DType::bfloat16 ? 4 : static_cast<int64_t>(dtype_size(t.dtype));
  int64_t bytes = 0;
  if (mul_overflows(*elements, file_item, &bytes)) return bad("shape " + shape_string(t.shape) + " is too large");
  if (*elements > 0 && t.data == nullptr) return bad("tensor of shape " + shape_string(t.shape) + " has no data");
  std::string dict = std::string("{'descr': '") + descr_for(t.dtype) +
                     "', 'fortran_order': False, 'shape': " + shape_tuple(t.shape) + ", }";
  const size_t unpadded = 10 + dict.size() + 1;  // prefix + dict + '\n'
  dict.append((kAlign - unpadded % kAlign) % kAlign, ' ');
  dict += '\n';
  if (dict.size() > 0xffff) return bad("header too long for format 1.0");
  *header = std::string(reinterpret_cast<const char*>(kMagic), sizeof(kMagic));
  *header += '\x01';
  *header += '\x00';
  *header += static_cast<char>(dict.size() & 0xff);
  *header += static_cast<char>(dict.size() >> 8);
  *header += dict;
  return Status::OK();
}

// Calls sink(bytes, n) with the file's data bytes, in pieces (bfloat16 is widened to float32).
template <class Sink>
bool emit_data(const TensorView& t, int64_t elements, Sink&& sink) {
  if (elements == 0) return true;
  if (t.dtype != DType::bfloat16)
    return sink(t.data, static_cast<size_t>(elements) * dtype_size(t.dtype));
  const auto* src = static_cast<const uint16_t*>(t.data);
  float buf[1024];
  for (int64_t i = 0; i < elements;) {
    const int64_t m = std::min<int64_t>(elements - i, 1024);
    for (int64_t j = 0; j < m; ++j) buf[j] = bfloat16_to_float(src[i + j]);
    if (!sink(buf, static_cast<size_t>(m) * sizeof(float))) return false;
    i += m;
  }
  return true;
}

Status io_error(const std::string& what, const std::string& path, int err) {
  return Status(Code::Internal, "npy: cannot " + what + " '" + path + "': " + std::strerror(err));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

}  // namespace

Status read_bytes(const void* data, size_t size, Tensor* out) {
  if (data == nullptr && size > 0) return bad("null data");
  const auto* p = static_cast<const unsigned char*>(data);
  Header h;
  GRADRT_RETURN_IF_ERROR(parse_header(p, size, &h));
  GRADRT_RETURN_IF_ERROR(check_data_size(h, size - h.data_offset));
  Tensor t;
  GRADRT_RETURN_IF_ERROR(Tensor::allocate(h.dtype, h.shape, &t));
  if (h.data_bytes > 0) std::memcpy(t.data(), p + h.data_offset, h.data_bytes);
  *out = std::move(t);
  return Status::OK();
}

Status read_file(const std::string& path, Tensor* out) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return Status(Code::NotFound, "npy: '" + path + "' is not a readable file");
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return Status(Code::NotFound, "npy: cannot stat '" + path + "': " + ec.message());
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status(Code::NotFound, "npy: cannot open '" + path + "': " + std::strerror(errno));

  // Read the 12-byte prefix, then exactly the rest of the header: never the whole file.
  std::vector<unsigned char> head(static_cast<size_t>(std::min<uint64_t>(file_size, 12)));
  if (std::fread(head.data(), 1, head.size(), f.get()) != head.size()) return io_error("read", path, errno);
  uint64_t dict_start = 0, dict_len = 0;
  GRADRT_RETURN_IF_ERROR(parse_prefix(head.data(), head.size(), &dict_start, &dict_len));
  const uint64_t header_end = std::min<uint64_t>(dict_start + dict_len, file_size);
  const size_t have = head.size();
  head.resize(static_cast<size_t>(std::max<uint64_t>(header_end, have)));
  if (head.size() > have && std::fread(head.data() + have, 1, head.size() - have, f.get()) != head.size() - have)
    return io_error("read", path, errno);
  Header h;
  GRADRT_RETURN_IF_ERROR(parse_header(head.data(), head.size(), &h));
  GRADRT_RETURN_IF_ERROR(check_data_size(h, file_size - h.data_offset));

  Tensor t;
  GRADRT_RETURN_IF_ERROR(Tensor::allocate(h.dtype, h.shape, &t));
  if (std::fseek(f.get(), static_cast<long>(h.data_offset), SEEK_SET) != 0) return io_error("seek in", path, errno);
  if (h.data_bytes > 0 && std::fread(t.data(), 1, h.data_bytes, f.get()) != h.data_bytes)
    return bad("data truncated: '" + path + "' changed while it was read");
  *out = std::move(t);
  return Status::OK();
}

std::string encode(const TensorView& t) {
  std::string header;
  int64_t elements = 0;
  if (!make_header(t, &header, &elements).ok()) return "";
  std::string out = std::move(header);
  emit_data(t, elements, [&](const void* p, size_t n) {
    out.append(static_cast<const char*>(p), n);
    return true;
  });
  return out;
}

Status write_file(const std::string& path, const TensorView& t) {
  std::string header;
  int64_t elements = 0;
  GRADRT_RETURN_IF_ERROR(make_header(t, &header, &elements));

  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) return io_error("create", tmp, errno);
  auto sink = [&](const void* p, size_t n) { return std::fwrite(p, 1, n, f.get()) == n; };
  bool wrote = sink(header.data(), header.size()) && emit_data(t, elements, sink);
  int err = wrote ? 0 : errno;
  // fclose flushes: its failure (a full disk) is a failed write too.
  if (std::fclose(f.release()) != 0 && wrote) {
    wrote = false;
    err = errno;
  }
  std::error_code ec;
  if (!wrote) {
    std::filesystem::remove(tmp, ec);
    return io_error("write", path, err);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    std::filesystem::remove(tmp, ec);
    return Status(Code::Internal, "npy: cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
  return Status::OK();
}

}  // namespace gradrt::npy

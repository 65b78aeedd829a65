// AttrValue <-> JSON. Strict RFC 8259 for one value, without objects (no attribute is one).
// Integers that fit int64 become Kind::Int; a fraction, an exponent or an integer beyond
// int64 makes Kind::Float. Depth and length are bounded so that any bytes are safe to parse.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "gradrt/gradrt.h"
#include "status_macros.h"

namespace gradrt {

AttrValue::AttrValue(const std::vector<int64_t>& v) : kind(Kind::List) {
  list.reserve(v.size());
  for (int64_t x : v) list.emplace_back(x);
}

AttrValue::AttrValue(const std::vector<double>& v) : kind(Kind::List) {
  list.reserve(v.size());
  for (double x : v) list.emplace_back(x);
}

namespace {

constexpr int kMaxDepth = 64;
constexpr size_t kMaxLength = size_t{1} << 20;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xC0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xE0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out += static_cast<char>(0xF0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : t_(text) {}

  Status document(AttrValue* out) {
    if (t_.size() > kMaxLength) return error("text longer than " + std::to_string(kMaxLength) + " bytes");
    skip_space();
    if (pos_ == t_.size()) return error("empty text, expected a value");
    GRADRT_RETURN_IF_ERROR(value(out, 0));
    skip_space();
    if (pos_ != t_.size()) return error("unexpected characters after the value");
    return Status::OK();
  }

 private:
  char peek() const { return pos_ < t_.size() ? t_[pos_] : '\0'; }
  bool at_end() const { return pos_ >= t_.size(); }
  void skip_space() {
    while (!at_end() && (t_[pos_] == ' ' || t_[pos_] == '\t' || t_[pos_] == '\n' || t_[pos_] == '\r')) ++pos_;
  }
  Status error(const std::string& what) const {
    return Status(Code::InvalidArgument, "JSON: " + what + " at offset " + std::to_string(pos_));
  }

  Status value(AttrValue* out, int depth) {
    const char c = peek();
    if (c == '[') return array(out, depth + 1);
    if (c == '"') {
      out->kind = AttrValue::Kind::String;
      return string(&out->s);
    }
    if (c == '-' || is_digit(c)) return number(out);
    if (c == '{') return error("objects are not supported (an attribute is null, a boolean, a number, a string or a list)");
    if (literal("true")) *out = AttrValue(true);
    else if (literal("false")) *out = AttrValue(false);
    else if (literal("null")) *out = AttrValue();
    else return error(at_end() ? "unexpected end of text, expected a value" : "invalid value");
    return Status::OK();
  }

  bool literal(std::string_view word) {
    if (t_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Status array(AttrValue* out, int depth) {
    if (depth > kMaxDepth) return error("lists nested deeper than " + std::to_string(kMaxDepth));
    ++pos_;  // '['
    out->kind = AttrValue::Kind::List;
    out->list.clear();
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return Status::OK();
    }
    for (;;) {
      skip_space();
      AttrValue element;
      GRADRT_RETURN_IF_ERROR(value(&element, depth));
      out->list.push_back(std::move(element));
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return Status::OK();
      }
      return error(at_end() ? "unterminated list" : "expected ',' or ']' in a list");
    }
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  Status number(AttrValue* out) {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (is_digit(peek())) {
      while (is_digit(peek())) ++pos_;
    } else {
      return error("invalid number");
    }
    bool integral = true;
    if (peek() == '.') {
      ++pos_;
      if (!is_digit(peek())) return error("expected a digit after '.'");
      while (is_digit(peek())) ++pos_;
      integral = false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) return error("expected a digit in the exponent");
      while (is_digit(peek())) ++pos_;
      integral = false;
    }
    const char* first = t_.data() + start;
    const char* last = t_.data() + pos_;
    if (integral) {
      int64_t i = 0;
      auto r = std::from_chars(first, last, i);
      if (r.ec == std::errc() && r.ptr == last) {
        *out = AttrValue(i);
        return Status::OK();
      }
      // Beyond int64: falls through to a double, as JavaScript would read it.
    }
    double d = 0;
    auto r = std::from_chars(first, last, d);
    if (r.ec == std::errc::result_out_of_range) return error("number " + std::string(first, last) + " out of range");
    if (r.ec != std::errc() || r.ptr != last || !std::isfinite(d)) return error("invalid number");
    *out = AttrValue(d);
    return Status::OK();
  }

  Status string(std::string* out) {
    ++pos_;  // '"'
    out->clear();
    for (;;) {
      if (at_end()) return error("unterminated string");
      const auto c = static_cast<unsigned char>(t_[pos_]);
      if (c == '"') {
        ++pos_;
        return Status::OK();
      }
      if (c < 0x20) return error("unescaped control character in a string");
      GRADRT_RETURN_IF_ERROR(c == '\\' ? escape(out) : c < 0x80 ? plain(out) : utf8(out));
    }
  }

  Status plain(std::string* out) {
    *out += t_[pos_++];
    return Status::OK();
  }

  Status escape(std::string* out) {
    ++pos_;  // '\'
    if (at_end()) return error("unterminated string");
    const char e = t_[pos_++];
    switch (e) {
      case '"': *out += '"'; return Status::OK();
      case '\\': *out += '\\'; return Status::OK();
      case '/': *out += '/'; return Status::OK();
      case 'b': *out += '\b'; return Status::OK();
      case 'f': *out += '\f'; return Status::OK();
      case 'n': *out += '\n'; return Status::OK();
      case 'r': *out += '\r'; return Status::OK();
      case 't': *out += '\t'; return Status::OK();
      case 'u': break;
      default: --pos_; return error("invalid escape '\\" + std::string(1, e) + "'");
    }
    uint32_t cp = 0;
    GRADRT_RETURN_IF_ERROR(hex4(&cp));
    // A code point above U+FFFF is written as a UTF-16 surrogate pair: two \u escapes.
    if (cp >= 0xDC00 && cp <= 0xDFFF) return error("unpaired low surrogate");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (t_.substr(pos_, 2) != "\\u") return error("unpaired high surrogate");
      pos_ += 2;
      uint32_t low = 0;
      GRADRT_RETURN_IF_ERROR(hex4(&low));
      if (low < 0xDC00 || low > 0xDFFF) return error("high surrogate not followed by a low surrogate");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(cp, out);
    return Status::OK();
  }

  Status hex4(uint32_t* cp) {
    if (t_.size() - pos_ < 4) return error("truncated \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int h = hex_value(t_[pos_ + k]);
      if (h < 0) return error("invalid hex digit in \\u escape");
      v = v * 16 + static_cast<uint32_t>(h);
    }
    pos_ += 4;
    *cp = v;
    return Status::OK();
  }

  // One multi-byte UTF-8 sequence, checked (no overlongs, no surrogates, <= U+10FFFF).
  Status utf8(std::string* out) {
    const auto b0 = static_cast<unsigned char>(t_[pos_]);
    int extra = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) extra = 1;
    else if (b0 == 0xE0) extra = 2, lo = 0xA0;
    else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) extra = 2;
    else if (b0 == 0xED) extra = 2, hi = 0x9F;
    else if (b0 == 0xF0) extra = 3, lo = 0x90;
    else if (b0 >= 0xF1 && b0 <= 0xF3) extra = 3;
    else if (b0 == 0xF4) extra = 3, hi = 0x8F;
    else return error("invalid UTF-8 byte");
    if (t_.size() - pos_ <= static_cast<size_t>(extra)) return error("truncated UTF-8 sequence");
    for (int k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(t_[pos_ + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return error("invalid UTF-8 sequence");
    }
    out->append(t_.substr(pos_, extra + 1));
    pos_ += extra + 1;
    return Status::OK();
  }

  std::string_view t_;
  size_t pos_ = 0;
};

void write_string(const std::string& s, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  *out += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20) {
          *out += "\\u00";
          *out += kHex[c >> 4];
          *out += kHex[c & 15];
        } else {
          *out += ch;  // UTF-8 passes through
        }
    }
  }
  *out += '"';
}

void write_double(double d, std::string* out) {
  // JSON has no NaN or infinity; null is what JavaScript's JSON.stringify writes for them.
  if (!std::isfinite(d)) {
    *out += "null";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), d);  // shortest text that reads back exactly
  std::string_view text(buf, static_cast<size_t>(r.ptr - buf));
  *out += text;
  // "1" would read back as an Int: keep it a Float.
  if (text.find_first_of(".eE") == std::string_view::npos) *out += ".0";
}

void write_value(const AttrValue& v, std::string* out) {
  switch (v.kind) {
    case AttrValue::Kind::Null: *out += "null"; return;
    case AttrValue::Kind::Bool: *out += v.b ? "true" : "false"; return;
    case AttrValue::Kind::Int: *out += std::to_string(v.i); return;
    case AttrValue::Kind::Float: write_double(v.f, out); return;
    case AttrValue::Kind::String: write_string(v.s, out); return;
    case AttrValue::Kind::List:
      *out += '[';
      for (size_t k = 0; k < v.list.size(); ++k) {
        if (k) *out += ',';
        write_value(v.list[k], out);
      }
      *out += ']';
      return;
  }
}

}  // namespace

Status AttrValue::parse_json(std::string_view text, AttrValue* out) {
  AttrValue v;
  GRADRT_RETURN_IF_ERROR(Parser(text).document(&v));
  *out = std::move(v);
  return Status::OK();
}

std::string AttrValue::to_json() const {
  std::string out;
  write_value(*this, &out);
  return out;
}

}  // namespace gradrt

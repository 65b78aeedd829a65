#include "data.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <tuple>
#include <cerrno>

// A malformed data file fails the test; a check that holds is not counted as an assertion
// (the counts stay those of the behaviour under test).
#define DATA_REQUIRE(cond, msg) \
  do {                          \
    if (!(cond)) FAIL(msg);     \
  } while (0)

namespace test {

using gradrt::AttrValue;
using gradrt::DType;

const Json* Json::find(std::string_view key) const {
  for (const auto& [k, v] : fields)
    if (k == key) return &v;
  return nullptr;
}

const Json& Json::at(std::string_view key) const {
  const Json* j = find(key);
  DATA_REQUIRE(j != nullptr, "missing key '" << std::string(key) << "'");
  return *j;
}

double Json::number() const {
  if (kind == Kind::Int) return static_cast<double>(i);
  if (kind == Kind::Float) return f;
  DATA_REQUIRE(kind == Kind::String, "expected a number");
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s == "Infinity") return std::numeric_limits<double>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  return static_cast<double>(integer());
}

int64_t Json::integer() const {
  if (kind == Kind::Int) return i;
  DATA_REQUIRE(kind == Kind::String, "expected an integer");
  size_t used = 0;
  const long long v = std::stoll(s, &used);
  DATA_REQUIRE(used == s.size(), "not an integer: '" << s << "'");
  return v;
}

std::vector<int64_t> Json::integers() const {
  std::vector<int64_t> v;
  for (const Json& e : items) v.push_back(e.integer());
  return v;
}

namespace {

class Parser {
 public:
  explicit Parser(std::string_view t) : t_(t) {}
  bool document(Json* out, std::string* error) {
    space();
    if (!value(out, 0) || (space(), pos_ != t_.size())) {
      if (error_.empty()) error_ = "unexpected characters";
      *error = error_ + " at offset " + std::to_string(pos_);
      return false;
    }
    return true;
  }

 private:
  void space() {
    while (pos_ < t_.size() && std::strchr(" \t\r\n", t_[pos_])) ++pos_;
  }
  bool fail(const char* what) {
    error_ = what;
    return false;
  }
  bool eat(char c) {
    space();
    if (pos_ < t_.size() && t_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool value(Json* out, int depth) {
    if (depth > 64) return fail("nested too deeply");
    space();
    if (pos_ >= t_.size()) return fail("unexpected end");
    const char c = t_[pos_];
    if (c == '{') return object(out, depth);
    if (c == '[') return array(out, depth);
    if (c == '"') return out->kind = Json::Kind::String, string(&out->s);
    if (c == '-' || (c >= '0' && c <= '9')) return number(out);
    for (auto [word, kind, b] : {std::tuple{"true", Json::Kind::Bool, true}, {"false", Json::Kind::Bool, false},
                                 {"null", Json::Kind::Null, false}})
      if (t_.substr(pos_, std::strlen(word)) == word) {
        pos_ += std::strlen(word);
        out->kind = kind;
        out->b = b;
        return true;
      }
    return fail("invalid value");
  }
  bool object(Json* out, int depth) {
    ++pos_;
    out->kind = Json::Kind::Object;
    if (eat('}')) return true;
    do {
      std::string key;
      space();
      if (pos_ >= t_.size() || t_[pos_] != '"' || !string(&key)) return fail("expected a key");
      if (!eat(':')) return fail("expected ':'");
      Json v;
      if (!value(&v, depth + 1)) return false;
      out->fields.emplace_back(std::move(key), std::move(v));
    } while (eat(','));
    return eat('}') || fail("expected ',' or '}'");
  }
  bool array(Json* out, int depth) {
    ++pos_;
    out->kind = Json::Kind::Array;
    if (eat(']')) return true;
    do {
      Json v;
      if (!value(&v, depth + 1)) return false;
      out->items.push_back(std::move(v));
    } while (eat(','));
    return eat(']') || fail("expected ',' or ']'");
  }
  bool string(std::string* out) {  // the data files are ASCII: \" \\ \/ \n \t only
    ++pos_;
    while (pos_ < t_.size() && t_[pos_] != '"') {
      char c = t_[pos_++];
      if (c == '\\') {
        if (pos_ >= t_.size()) break;
        const char e = t_[pos_++];
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
        if (!std::strchr("\"\\/nt", e)) return fail("unsupported escape");
      }
      *out += c;
    }
    if (pos_ >= t_.size()) return fail("unterminated string");
    ++pos_;
    return true;
  }
  bool number(Json* out) {
    const size_t start = pos_;
    while (pos_ < t_.size() && std::strchr("+-0123456789.eE", t_[pos_])) ++pos_;
    const std::string text(t_.substr(start, pos_ - start));
    char* end = nullptr;
    if (text.find_first_of(".eE") == std::string::npos) {
      errno = 0;
      out->kind = Json::Kind::Int;
      out->i = std::strtoll(text.c_str(), &end, 10);
      if (errno == ERANGE) return fail("integer out of int64 range");
    } else {
      out->kind = Json::Kind::Float;
      out->f = std::strtod(text.c_str(), &end);
    }
    return (end == text.c_str() + text.size() && !text.empty()) || fail("invalid number");
  }

  std::string_view t_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

bool parse_json(std::string_view text, Json* out, std::string* error) {
  *out = Json();
  return Parser(text).document(out, error);
}

std::string data_dir() {
  if (const char* env = std::getenv("GRADRT_TEST_DATA")) return env;
  return std::string(GRADRT_SOURCE_DIR) + "/tests/data";
}

std::vector<std::pair<std::string, Json>> load_data(const std::string& sub) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(data_dir()) / sub;
  DATA_REQUIRE(fs::is_directory(dir), "no test data directory " << dir.string());
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<std::pair<std::string, Json>> files;
  for (const std::string& p : paths) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream text;
    text << f.rdbuf();
    Json j;
    std::string error;
    DATA_REQUIRE(parse_json(text.str(), &j, &error), p << ": " << error);
    files.emplace_back(fs::path(p).filename().string(), std::move(j));
  }
  DATA_REQUIRE(!files.empty(), "no *.json in " << dir.string());
  return files;
}

Host tensor_from_json(const Json& j, DType t) {
  const std::string& name = j.at("dtype").s;
  DType dtype = t;
  if (name != "T") DATA_REQUIRE(gradrt::dtype_from_name(name, &dtype), "unknown dtype " << name);
  Host h{dtype, j.at("shape").integers(), {}};
  const Json* values = j.find("values");
  const Json* fill = j.find("fill");
  const Json* iota = j.find("iota");
  if (!values && !fill && !iota) return h;  // no data: a null pointer
  const int64_t n = h.size();
  const size_t width = gradrt::dtype_size(dtype);
  h.bytes.resize(static_cast<size_t>(n) * width);
  if (values) DATA_REQUIRE(int64_t(values->items.size()) == n, "values: " << values->items.size() << " for " << n);
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const Json& e = values ? values->items[k] : fill ? *fill : *iota;
    if (dtype == DType::int64 || dtype == DType::int32) {  // exact integers, never through double
      const int64_t x = e.integer() + (iota ? k : 0);
      if (dtype == DType::int64) std::memcpy(h.bytes.data() + 8 * k, &x, 8);
      else {
        const int32_t y = static_cast<int32_t>(x);
        std::memcpy(h.bytes.data() + 4 * k, &y, 4);
      }
    } else {
      v[k] = e.number() + (iota ? double(k) : 0.0);
    }
  }
  if (dtype != DType::int64 && dtype != DType::int32) h.bytes = make(dtype, h.shape, v).bytes;
  return h;
}

AttrValue attr_from_json(const Json& j) {
  switch (j.kind) {
    case Json::Kind::Null: return AttrValue();
    case Json::Kind::Bool: return AttrValue(j.b);
    case Json::Kind::Int: return AttrValue(j.i);
    case Json::Kind::Float: return AttrValue(j.f);
    case Json::Kind::String: return AttrValue(j.s);
    case Json::Kind::Array: {
      AttrValue v;
      v.kind = AttrValue::Kind::List;
      for (const Json& e : j.items) v.list.push_back(attr_from_json(e));
      return v;
    }
    case Json::Kind::Object: return AttrValue(j.at("float").number());
  }
  return AttrValue();
}

gradrt::Attrs attrs_from_json(const Json& j) {
  gradrt::Attrs a;
  for (const auto& [k, v] : j.fields) a[k] = attr_from_json(v);
  return a;
}

void check_values(const gradrt::Tensor& got, const Json& want, double rtol, double atol, const std::string& what) {
  REQUIRE_MESSAGE(got.num_elements() == int64_t(want.items.size()),
                  what << ": " << got.num_elements() << " elements, want " << want.items.size());
  if (got.dtype() == DType::int64) {
    const auto* p = got.data_as<int64_t>();
    for (size_t k = 0; k < want.items.size(); ++k)
      CHECK_MESSAGE(p[k] == want.items[k].integer(), what << " [" << k << "]");
    return;
  }
  const std::vector<double> g = values(got);
  int bad = 0;
  std::ostringstream msg;
  for (size_t k = 0; k < g.size(); ++k) {
    const double w = want.items[k].number();
    if (g[k] == w || (std::isnan(g[k]) && std::isnan(w)) || std::fabs(g[k] - w) <= atol + rtol * std::fabs(w)) continue;
    if (bad++ < 5) msg << " [" << k << "] got " << g[k] << " want " << w << ";";
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << g.size() << " differ:" << msg.str());
}

}  // namespace test

#include "attrs.h"

#include <cmath>

namespace gradrt {

const AttrValue* AttrReader::raw(const std::string& name) {
  read_.insert(name);
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

bool AttrReader::has(const std::string& name) { return raw(name) != nullptr; }

template <class T, class Convert>
Status AttrReader::read(const std::string& name, T* out, std::optional<T> fallback, const char* what,
                        Convert convert) {
  const AttrValue* v = raw(name);
  if (!v) {
    if (!fallback) return missing(name);
    *out = *fallback;
    return Status::OK();
  }
  if (!convert(*v, out)) return error("attribute '" + name + "' must be " + what);
  return Status::OK();
}

namespace {
bool to_integer(const AttrValue& e, int64_t* out) {
  if (e.kind == AttrValue::Kind::Int) {
    *out = e.i;
    return true;
  }
  return false;
}
// Integral floats are accepted in integer lists (JSON-born attributes).
bool to_list_integer(const AttrValue& e, int64_t* out) {
  if (to_integer(e, out)) return true;
  if (e.kind == AttrValue::Kind::Float && std::isfinite(e.f) && e.f == std::floor(e.f) && std::fabs(e.f) < 9.0e18) {
    *out = static_cast<int64_t>(e.f);
    return true;
  }
  return false;
}
bool to_number(const AttrValue& e, double* out) {
  if (e.kind == AttrValue::Kind::Int) *out = static_cast<double>(e.i);
  else if (e.kind == AttrValue::Kind::Float) *out = e.f;
  else return false;
  return true;
}
// A list whose every element converts with `element`.
template <class T, bool (*element)(const AttrValue&, T*)>
bool to_list(const AttrValue& v, std::vector<T>* out) {
  if (v.kind != AttrValue::Kind::List) return false;
  out->clear();
  for (const AttrValue& e : v.list) {
    T x;
    if (!element(e, &x)) return false;
    out->push_back(x);
  }
  return true;
}
}  // namespace

Status AttrReader::int_list(const std::string& name, std::vector<int64_t>* out,
                            std::optional<std::vector<int64_t>> fallback) {
  return read(name, out, std::move(fallback), "a list of integers", to_list<int64_t, to_list_integer>);
}

Status AttrReader::float_list(const std::string& name, std::vector<double>* out,
                              std::optional<std::vector<double>> fallback) {
  return read(name, out, std::move(fallback), "a list of numbers", to_list<double, to_number>);
}

Status AttrReader::str(const std::string& name, std::string* out, std::optional<std::string> fallback) {
  return read(name, out, std::move(fallback), "a string", [](const AttrValue& v, std::string* o) {
    if (v.kind != AttrValue::Kind::String) return false;
    *o = v.s;
    return true;
  });
}

Status AttrReader::boolean(const std::string& name, bool* out, std::optional<bool> fallback) {
  return read(name, out, fallback, "true or false", [](const AttrValue& v, bool* o) {
    if (v.kind != AttrValue::Kind::Bool) return false;
    *o = v.b;
    return true;
  });
}

Status AttrReader::number(const std::string& name, double* out, std::optional<double> fallback) {
  return read(name, out, fallback, "a number", to_number);
}

Status AttrReader::integer(const std::string& name, int64_t* out, std::optional<int64_t> fallback) {
  return read(name, out, fallback, "an integer", to_integer);
}

Status AttrReader::check_unknown() const {
  for (const auto& [name, value] : attrs_) {
    if (!read_.count(name)) return error("unknown attribute '" + name + "'");
  }
  return Status::OK();
}

}  // namespace gradrt

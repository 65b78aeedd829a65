#include "attrs.h"

#include <cmath>

namespace gradrt {

const AttrValue* AttrReader::raw(const std::string& name) {
  read_.insert(name);
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

bool AttrReader::has(const std::string& name) { return raw(name) != nullptr; }

Status AttrReader::int_list(const std::string& name, std::vector<int64_t>* out,
                            std::optional<std::vector<int64_t>> fallback) {
  const AttrValue* v = raw(name);
  if (!v) {
    if (!fallback) return missing(name);
    *out = *fallback;
    return Status::OK();
  }
  if (v->kind != AttrValue::Kind::List) return error("attribute '" + name + "' must be a list of integers");
  out->clear();
  for (const AttrValue& e : v->list) {
    if (e.kind == AttrValue::Kind::Int) {
      out->push_back(e.i);
    } else if (e.kind == AttrValue::Kind::Float && std::isfinite(e.f) && e.f == std::floor(e.f) &&
               std::fabs(e.f) < 9.0e18) {
      out->push_back(static_cast<int64_t>(e.f));
    } else {
      return error("attribute '" + name + "' must be a list of integers");
    }
  }
  return Status::OK();
}

Status AttrReader::float_list(const std::string& name, std::vector<double>* out,
                              std::optional<std::vector<double>> fallback) {
  const AttrValue* v = raw(name);
  if (!v) {
    if (!fallback) return missing(name);
    *out = *fallback;
    return Status::OK();
  }
  if (v->kind != AttrValue::Kind::List) return error("attribute '" + name + "' must be a list of numbers");
  out->clear();
  for (const AttrValue& e : v->list) {
    if (e.kind == AttrValue::Kind::Int) out->push_back(static_cast<double>(e.i));
    else if (e.kind == AttrValue::Kind::Float) out->push_back(e.f);
    else return error("attribute '" + name + "' must be a list of numbers");
  }
  return Status::OK();
}

Status AttrReader::str(const std::string& name, std::string* out, std::optional<std::string> fallback) {
  const AttrValue* v = raw(name);
  if (!v) {
    if (!fallback) return missing(name);
    *out = *fallback;
    return Status::OK();
  }
  if (v->kind != AttrValue::Kind::String) return error("attribute '" + name + "' must be a string");
  *out = v->s;
  return Status::OK();
}

Status AttrReader::boolean(const std::string& name, bool* out, std::optional<bool> fallback) {
  const AttrValue* v = raw(name);
  if (!v) {
    if (!fallback) return missing(name);
    *out = *fallback;
    return Status::OK();
  }
  if (v->kind != AttrValue::Kind::Bool) return error("attribute '" + name + "' must be true or false");
  *out = v->b;
  return Status::OK();
}

Status AttrReader::number(const std::string& name, double* out, std::optional<double> fallback) {
  const AttrValue* v = raw(name);
  if (!v) {
    if (!fallback) return missing(name);
    *out = *fallback;
    return Status::OK();
  }
  if (v->kind == AttrValue::Kind::Int) *out = static_cast<double>(v->i);
  else if (v->kind == AttrValue::Kind::Float) *out = v->f;
  else return error("attribute '" + name + "' must be a number");
  return Status::OK();
}

Status AttrReader::integer(const std::string& name, int64_t* out, std::optional<int64_t> fallback) {
  const AttrValue* v = raw(name);
  if (!v) {
    if (!fallback) return missing(name);
    *out = *fallback;
    return Status::OK();
  }
  if (v->kind != AttrValue::Kind::Int) return error("attribute '" + name + "' must be an integer");
  *out = v->i;
  return Status::OK();
}

Status AttrReader::check_unknown() const {
  for (const auto& [name, value] : attrs_) {
    if (!read_.count(name)) return error("unknown attribute '" + name + "'");
  }
  return Status::OK();
}

}  // namespace gradrt

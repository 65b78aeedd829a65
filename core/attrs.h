// Reads an op's attributes from the JSON-valued Attrs map, applying TF's defaults and
// reporting type errors as InvalidArgument naming the op and the attribute.
// Every attribute the op reads is remembered; check_unknown() refuses the rest
// (a misspelt attribute is an error, as in a TF NodeDef).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"

namespace gradrt {

class AttrReader {
 public:
  AttrReader(const Attrs& attrs, std::string label) : attrs_(attrs), label_(std::move(label)) {}

  const std::string& label() const { return label_; }
  bool has(const std::string& name);
  const AttrValue* raw(const std::string& name);  // nullptr when absent (and marks it read)

  Status int_list(const std::string& name, std::vector<int64_t>* out,
                  std::optional<std::vector<int64_t>> fallback = std::nullopt);
  Status float_list(const std::string& name, std::vector<double>* out,
                    std::optional<std::vector<double>> fallback = std::nullopt);
  Status str(const std::string& name, std::string* out, std::optional<std::string> fallback = std::nullopt);
  Status boolean(const std::string& name, bool* out, std::optional<bool> fallback = std::nullopt);
  Status number(const std::string& name, double* out, std::optional<double> fallback = std::nullopt);
  Status integer(const std::string& name, int64_t* out, std::optional<int64_t> fallback = std::nullopt);

  Status check_unknown() const;
  Status error(const std::string& message) const { return Status(Code::InvalidArgument, label_ + ": " + message); }

 private:
  Status missing(const std::string& name) const { return error("missing required attribute '" + name + "'"); }
  // The common path of the typed readers: absent -> fallback or missing; present -> convert(value, out),
  // which returns false when the value is not `what` ("a string", ...).
  template <class T, class Convert>
  Status read(const std::string& name, T* out, std::optional<T> fallback, const char* what, Convert convert);
  const Attrs& attrs_;
  std::string label_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace gradrt

// The test data files under tests/data/ (golden/*.json, hostile/*.json), read by this suite
// and by the Node suite (web/test/data.js) alike; tests/data/README.md describes the format.
// A small JSON reader that keeps objects (core's AttrValue parser has none) and integers exact
// as int64, and the conversions of its values into test tensors and op attributes.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util.h"

namespace test {

struct Json {
  enum class Kind { Null, Bool, Int, Float, String, Array, Object };
  Kind kind = Kind::Null;
  bool b = false;
  int64_t i = 0;  // Int: a number written without '.', 'e' or 'E'
  double f = 0;   // Float
  std::string s;
  std::vector<Json> items;                          // Array
  std::vector<std::pair<std::string, Json>> fields;  // Object, in file order

  const Json* find(std::string_view key) const;  // nullptr when absent (or not an object)
  const Json& at(std::string_view key) const;    // fails the test when absent
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float; }
  // A number; also "NaN", "Infinity", "-Infinity" and decimal strings (JSON has no
  // non-finite numbers, and JavaScript reads integers beyond 2^53 inexactly).
  double number() const;
  int64_t integer() const;  // an Int, or a decimal string (exact int64)
  std::vector<int64_t> integers() const;
};

// Strict JSON; false with *error on malformed text.
bool parse_json(std::string_view text, Json* out, std::string* error);

// The tests/data directory: $GRADRT_TEST_DATA, else the source tree this binary was built from.
std::string data_dir();
// Every *.json under data_dir()/sub, sorted; each parsed (a malformed file fails the test).
std::vector<std::pair<std::string, Json>> load_data(const std::string& sub);

// {"dtype", "shape", and one of "values" | "fill" | "iota" (first value, step 1); none of them:
// a tensor without data}. dtype "T" takes `t`.
Host tensor_from_json(const Json& j, gradrt::DType t = gradrt::DType::float32);
// An attribute: JSON null/bool/number/string/list; {"float": "NaN"} for non-finite floats.
gradrt::AttrValue attr_from_json(const Json& j);
gradrt::Attrs attrs_from_json(const Json& j);

// Expected values vs outputs: number() of each entry; NaN matches NaN, infinities match exactly;
// int64 outputs compare exactly when the entries are integers.
void check_values(const gradrt::Tensor& got, const Json& want, double rtol, double atol, const std::string& what);

}  // namespace test

// TensorFlow's own test numbers and ops.md's derived worked examples (tests/data/golden/*.json,
// the same files web/test/golden.test.mjs reads), on every backend; plus Philox's known answers.
#include <map>

#include "data.h"
#include "philox.h"

using namespace gradrt;

namespace {

// Each golden case runs once per dtype of "dtypes" (inputs of dtype "T" take it) and once per
// op: its own, then each of "variants" (another op name, inputs added or dropped).
void run_case(const test::Json& c, const std::string& where) {
  std::vector<std::string> dtypes = {"float32"};
  if (const test::Json* d = c.find("dtypes")) {
    dtypes.clear();
    for (const test::Json& e : d->items) dtypes.push_back(e.s);
  }
  std::vector<const test::Json*> variants = {nullptr};
  if (const test::Json* v = c.find("variants"))
    for (const test::Json& e : v->items) variants.push_back(&e);
  const Attrs attrs = test::attrs_from_json(c.at("attrs"));
  for (const std::string& dtype_name : dtypes) {
    DType dtype;
    REQUIRE(dtype_from_name(dtype_name, &dtype));
    for (const test::Json* variant : variants) {
      std::string op = c.at("op").s;
      std::map<std::string, test::Host> in;
      for (const auto& [name, t] : c.at("inputs").fields) in[name] = test::tensor_from_json(t, dtype);
      if (variant) {
        op = variant->at("op").s;
        if (const test::Json* drop = variant->find("drop"))
          for (const test::Json& d : drop->items) in.erase(d.s);
        if (const test::Json* add = variant->find("inputs"))
          for (const auto& [name, t] : add->fields) in[name] = test::tensor_from_json(t, dtype);
      }
      const test::Named named(in.begin(), in.end());
      for (const std::string& backend : test::backends()) {
        const std::string what = where + " " + op + " " + dtype_name + " on " + backend;
        CAPTURE(what);
        test::Result r = test::run(op, named, attrs, backend);
        if (test::device_lacks_dtype(r.status)) continue;
        REQUIRE_MESSAGE(r.status.ok(), r.status.to_string());
        for (const test::Json& o : c.at("outputs").items) {
          const size_t index = size_t(o.at("index").integer());
          REQUIRE(index < r.outputs.size());
          if (const test::Json* shape = o.find("shape")) CHECK(r.out(index).shape() == shape->integers());
          const test::Json* values = o.find("values");
          if (!values) continue;
          double rtol = 1e-6, atol = 1e-5;  // unless the case (per dtype) or the output says otherwise
          if (const test::Json* t = c.find("rtol"); t && t->find(dtype_name)) rtol = t->at(dtype_name).number();
          if (const test::Json* t = o.find("rtol")) rtol = t->number();
          if (const test::Json* t = o.find("atol")) atol = t->number();
          test::check_values(r.out(index), *values, rtol, atol, what + " output " + std::to_string(index));
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("golden: every case of tests/data/golden on every backend") {
  int cases = 0;
  for (const auto& [file, doc] : test::load_data("golden"))
    for (const test::Json& c : doc.at("cases").items) {
      run_case(c, file + ": " + c.at("name").s);
      ++cases;
    }
  MESSAGE(cases << " golden cases");
  CHECK(cases > 0);
}

TEST_CASE("golden: Philox4x32-10 known answers (ops.md 5.4)") {
  Philox zero(Philox::Block{0, 0, 0, 0}, {0, 0});
  CHECK(zero.next_block() == Philox::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  Philox ones(Philox::Block{~0u, ~0u, ~0u, ~0u}, {~0u, ~0u});
  CHECK(ones.next_block() == Philox::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  Philox pi(Philox::Block{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0});
  CHECK(pi.next_block() == Philox::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

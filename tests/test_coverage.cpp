// Walks gradrt::ops() and fails when an op has no golden case (tests/data/golden), no sweep
// or gradient-check case (declared by test_sweep.cpp / test_gradcheck.cpp, checked there
// against what they ran) or no hostile case (tests/data/hostile), unless tests/data/coverage.json
// exempts it for that kind with a reason. A stale exemption (the op is covered) fails too.
#include <set>
#include <string>

#include "coverage.h"
#include "data.h"

namespace {

// Every op a data case runs: its "op" and its variants' ops.
std::set<std::string> ops_in(const std::string& sub) {
  std::set<std::string> ops;
  for (const auto& [file, doc] : test::load_data(sub))
    for (const test::Json& c : doc.at("cases").items) {
      ops.insert(c.at("op").s);
      if (const test::Json* v = c.find("variants"))
        for (const test::Json& e : v->items) ops.insert(e.at("op").s);
    }
  return ops;
}

}  // namespace

TEST_CASE("coverage: every op has golden, sweep, gradient-check and hostile cases") {
  test::Json exemptions;
  std::string error;
  {
    auto files = test::load_data(".");
    bool found = false;
    for (auto& [file, doc] : files)
      if (file == "coverage.json") exemptions = std::move(doc), found = true;
    REQUIRE_MESSAGE(found, "tests/data/coverage.json is missing");
  }
  const std::set<std::string> golden = ops_in("golden"), hostile = ops_in("hostile");
  const struct {
    const char* kind;
    const std::set<std::string>& ops;
  } kinds[] = {{"golden", golden}, {"sweep", test::declared("sweep")}, {"gradcheck", test::declared("gradcheck")},
               {"hostile", hostile}};
  std::set<std::string> names;
  for (const gradrt::OpInfo& op : gradrt::ops()) names.insert(op.name);
  const test::Json& exempt = exemptions.at("exempt");
  for (const auto& [kind, list] : exempt.fields)
    for (const auto& [op, reason] : list.fields) {
      CAPTURE(kind);
      CAPTURE(op);
      CHECK_MESSAGE(names.count(op) == 1, "exemption for an op that gradrt::ops() does not list");
      CHECK_MESSAGE(reason.s.size() > 10, "an exemption needs its reason");
    }
  int missing = 0;
  for (const std::string& op : names)
    for (const auto& k : kinds) {
      const test::Json* list = exempt.find(k.kind);
      const bool exempted = list && list->find(op);
      const bool covered = k.ops.count(op) == 1;
      const std::string kind = k.kind;
      CAPTURE(op);
      CAPTURE(kind);
      CHECK_MESSAGE(covered != exempted, (covered ? "stale exemption: the op is covered"
                                                  : "no case of this kind and no exemption in tests/data/coverage.json"));
      missing += !covered && !exempted;
    }
  CHECK(missing == 0);
}

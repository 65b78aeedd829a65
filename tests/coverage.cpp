#include "coverage.h"

#include <doctest/doctest.h>

#include <map>

namespace test {

namespace {

std::map<std::string, std::set<std::string>>& declarations() {
  static std::map<std::string, std::set<std::string>> m;
  return m;
}
std::map<std::string, std::set<std::string>>& record() {
  static std::map<std::string, std::set<std::string>> m;
  return m;
}

}  // namespace

bool declare_coverage(const char* kind, std::initializer_list<const char*> ops) {
  for (const char* op : ops) declarations()[kind].insert(op);
  return true;
}

const std::set<std::string>& declared(const std::string& kind) { return declarations()[kind]; }

void ran(const std::string& kind, const std::string& op) { record()[kind].insert(op); }

void check_declared_ran(const std::string& kind) {
  const std::set<std::string>& ops = record()[kind];
  if (ops.empty()) {
    MESSAGE("skipped: no " << kind << " case ran in this process");
    return;
  }
  for (const std::string& op : declared(kind)) {
    CAPTURE(op);
    CHECK_MESSAGE(ops.count(op) == 1, kind << " declares " << op << " but never ran it");
  }
}

}  // namespace test

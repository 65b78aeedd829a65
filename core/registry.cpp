// The op list (ops.inc) turned into a table of implementations (run_op and plans: plan.cpp),
// plus the queries (ops, backends) that the CLI and the bindings show.
#include <new>
#include <sstream>

#include "backend.h"
#include "op_context.h"
#include "ops/ops.h"
#include "registry.h"

namespace gradrt {
namespace {

struct OpEntry {
  OpInfo info;
  const char* stem;
  OpFn fn;
};

std::vector<std::string> split(const char* list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

const std::vector<OpEntry>& table() {
  static const std::vector<OpEntry> entries = [] {
    std::vector<OpEntry> v;
#define GRADRT_OP(NAME, STEM, INPUTS, OUTPUTS) v.push_back({{#NAME, split(INPUTS), split(OUTPUTS)}, #STEM, &run_##STEM});
#include "gradrt/ops.inc"
    return v;
  }();
  return entries;
}

const OpEntry* find_entry(std::string_view name) {
  for (const OpEntry& e : table())
    if (e.info.name == name) return &e;
  return nullptr;
}

}  // namespace

const OpInfo* find_op(std::string_view name) {
  const OpEntry* e = find_entry(name);
  return e ? &e->info : nullptr;
}

const std::vector<OpInfo>& ops() {
  static const std::vector<OpInfo> infos = [] {
    std::vector<OpInfo> v;
    for (const OpEntry& e : table()) v.push_back(e.info);
    return v;
  }();
  return infos;
}

OpFn op_function(const OpInfo& info) {
  for (const OpEntry& e : table())
    if (&e.info == &info) return e.fn;
  return nullptr;
}

Status check_input_names(const OpInfo& info, const Inputs& inputs) {
  for (const auto& [name, view] : inputs) {
    bool known = false;
    for (const std::string& in : info.inputs) known = known || in == name;
    if (!known) return Status(Code::InvalidArgument, info.name + ": unknown input '" + name + "'");
  }
  return Status::OK();
}

std::vector<BackendInfo> backends() {
  std::vector<BackendInfo> list;
  for (Backend* b : all_backends()) {
    Status s = b->available();
    list.push_back({b->name(), s.ok(), s.ok() ? b->detail() : s.message()});
  }
  if (!vulkan_backend()) list.push_back({"vulkan", false, "built without the Vulkan backend"});
  return list;
}

// The op's kernels share their cost and offload (kernels.h): asking about the first one is enough.
std::string auto_backend(std::string_view op) {
  for (const OpEntry& e : table())
    if (e.info.name == op)
      for (int k = 0; k < kNumKernels; ++k)
        if (std::string_view(kKernelInfo[k].op) == e.stem) return auto_backend_for(Kernel(k), INT64_MAX)->name();
  return cpu_backend()->name();
}

}  // namespace gradrt

#include "variants.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

namespace test {

namespace hooks = gradrt::vk::testing;

gradrt::Backend* vulkan_or_skip() {
  if (!gradrt::vulkan_backend() || !hooks::validated_backend) {
    MESSAGE("skipped: gradrt was built without the Vulkan backend");
    return nullptr;
  }
  gradrt::Backend* b = hooks::validated_backend();
  const gradrt::Status s = b->available();
  if (!s.ok()) {
    MESSAGE("skipped: " << s.to_string());
    return nullptr;
  }
  static bool once = [] {
    const std::string state = std::string("Khronos validation layer: ") +
                              (hooks::validation_enabled() ? "on" : "off (VK_LAYER_KHRONOS_validation not installed)");
    MESSAGE(state);
    return true;
  }();
  (void)once;
  return b;
}

ValidationCheck::ValidationCheck() : before(hooks::validation_messages ? hooks::validation_messages().size() : 0) {}

ValidationCheck::~ValidationCheck() {
  if (!hooks::validation_messages) return;
  const auto all = hooks::validation_messages();
  for (size_t i = before; i < all.size() && i < before + 5; ++i) MESSAGE("validation: " << all[i]);
  CHECK_MESSAGE(all.size() == before, (all.size() - before) << " Vulkan validation messages");
}

namespace {

bool starts_with_any(const std::string& name, const std::string& prefixes) {  // comma-separated
  for (size_t at = 0; at <= prefixes.size();) {
    const size_t end = std::min(prefixes.find(',', at), prefixes.size());
    const std::string p = prefixes.substr(at, end - at);
    if (!p.empty() && name.compare(0, p.size(), p) == 0) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

std::vector<Variant> variants(const std::string& only) {
  const char* env = std::getenv("GRADRT_TEST_VARIANTS");
  const std::string wanted = env ? env : "";
  auto keep = [&](const std::string& name) {
    return (only.empty() || starts_with_any(name, only)) && (wanted.empty() || starts_with_any(name, wanted));
  };
  std::vector<Variant> list;
  for (gradrt::simd::Isa isa : gradrt::simd::supported_isas()) {
    Variant v;
    v.name = std::string("cpu:") + gradrt::simd::isa_name(isa);
    v.backend = gradrt::cpu_backend();
    v.isa = isa;
    v.rerun_threads = {2, 3};
    if (keep(v.name)) list.push_back(v);
  }
  if (!keep("vulkan")) return list;
  if (gradrt::Backend* vk = vulkan_or_skip()) {
    Variant v;
    v.name = "vulkan";
    v.backend = vk;
    v.gpu = true;
    v.factor = 16;  // float accumulation on the device, in another order than the cpu's
    v.rerun_threads = {1};
    list.push_back(v);
  }
  return list;
}

void select(const Variant& v) {
  if (!v.gpu) REQUIRE(gradrt::simd::set_cpu_isa(v.isa));
}

}  // namespace test

// The Vulkan host (vulkan/): what a run leaves behind and how it fails. Runs reuse one
// submission (command buffer, fence, descriptor pool); jobs from several threads at once on one
// context (the validation layer checks the command pools are not shared); a device lost during
// a run and a run past GRADRT_VULKAN_TIMEOUT_S become Unavailable, the context stays unusable,
// and destroying it afterwards is clean. Faults are injected at the fence wait (after the real
// wait), through the hooks in vulkan/testing.cpp. Skipped without a Vulkan device.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "gradrt/gradrt.h"

namespace gradrt::vk::testing {
__attribute__((weak)) std::vector<std::string> validation_messages();
__attribute__((weak)) Status fault_probe(const std::string& fault, Status* during, Status* after);
__attribute__((weak)) Status concurrency_probe(int threads, int runs, int* made);
}  // namespace gradrt::vk::testing

namespace {

using gradrt::Code;
using gradrt::Status;
namespace hooks = gradrt::vk::testing;

// False (after saying why) when the status says there is no Vulkan here.
bool have_vulkan(const Status& s) {
  if (s.code() == Code::Unavailable) {
    MESSAGE("skipped: " << s.to_string());
    return false;
  }
  return true;
}

size_t message_count() { return hooks::validation_messages ? hooks::validation_messages().size() : 0; }

void check_no_new_messages(size_t before) {
  if (!hooks::validation_messages) return;
  const auto all = hooks::validation_messages();
  for (size_t i = before; i < all.size() && i < before + 5; ++i) MESSAGE("validation: " << all[i]);
  CHECK_MESSAGE(all.size() == before, (all.size() - before) << " Vulkan validation messages");
}

TEST_CASE("vulkan: runs reuse one submission; jobs from several threads at once") {
  if (!hooks::concurrency_probe) {
    MESSAGE("skipped: gradrt was built without the Vulkan backend");
    return;
  }
  const size_t before = message_count();
  int made = 0;
  Status s = hooks::concurrency_probe(1, 20, &made);
  if (!have_vulkan(s)) return;
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  CHECK(made == 1);  // 20 runs one after the other: one command buffer, fence, descriptor pool
  s = hooks::concurrency_probe(4, 25, &made);
  CHECK_MESSAGE(s.ok(), s.to_string());
  CHECK(made >= 1);
  CHECK(made <= 4);  // at most one per thread running at the same time
  check_no_new_messages(before);
}

void check_fault(const std::string& fault, const std::string& says) {
  if (!hooks::fault_probe) {
    MESSAGE("skipped: gradrt was built without the Vulkan backend");
    return;
  }
  const size_t before = message_count();
  Status during, after;
  const Status s = hooks::fault_probe(fault, &during, &after);
  if (!have_vulkan(s)) return;
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  CHECK(during.code() == Code::Unavailable);
  CHECK_MESSAGE(during.message().find(says) != std::string::npos, during.to_string());
  CHECK(after.code() == Code::Unavailable);
  CHECK_MESSAGE(after.message().find("lost earlier") != std::string::npos, after.to_string());
  check_no_new_messages(before);  // the abandoned run's objects were freed once known done
}

TEST_CASE("vulkan: a device lost during a run: Unavailable, and from then on") {
  check_fault("device_lost", "VK_ERROR_DEVICE_LOST");
}

TEST_CASE("vulkan: a run past GRADRT_VULKAN_TIMEOUT_S: Unavailable, and from then on") {
  check_fault("timeout", "did not finish within");
}

}  // namespace

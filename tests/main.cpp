#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

// Defined in vulkan/vulkan_backend.cpp; null when gradrt is built without Vulkan.
namespace gradrt::vk::testing {
__attribute__((weak)) std::vector<std::string> validation_messages();
}

// Runs the selected test cases, then fails the run if the Khronos validation layer said
// anything at all (GRADRT_VULKAN_VALIDATION=1): the backends:* and vulkan:* cases check their
// own validated instance, this catches the vulkan backend used through run_op by the sweep,
// golden and hostile cases.
int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int rc = context.run();
  if (context.shouldExit() || !gradrt::vk::testing::validation_messages) return rc;
  const std::vector<std::string> messages = gradrt::vk::testing::validation_messages();
  if (messages.empty()) return rc;
  std::fprintf(stderr, "FAILED: %zu Vulkan validation messages during the run; the first:\n", messages.size());
  for (size_t i = 0; i < messages.size() && i < 5; ++i) std::fprintf(stderr, "  %s\n", messages[i].c_str());
  return rc ? rc : 1;
}

// Fault injection for the tests (hooks in testing.cpp). Production code asks wait_fault() after
// each fence wait; nothing is injected unless a test hook asked for it.
#pragma once

#include "loader.h"

namespace gradrt::vk {
class Submissions;
}

namespace gradrt::vk::testing {

// The result to report instead of VK_SUCCESS for the next wait on `target`'s fences (once), or
// VK_SUCCESS when none was injected. (Also keeps testing.cpp's hooks in the link: the library
// is static, and the tests only refer to the hooks weakly.)
VkResult wait_fault(const Submissions* target);

}  // namespace gradrt::vk::testing

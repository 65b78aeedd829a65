#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

// LeakSanitizer (GRADRT_SANITIZE=ON): the Vulkan loader and Mesa's lavapipe driver keep
// allocations for the life of the process; they are not gradrt's leaks. (A weak hook the
// sanitizer runtime calls; harmless in other builds.)
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libvulkan.so\nleak:libvulkan_lvp.so\nleak:libvulkan_radeon.so\nleak:libvulkan_intel.so\n"
         "leak:libVkLayer_khronos_validation.so\nleak:libdrm\nleak:libLLVM\n";
}

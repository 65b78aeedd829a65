// LeakSanitizer suppressions for the programs built with -DGRADRT_SANITIZE=ON (the test
// binary and the CLI): the Vulkan loader, Mesa's drivers and the Khronos validation layer
// keep allocations alive past exit that are theirs, not ours.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libvulkan.so\nleak:libvulkan_lvp.so\nleak:libvulkan_radeon.so\nleak:libvulkan_intel.so\n"
         "leak:libVkLayer_khronos_validation.so\nleak:libdrm\nleak:libLLVM\n";
}

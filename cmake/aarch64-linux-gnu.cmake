# Cross-compiling gradrt for 64-bit Arm Linux with Debian's g++-aarch64-linux-gnu; ctest runs
# the binaries under qemu-user (Debian package qemu-user).
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   cmake --build build-aarch64 -j2 && ctest --test-dir build-aarch64
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)  # build tools (glslangValidator) are the host's
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)   # never link a host x86-64 library
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# xsimd, doctest and the Vulkan headers are architecture-independent, but Debian installs them
# in the host's /usr/include only. Letting find_path return /usr/include would put
# -I/usr/include (the host's C library headers) ahead of the aarch64 sysroot's, so expose just
# those through a small extra root of symlinks in the build folder.
set(GRADRT_CROSS_HEADER_ROOT ${CMAKE_BINARY_DIR}/cross-headers)
foreach(dep xsimd doctest vulkan vk_video)
  if(EXISTS /usr/include/${dep} AND NOT EXISTS ${GRADRT_CROSS_HEADER_ROOT}/usr/include/${dep})
    file(MAKE_DIRECTORY ${GRADRT_CROSS_HEADER_ROOT}/usr/include)
    file(CREATE_LINK /usr/include/${dep} ${GRADRT_CROSS_HEADER_ROOT}/usr/include/${dep} SYMBOLIC)
  endif()
endforeach()
list(APPEND CMAKE_FIND_ROOT_PATH ${GRADRT_CROSS_HEADER_ROOT})

# -L: where qemu finds the aarch64 dynamic loader and libc.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)

# Off by default here: there is no aarch64 Vulkan loader to test against under qemu. A cache
# entry, so -DGRADRT_VULKAN=AUTO turns it back on (SPIR-V is portable and the loader is
# dlopen'ed at run time: no link dependency; without a loader the backend is Unavailable).
set(GRADRT_VULKAN OFF CACHE STRING "Vulkan backend: AUTO, ON, OFF")

# Initial cache for the Emscripten builds (emcmake cmake ... -C wasm/preload.cmake).
# Emscripten's sysroot hides /usr/include, and adding /usr/include itself would pull in
# glibc headers, so xsimd is reached through a folder that holds only a link to it.
set(GRADRT_CLI OFF CACHE BOOL "")
set(GRADRT_TESTS OFF CACHE BOOL "")
set(GRADRT_VULKAN OFF CACHE STRING "")
set(GRADRT_WASM_SIMD ON CACHE BOOL "Build the WASM SIMD128 flavour (OFF: the scalar flavour)")
if(NOT DEFINED XSIMD_INCLUDE_DIR)
  set(_xsimd_dir "${CMAKE_BINARY_DIR}/xsimd-include")
  file(MAKE_DIRECTORY "${_xsimd_dir}")
  if(NOT EXISTS "${_xsimd_dir}/xsimd")
    file(CREATE_LINK /usr/include/xsimd "${_xsimd_dir}/xsimd" SYMBOLIC)
  endif()
  set(XSIMD_INCLUDE_DIR "${_xsimd_dir}" CACHE PATH "xsimd headers, reachable from Emscripten's sysroot")
endif()

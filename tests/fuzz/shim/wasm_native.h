// Force-included (-include) into wasm/bindings.cpp for the native fuzz build.
// WebAssembly linear memory starts at address 0; natively the fuzz harness maps an arena
// at a fixed low address and reports "memory size" as the arena's end, so that
// bindings.cpp's bounds checks (p >= 16, p + n <= memory size) run exactly as written.
#pragma once
#include <cstddef>
extern "C" size_t gradrt_fuzz_memory_pages(int index);
#define __builtin_wasm_memory_size(index) gradrt_fuzz_memory_pages(index)

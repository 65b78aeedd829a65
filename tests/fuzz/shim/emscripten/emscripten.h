// Native stand-in for <emscripten/emscripten.h>, so that wasm/bindings.cpp compiles into
// the fuzz_wasm_abi target unchanged. Only what bindings.cpp uses.
#pragma once
#define EMSCRIPTEN_KEEPALIVE __attribute__((used))

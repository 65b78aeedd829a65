// Argument decoding of the wasm C ABI (bindings.cpp), kept free of Emscripten so that the
// native fuzz target (fuzz_abi.cpp) runs the same code over a byte buffer that stands in
// for the wasm heap. Every address, count and size is checked before it is read: bad
// arguments give an InvalidArgument status, never an out-of-bounds read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gradrt/gradrt.h"

namespace gradrt::wasm {

// Linear memory: address a (a < size) is the byte at base + a. Addresses below 16 (the
// null page) are refused.
struct Heap {
  uintptr_t base = 0;
  size_t size = 0;
  bool contains(uint64_t addr, uint64_t bytes) const { return addr >= 16 && addr <= size && bytes <= size - addr; }
  template <class T = char> const T* at(uint64_t addr) const { return reinterpret_cast<const T*>(base + addr); }
};

constexpr uint32_t kMaxInputs = 16;
constexpr uint32_t kMaxRank = 8;
constexpr size_t kMaxAttrsBytes = 1 << 20;
constexpr size_t kMaxNameBytes = 256;

// A NUL-terminated string at addr, at most max bytes long.
Status read_string(const Heap& heap, uint64_t addr, size_t max, const char* what, std::string_view* out);

// The input table: table_len float64 values at table_addr, one record per input:
//   name_addr, dtype, rank, data_addr, data_bytes, dim_0 .. dim_{rank-1}
// (float64 because every address, size and dimension of a 32-bit heap is exact in it).
// The views point into the heap. specs: a record with data address 0 is a spec without data
// (prepare; its data_bytes still give its size).
Status decode_inputs(const Heap& heap, uint64_t table_addr, uint32_t table_len, Inputs* inputs, bool specs = false);

// A plan run's arguments (gradrt_plan_run): u32 words at args_addr, two per input of `inputs`
// in its (name) order, the data address and byte count (which must be the spec's), then one
// per output: a heap address with room for out_bytes[j] to write output j into, or 0 (gradrt
// allocates). Sets the inputs' data pointers and *dest.
Status decode_plan_args(const Heap& heap, uint64_t args_addr, Inputs* inputs, const std::vector<size_t>& out_bytes,
                        std::vector<void*>* dest);

// {"name": value, ...}: each key and each value goes through AttrValue::parse_json.
Status decode_attrs(std::string_view text, Attrs* attrs);

}  // namespace gradrt::wasm

// libFuzzer target: the wasm C ABI's argument decoding (wasm/bindings.cpp, compiled
// natively with tests/fuzz/shim). The harness lays out, inside an arena standing in for
// the wasm heap, the strings and the float64 input table that web/src/runtime.js would
// write, with fuzzed values: NaN/huge/negative/fractional table entries, pointers inside,
// at the edge of and past the heap, misaligned or unterminated strings, wrong byte counts.
// Invariants: no crash or UB; gradrt_run returns 0 exactly when gradrt_outputs_json()
// describes outputs, otherwise a valid status code with a non-empty message; outputs are
// released cleanly.
#include <fuzzer/FuzzedDataProvider.h>
#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"

extern "C" {
void* gradrt_alloc(double bytes);
void gradrt_dealloc(void* p);
const char* gradrt_info_json();
int gradrt_run(uintptr_t op_ptr, uintptr_t attrs_ptr, uintptr_t table_ptr, uint32_t table_len, uintptr_t backend_ptr);
const char* gradrt_error_message();
const char* gradrt_outputs_json();
void gradrt_release_outputs();
}

namespace {

// The arena: "wasm addresses" are native addresses in [kBase, kBase + kSize); the heap
// size reported to bindings.cpp is kBase + kSize, so every pointer the harness passes
// is either in the arena, below 16 (the null page), or past the end.
constexpr uintptr_t kBase = 0x10000000;
constexpr size_t kSize = 1 << 20;
unsigned char* g_arena = nullptr;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_wasm_abi invariant broken: %s\n", what.c_str());
  std::abort();
}

// Bump allocation inside the arena, reset per input.
struct Heap {
  size_t top = 64;
  uintptr_t put(const void* data, size_t n, size_t align = 8) {
    top = (top + align - 1) / align * align;
    if (top + n > kSize) return 0;
    uintptr_t p = kBase + top;
    if (n) std::memcpy(g_arena + top, data, n);
    top += n;
    return p;
  }
  uintptr_t str(const std::string& s) { return put(s.c_str(), s.size() + 1, 1); }
};

// A pointer field: usually a real one, sometimes hostile.
double pointer(FuzzedDataProvider& fdp, uintptr_t real) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 15)) {
    case 0: return double(fdp.ConsumeIntegralInRange<int>(0, 15));                   // null page
    case 1: return double(kBase + kSize - fdp.ConsumeIntegralInRange<int>(0, 8));    // heap end
    case 2: return double(kBase + kSize + fdp.ConsumeIntegralInRange<int>(1, 1000)); // past it
    case 3: return double(real) + 1;                                                  // misaligned
    case 4: return 4294967295.0;
    default: return double(real);
  }
}

// A numeric table field: usually exact, sometimes not an integer at all.
double number(FuzzedDataProvider& fdp, double exact) {
  switch (fdp.ConsumeIntegralInRange<int>(0, 19)) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -1;
    case 3: return exact + 0.5;
    case 4: return 1e300;
    case 5: return fdp.ConsumeFloatingPoint<double>();
    default: return exact;
  }
}

}  // namespace

extern "C" size_t gradrt_fuzz_memory_pages(int) { return (kBase + kSize) / 65536; }

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  void* p = mmap(reinterpret_cast<void*>(kBase), kSize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p != reinterpret_cast<void*>(kBase)) {
    std::perror("fuzz_wasm_abi: cannot map the arena at 0x10000000");
    std::abort();
  }
  g_arena = static_cast<unsigned char*>(p);
  gradrt::set_max_tensor_elements(int64_t{1} << 20);
  if (gradrt_info_json()[0] != '{') fail("info json");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  std::memset(g_arena, 0xAB, kSize);  // no stale terminators from the last input
  Heap heap;
  const auto& ops = gradrt::ops();
  const gradrt::OpInfo& info = ops[fdp.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  std::string op = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? fdp.ConsumeRandomLengthString(300) : info.name;
  std::string attrs = fdp.ConsumeRandomLengthString(200);
  static const char* backends[] = {"reference", "cpu", "auto", "vulkan", "", "gpu"};
  std::string backend = backends[fdp.ConsumeIntegralInRange<int>(0, 5)];

  uintptr_t op_ptr = heap.str(op);
  uintptr_t attrs_ptr = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? 0 : heap.str(attrs);
  uintptr_t backend_ptr = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? 0 : heap.str(backend);
  if (fdp.ConsumeIntegralInRange<int>(0, 31) == 0) {  // an unterminated string at the heap's end
    size_t n = fdp.ConsumeIntegralInRange<size_t>(1, 64);
    std::memset(g_arena + kSize - n, 'x', n);
    op_ptr = kBase + kSize - n;
  }

  // The input table: name_ptr, dtype, rank, data_ptr, data_bytes, dims...
  std::vector<double> table;
  int count = fdp.ConsumeIntegralInRange<int>(0, 7);
  for (int k = 0; k < count; ++k) {
    std::string name = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 || info.inputs.empty()
                           ? fdp.ConsumeRandomLengthString(20)
                           : info.inputs[fdp.ConsumeIntegralInRange<size_t>(0, info.inputs.size() - 1)];
    int dtype = fdp.ConsumeIntegralInRange<int>(0, 5);
    int rank = fdp.ConsumeIntegralInRange<int>(0, 9);
    std::vector<double> dims;
    double elements = 1;
    for (int d = 0; d < rank; ++d) {
      double v = fdp.ConsumeIntegralInRange<int>(0, 9) == 0 ? number(fdp, double(fdp.ConsumeIntegral<uint32_t>()))
                                                            : double(fdp.ConsumeIntegralInRange<int>(0, 5));
      dims.push_back(v);
      elements *= v;
    }
    size_t item = gradrt::dtype_size(static_cast<gradrt::DType>(dtype));
    double bytes = elements * double(item);
    uintptr_t data_ptr = 0;
    if (bytes >= 0 && bytes <= 65536) {
      std::vector<unsigned char> payload(static_cast<size_t>(bytes));
      for (auto& c : payload) c = fdp.ConsumeIntegral<uint8_t>();
      data_ptr = heap.put(payload.data(), payload.size(), item);
    }
    table.push_back(pointer(fdp, heap.str(name)));
    table.push_back(number(fdp, dtype));
    table.push_back(number(fdp, rank));
    table.push_back(pointer(fdp, data_ptr));
    table.push_back(number(fdp, bytes));
    for (double d : dims) table.push_back(d);
  }
  int cut = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? fdp.ConsumeIntegralInRange<int>(0, 6) : 0;
  uint32_t table_len = static_cast<uint32_t>(table.size() > size_t(cut) ? table.size() - cut : 0);
  uintptr_t table_ptr = heap.put(table.data(), table.size() * sizeof(double), 8);
  double table_field = pointer(fdp, table_ptr);
  uintptr_t tp = table_field >= 0 && table_field < 1e18 ? static_cast<uintptr_t>(table_field) : 0;
  if (fdp.ConsumeIntegralInRange<int>(0, 31) == 0) table_len = fdp.ConsumeIntegral<uint32_t>();

  int code = gradrt_run(op_ptr, attrs_ptr, tp, table_len, backend_ptr);
  std::string outputs = gradrt_outputs_json();
  if (code == 0) {
    if (outputs.size() < 2 || outputs.front() != '[' || outputs.back() != ']') fail("outputs json malformed");
    if (outputs == "[]") fail("success without outputs");
  } else {
    if (code < 0 || code > static_cast<int>(gradrt::Code::Internal)) fail("status code out of range");
    if (outputs != "[]") fail("outputs described after an error");
    if (gradrt_error_message()[0] == '\0') fail("error without a message");
  }
  gradrt_release_outputs();
  if (std::string(gradrt_outputs_json()) != "[]") fail("outputs not released");
  void* p = gradrt_alloc(fdp.ConsumeFloatingPointInRange<double>(-1, 4096));
  gradrt_dealloc(p);
  return 0;
}

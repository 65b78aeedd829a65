// ISA selection of the cpu backend (simd/). The backend picks the best ISA this CPU and
// this build support; GRADRT_CPU_ISA=avx512|avx2|sse4_2|neon|wasm_simd128|scalar forces a lower one
// (a request the machine or build cannot run falls back to the best available).
// Tests switch ISAs at run time with set_cpu_isa().
#pragma once

#include <string>
#include <vector>

namespace gradrt::simd {

enum class Isa { scalar = 0, sse4_2, avx2, avx512, neon, wasm_simd128 };

const char* isa_name(Isa isa);                 // "avx512", "avx2", ... as GRADRT_CPU_ISA spells them
bool isa_from_name(const char* name, Isa* out);
std::vector<Isa> supported_isas();             // built into this binary and runnable on this CPU
Isa best_isa();                                // the best of supported_isas()
Isa cpu_isa();                                 // the ISA in use now
// The GRADRT_CPU_ISA value that was ignored (unknown, or not runnable here); "" if none.
std::string ignored_isa_request();
// Uses `isa` from now on if it is supported; returns false (and changes nothing) otherwise.
// Not thread-safe against kernels running at the same time.
bool set_cpu_isa(Isa isa);

}  // namespace gradrt::simd

// The variants the backend harness (test_backends.cpp) runs every kernel on, against the
// reference backend: the cpu backend at each ISA this machine runs (simd/cpu_isa.h), and the
// vulkan backend with the Khronos validation layer on (when a device and the layer exist).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend.h"
#include "simd/cpu_isa.h"
#include "simd/tuning.h"

// Hooks defined in vulkan/ (vulkan_backend.cpp, testing.cpp). Weak: when gradrt is built
// without Vulkan they are null and the tests that need them are skipped.
namespace gradrt::vk::testing {
__attribute__((weak)) Backend* validated_backend();
__attribute__((weak)) bool validation_enabled();
__attribute__((weak)) std::vector<std::string> validation_messages();
__attribute__((weak)) Status probe(const std::string& library, const std::string& cache_dir);
}  // namespace gradrt::vk::testing

namespace test {

struct Variant {
  std::string name;                  // "cpu:avx2", "vulkan"
  gradrt::Backend* backend = nullptr;
  bool gpu = false;                  // device accumulation order: the looser tolerances
  double factor = 8;                 // eps per summed term (check_near's factor); the cpu
                                     // accumulates in T, the reference in double
  gradrt::simd::Isa isa = gradrt::simd::Isa::scalar;  // cpu: selected before each run
  // Runs again with these thread counts must give the same bits (cpu: the chunking of the
  // pool; vulkan: one rerun, no atomics and a fixed reduction order).
  std::vector<int> rerun_threads;
};

// cpu at every supported ISA, then vulkan when it is available (else a message says why not);
// only those whose name starts with `only` (if given) and with one of the comma-separated
// prefixes of $GRADRT_TEST_VARIANTS (if set: CI's forced-ISA stage reruns the cpu ones).
std::vector<Variant> variants(const std::string& only = "");
// Makes v's backend run as v (the ISA); call before each run (other variants change it).
void select(const Variant& v);

// Restores the cpu ISA in use when a test case ends.
struct IsaGuard {
  gradrt::simd::Isa saved = gradrt::simd::cpu_isa();
  ~IsaGuard() { gradrt::simd::set_cpu_isa(saved); }
};

// Saves every supported unit's tuning (tiles and thresholds) and restores it on exit; `saved`
// lists (isa, tuning) for tests that set variants of it.
struct TuningGuard {
  std::vector<std::pair<gradrt::simd::Isa, gradrt::simd::ConvTuning>> saved;
  TuningGuard() {
    for (gradrt::simd::Isa isa : gradrt::simd::supported_isas()) saved.emplace_back(isa, gradrt::simd::cpu_tuning(isa));
  }
  ~TuningGuard() {
    for (const auto& [isa, t] : saved) gradrt::simd::set_cpu_tuning(isa, t);
  }
};

// The validated vulkan backend, or nullptr after a message saying why the case is skipped.
gradrt::Backend* vulkan_or_skip();

// Fails on any Vulkan validation message recorded during its lifetime.
struct ValidationCheck {
  size_t before;
  ValidationCheck();
  ~ValidationCheck();
};

}  // namespace test

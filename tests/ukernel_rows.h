// What the non-GEMM micro-kernel testers share (tests/test_ukernels_rows.cpp runs them; the
// depthwise filter-gradient and NT batch-norm testers live in tests/ukernels_dwf.cpp): the
// mismatch report, sentinels, edge channel counts, and the tester table's entry type.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "simd/kernels/table.h"

namespace ukrows {

using Rows = gradrt::simd::RowUkernels;
// Written before a call into every element a kernel must leave alone (past the end, between rows).
template <class T>
constexpr T kSentinelT = T(-12345);
constexpr float kSentinel = kSentinelT<float>;

// Counts a tester's mismatches; the first one's description goes into the failure message.
struct Report {
  int bad = 0;
  std::string first;
  void expect(bool ok, const std::string& at) {
    if (!ok && bad++ == 0) first = at;
  }
  // A sum against its double value: within eps of the sum of |terms| (FMA or not); eps 1e-5 for
  // float, 1e-13 for double.
  template <class T>
  void near(T got, double want, double mag, const std::string& at) {
    const double eps = sizeof(T) == 4 ? 1e-5 : 1e-13;
    expect(std::fabs(double(got) - want) <= eps * mag + 1e-30 || (std::isnan(got) && std::isnan(want)),
           at + ": got " + std::to_string(got) + ", want " + std::to_string(want));
  }
  // Bit-exact (NaN matches any NaN).
  template <class T>
  void same(T got, T want, const std::string& at) {
    expect(std::memcmp(&got, &want, sizeof(T)) == 0 || (std::isnan(got) && std::isnan(want)),
           at + ": got " + std::to_string(got) + ", want " + std::to_string(want));
  }
  // Elements [n, size) of out still hold the sentinel.
  template <class T>
  void untouched(const std::vector<T>& out, size_t n, const std::string& at) {
    for (size_t i = n; i < out.size(); ++i)
      expect(out[i] == kSentinelT<T>, at + ": wrote past the end at " + std::to_string(i));
  }
};

inline std::string at(const char* what, std::initializer_list<int64_t> v) {
  std::string s = what;
  for (int64_t e : v) s += " " + std::to_string(e);
  return s;
}

// Channel counts 1 .. 2L + 1: the scalar tail alone, one vector, one vector + tail, two, ...
inline std::vector<int64_t> channel_counts(int lanes) {
  std::vector<int64_t> c;
  for (int64_t i = 1; i <= 2 * lanes + 1; ++i) c.push_back(i);
  return c;
}

template <class T = float>
std::vector<T> with_sentinel(size_t n) {
  return std::vector<T>(n + 1, kSentinelT<T>);
}

struct Tester {
  const char* name;
  void (*run)(const Rows&, std::mt19937&, Report&);
};

// tests/ukernels_dwf.cpp: each runs its kernel at float and double.
void dwf_interior(const Rows& u, std::mt19937& rng, Report& r);
void dwf_block(const Rows& u, std::mt19937& rng, Report& r);
void dwf_chunk3(const Rows& u, std::mt19937& rng, Report& r);
void bn_grad_dx_stream(const Rows& u, std::mt19937& rng, Report& r);
// tests/ukernels_wasm.cpp: WebAssembly's own depthwise kernels (float; null slots elsewhere).
void dwg_wasm(const Rows& u, std::mt19937& rng, Report& r);
void dwf_wasm(const Rows& u, std::mt19937& rng, Report& r);
void dw_interior_wasm(const Rows& u, std::mt19937& rng, Report& r);

}  // namespace ukrows

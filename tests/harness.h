// The backend harness's core (test_backends.cpp; test_cpu_backend.cpp reuses it for the cpu
// fast-path geometries): a kernel call run on the reference and on each variant, compared
// within the variant's tolerance, rerun for bit-identical results.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "variants.h"

namespace test {

// A tolerance in eps per summed term: k terms of data of magnitude `scale` (check_near),
// for cpu-like accumulation and for a device's (vulkan: other order, other split points).
struct Tol {
  double k, scale;
};
struct Tols {
  Tol cpu, gpu;
};

template <class T>
inline void check(const Variant& v, const std::vector<T>& got, const std::vector<T>& want, Tols t, const std::string& what) {
  const Tol& tol = v.gpu ? t.gpu : t.cpu;
  check_near(got, want, tol.k, tol.scale, v.factor, what);
}

// One kernel call on one variant: run(backend, threads, outputs) fills the outputs. The
// variant's result is checked by `compare` against the reference's, then every rerun of the
// variant must give the same bits. A variant whose device lacks float64 says so once and
// leaves `variants`. Variants that `takes` refuses sit this case out (the sweeps give a device,
// which pays a fixed cost per call, a share of the small cases, and the large ones to the
// devices only: the cpu's large geometries are in test_cpu_backend.cpp).
template <class T>
using Run = std::function<gradrt::Status(gradrt::Backend*, int threads, std::vector<std::vector<T>>* outputs)>;

template <class T>
inline void on_every_variant(std::vector<Variant>& variants, const Run<T>& run,
                      const std::function<void(const Variant&, const std::vector<std::vector<T>>&,
                                               const std::vector<std::vector<T>>&)>& compare,
                      bool rerun = true, const std::function<bool(const Variant&)>& takes = {}) {
  std::vector<std::vector<T>> want;
  const gradrt::Status rs = run(gradrt::reference_backend(), 1, &want);
  REQUIRE_MESSAGE(rs.ok(), rs.to_string());
  for (size_t i = 0; i < variants.size(); ++i) {
    const Variant& v = variants[i];
    if (takes && !takes(v)) continue;
    CAPTURE(v.name);
    select(v);
    std::vector<std::vector<T>> got;
    const gradrt::Status s = run(v.backend, 1, &got);
    if (device_lacks_dtype(s)) {
      variants.erase(variants.begin() + long(i--));
      continue;
    }
    REQUIRE_MESSAGE(s.ok(), s.to_string());
    compare(v, got, want);
    if (!rerun) continue;
    for (int threads : v.rerun_threads) {
      std::vector<std::vector<T>> again;
      REQUIRE(run(v.backend, threads, &again).ok());
      for (size_t o = 0; o < got.size(); ++o)
        CHECK_MESSAGE(same_bits(again[o], got[o]), v.name << ": output " << o << " changed with " << threads << " threads");
    }
  }
}

template <class T>
inline void conv_case(std::vector<Variant>& variants, ConvKernel k, const gradrt::ConvParams& p, std::mt19937& rng,
                      bool rerun = true, const std::function<bool(const Variant&)>& takes = {}) {
  const auto x = random_vec<T>(rng, p.x_elements());
  const auto w = random_vec<T>(rng, is_depthwise(k) ? p.dw_w_elements() : p.w_elements());
  const auto dy = random_vec<T>(rng, p.y_elements());
  const double red = reduction_length(k, p);
  const std::string what = describe(p);
  CAPTURE(what);
  on_every_variant<T>(
      variants,
      [&](gradrt::Backend* b, int threads, std::vector<std::vector<T>>* out) {
        out->resize(1);
        return run_conv(b, k, p, threads, x, w, dy, &(*out)[0]);
      },
      [&](const Variant& v, const auto& got, const auto& want) {
        check(v, got[0], want[0], {{red, std::sqrt(red)}, {red, std::sqrt(red)}}, what);
      },
      rerun, takes);
}

}  // namespace test

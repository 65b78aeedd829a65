// The `cpu` backend: xsimd kernels (simd/kernels/<stem>.h) instantiated once per ISA
// (simd/arch/<isa>.cpp, each compiled with its own flags) and picked at run time.
// x86-64: avx512 (F+BW+DQ+VL), avx2 (+FMA), sse4_2, scalar, by cpuid (GCC/Clang
// __builtin_cpu_supports, which also checks that the OS saves the vector state).
// aarch64: neon (baseline). Emscripten: wasm_simd128 (WebAssembly SIMD128, its own unit).
// GRADRT_CPU_ISA forces a lower ISA; detail() names the one in use.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>

#include "backend.h"
#include "cpu_isa.h"
#include "kernels/table.h"
#include "parallel.h"
#include "tuning.h"

namespace gradrt::simd {

// ---------------------------------------------------------------- helpers for the kernels
void parallel_chunks(const Exec& exec, int64_t n, int64_t grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end)) {
  parallel_for(exec, n, grain, [ctx, fn](int64_t b, int64_t e) { fn(ctx, b, e); });
}

void parallel_guided(const Exec& exec, int64_t n, int64_t min_grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end)) {
  parallel_for_guided(exec, n, min_grain, [ctx, fn](int64_t b, int64_t e) { fn(ctx, b, e); });
}

namespace {
struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
std::atomic<uint64_t> g_fallbacks{0};
}  // namespace

void note_workspace_fallback() { g_fallbacks.fetch_add(1, std::memory_order_relaxed); }
uint64_t workspace_fallbacks() { return g_fallbacks.load(std::memory_order_relaxed); }

namespace {
std::atomic<uint64_t> g_packs{0};
// What kept_weights keeps in a plan's kernel slot (defined here, baseline flags, once).
struct KeptWeights final : KernelState {
  std::unique_ptr<void, AlignedFree> data;
  size_t bytes = 0;
  uint64_t layout = 0;
};
}  // namespace

void* kept_weights(const Exec& exec, const void* w, size_t bytes, uint64_t layout, bool* current) {
  *current = false;
  if (!exec.state || exec.weights_version == 0) return nullptr;  // no plan, or no version to trust
  auto* k = dynamic_cast<KeptWeights*>(exec.state->get());
  if (k && exec.state_current(w) && k->layout == layout && k->bytes >= bytes) {
    *current = true;
    return k->data.get();
  }
  if (!k) {
    exec.state->reset(k = new KeptWeights);
  }
  if (k->bytes < bytes) {
    const size_t size = (bytes + 63) / 64 * 64;
    k->data.reset(std::aligned_alloc(64, size));
    k->bytes = k->data ? size : 0;
    if (!k->data) return nullptr;
  }
  k->weights = w;
  k->version = exec.weights_version;
  k->layout = layout;
  g_packs.fetch_add(1, std::memory_order_relaxed);
  return k->data.get();
}

uint64_t weight_packs() { return g_packs.load(std::memory_order_relaxed); }

// ---------------------------------------------------------------- ISA selection
namespace {

const KernelTable* table_for(Isa isa) {
  switch (isa) {
#if defined(GRADRT_SIMD_HAS_AVX512)
    case Isa::avx512: return table_avx512();
#endif
#if defined(GRADRT_SIMD_HAS_AVX2)
    case Isa::avx2: return table_avx2();
#endif
#if defined(GRADRT_SIMD_HAS_SSE4_2)
    case Isa::sse4_2: return table_sse4_2();
#endif
#if defined(GRADRT_SIMD_HAS_NEON)
    case Isa::neon: return table_neon();
#endif
#if defined(GRADRT_SIMD_HAS_WASM_SIMD128)
    case Isa::wasm_simd128: return table_wasm_simd128();
#endif
    default: return table_scalar();
  }
}

}  // namespace

const KernelTable* kernel_table(Isa isa) { return table_for(isa); }

namespace {

bool runnable(Isa isa) {
  switch (isa) {
    case Isa::scalar: return true;
#if defined(GRADRT_SIMD_HAS_AVX512) && defined(__x86_64__)
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("fma");
#endif
#if defined(GRADRT_SIMD_HAS_AVX2) && defined(__x86_64__)
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
#if defined(GRADRT_SIMD_HAS_SSE4_2) && defined(__x86_64__)
    case Isa::sse4_2: return __builtin_cpu_supports("sse4.2");
#endif
#if defined(GRADRT_SIMD_HAS_WASM_SIMD128)
    case Isa::wasm_simd128: return true;  // the module would not load without SIMD128
#endif
#if defined(GRADRT_SIMD_HAS_NEON)
    case Isa::neon: return true;  // baseline on aarch64
#endif
    default: return false;
  }
}

struct State {
  std::atomic<Isa> isa{Isa::scalar};
  std::string ignored;  // a GRADRT_CPU_ISA value that could not be honoured
  // The GEMM drivers' tiles for the ISA in use on this microarchitecture (tuning.h), one set
  // per ISA so that switching ISAs (tests) swaps no shared object under a running kernel.
  ConvTuning tuning[int(Isa::wasm_simd128) + 1];
  std::string ignored_tiles;  // a GRADRT_CPU_TILES value that could not be honoured
  State() {
    Isa chosen = best_isa();
    if (const char* env = std::getenv("GRADRT_CPU_ISA"); env && *env) {
      Isa want;
      if (isa_from_name(env, &want) && runnable(want)) chosen = want;
      else ignored = env;
    }
    const Microarch m = microarch_of(cpu_ident());
    const char* tiles_env = std::getenv("GRADRT_CPU_TILES");
    for (int i = 0; i <= int(Isa::wasm_simd128); ++i) {
      tuning[i] = conv_tuning(Isa(i), m);
      if (tiles_env && *tiles_env && Isa(i) == chosen && !apply_tiles_override(Isa(i), tiles_env, &tuning[i]))
        ignored_tiles = tiles_env;
    }
    isa.store(chosen);
  }
};

State& state() {
  static State s;
  return s;
}

}  // namespace

constexpr Isa kAll[] = {Isa::scalar, Isa::sse4_2, Isa::avx2, Isa::avx512, Isa::neon, Isa::wasm_simd128};

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::sse4_2: return "sse4_2";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::neon: return "neon";
    case Isa::wasm_simd128: return "wasm_simd128";
  }
  return "scalar";
}

bool isa_from_name(const char* name, Isa* out) {
  for (Isa isa : kAll)
    if (std::strcmp(name, isa_name(isa)) == 0) {
      *out = isa;
      return true;
    }
  return false;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAll)
    if (runnable(isa)) out.push_back(isa);
  return out;
}

Isa best_isa() {
  for (Isa isa : {Isa::avx512, Isa::avx2, Isa::neon, Isa::wasm_simd128, Isa::sse4_2})
    if (runnable(isa)) return isa;
  return Isa::scalar;
}

Isa cpu_isa() { return state().isa.load(); }

const ConvTuning& cpu_tuning(Isa isa) { return state().tuning[int(isa)]; }

bool set_cpu_tuning(Isa isa, const ConvTuning& t) {
  if (!tiles_built(isa, t)) return false;
  state().tuning[int(isa)] = t;
  return true;
}

std::string ignored_isa_request() { return state().ignored; }

bool set_cpu_isa(Isa isa) {
  if (!runnable(isa)) return false;
  state().isa.store(isa);
  return true;
}

}  // namespace gradrt::simd

namespace gradrt {
namespace {

using simd::KernelTable;

const KernelTable& kt() { return *simd::table_for(simd::cpu_isa()); }
const simd::ConvTuning& tuning() { return simd::cpu_tuning(simd::cpu_isa()); }

// The table of the element type of a kernel's first tensor argument (every kernel has one).
template <class T, class... Rest>
const simd::KernelsT<T>& kernels_for(const T*, Rest...) {
  if constexpr (std::is_same_v<T, float>) return kt().f32;
  else return kt().f64;
}

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  std::string detail() override {
    std::string s = std::string("xsimd ") + simd::isa_name(simd::cpu_isa());
    if (simd::cpu_isa() != simd::best_isa())
      s += std::string(" (forced; best here: ") + simd::isa_name(simd::best_isa()) + ")";
    const std::string ignored = simd::ignored_isa_request();
    if (!ignored.empty()) s += " (GRADRT_CPU_ISA=" + ignored + " is not available here)";
    const simd::CpuIdent id = simd::cpu_ident();
    char ident[96];
    std::snprintf(ident, sizeof ident, "; %s family 0x%x model 0x%x: %s tiles: ", id.vendor.c_str(), id.family,
                  id.model, simd::microarch_name(simd::microarch_of(id)));
    s += ident + simd::describe(simd::cpu_tuning(simd::cpu_isa()));
    if (!simd::state().ignored_tiles.empty())
      s += " (GRADRT_CPU_TILES=" + simd::state().ignored_tiles + " ignored: unknown key or tile not built for this ISA)";
    return s;
  }

  std::string isa_for(const KernelQuery&) override { return simd::isa_name(simd::cpu_isa()); }

  // Conv2DBackpropInput's path, as PlanInfo::tiles: "stream RxCV" (the 1x1 streaming tile:
  // R pixels x CV vectors of dx channels; "stream Rx1 half": in half-width vectors) or
  // "gemm MRxNRV" (+ ", padded dy" [+ ", row tiles R"]); Conv2DBackpropFilter's: "few-c" or
  // "gemm MRxNRV" (+ ", K slices S"); "" for the other kernels.
  std::string tiles_for(const KernelQuery& q) override {
    if (q.kernel == Kernel::conv2d_backprop_filter && q.params && kt().filter_path) {
      const simd::FilterPath fp = kt().filter_path(tuning(), q.params_as<ConvParams>(), q.dtype == DType::float64);
      if (fp.few_c) return "few-c";
      return "gemm " + std::to_string(fp.tile.rows) + "x" + std::to_string(fp.tile.vectors) +
             (fp.slices > 1 ? ", K slices " + std::to_string(fp.slices) : "");
    }
    if (q.kernel != Kernel::conv2d_backprop_input || !q.params || !kt().input_path) return "";
    const simd::InputPath ip = kt().input_path(tuning(), q.params_as<ConvParams>(), q.dtype == DType::float64);
    return std::string(ip.stream ? "stream " : "gemm ") + std::to_string(ip.tile.rows) + "x" +
           std::to_string(ip.tile.vectors) + (ip.half ? " half" : "") + (ip.padded_dy ? ", padded dy" : "") +
           (ip.row_tiles ? ", row tiles " + std::to_string(ip.row_tiles) : "") + (ip.edge_groups ? ", edge groups" : "");
  }

  // The few-c filter gradient (first layers: <= 4 input channels) runs at 25-45% of the FMA
  // peak, so it counts its work 5x for its thread count: 3x3 64x64x3->16 s2 batch 1 took 21 us
  // on a Cascade Lake core against the plain estimate of 4.4 and stayed on one thread; on two
  // it took 0.70-0.73x the wall time (bench/results_xeon_clx.txt, session 19).
  double thread_cost_scale(const KernelQuery& q) override {
    if (q.kernel != Kernel::conv2d_backprop_filter || !q.params || !kt().filter_path) return 1.0;
    return kt().filter_path(tuning(), q.params_as<ConvParams>(), q.dtype == DType::float64).few_c ? 5.0 : 1.0;
  }

  // The driver's <stem>_workspace for these params at q.threads (shared + threads x per-thread).
  size_t workspace_size(const KernelQuery& q) override {
    const auto sizes = [&](const auto& k) -> size_t {
      switch (q.kernel) {
#define GRADRT_CPU_WS(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  case Kernel::STEM: return k.STEM##_workspace(q.threads, tuning(), q.params_as<P>());
        GRADRT_KERNELS(GRADRT_CPU_WS, float)
#undef GRADRT_CPU_WS
      }
      return 0;
    };
    return q.dtype == DType::float64 ? sizes(kt().f64) : sizes(kt().f32);
  }

#define GRADRT_CPU_FORWARD(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES)     \
  Status STEM(const Exec& e, const P& p, GRADRT_UNPACK ARGS) override { \
    kernels_for(GRADRT_UNPACK NAMES).STEM(e, tuning(), p, GRADRT_UNPACK NAMES); \
    return Status::OK();                                                \
  }
  GRADRT_KERNELS(GRADRT_CPU_FORWARD, float)
  GRADRT_KERNELS(GRADRT_CPU_FORWARD, double)
#undef GRADRT_CPU_FORWARD
};

}  // namespace

Backend* cpu_backend() {
  static CpuBackend backend;
  return &backend;
}

}  // namespace gradrt

// The `cpu` backend: xsimd kernels (simd/kernels/<stem>.h) instantiated once per ISA
// (simd/arch/<isa>.cpp, each compiled with its own flags) and picked at run time.
// x86-64: avx512 (F+BW+DQ+VL), avx2 (+FMA), sse4_2, scalar, by cpuid (GCC/Clang
// __builtin_cpu_supports, which also checks that the OS saves the vector state).
// aarch64: neon (baseline). Emscripten: the sse4_2 unit built as WASM SIMD128.
// GRADRT_CPU_ISA forces a lower ISA; detail() names the one in use.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>

#include "backend.h"
#include "cpu_isa.h"
#include "kernels/table.h"
#include "parallel.h"

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
struct Buffer {
  std::unique_ptr<void, AlignedFree> data;
  size_t bytes = 0;
};
constexpr int kSlots = 8;
thread_local Buffer t_slots[kSlots];
thread_local Buffer t_zeros;

void grow(Buffer& b, size_t bytes, bool zero) {
  if (bytes <= b.bytes && b.data) return;
  size_t size = b.bytes ? b.bytes : 4096;
  while (size < bytes) size *= 2;
  size = (size + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, size);
  if (!p) std::abort();  // kernels cannot fail: workspaces are small (filter/tile sized)
  if (zero) std::memset(p, 0, size);
  b.data.reset(p);
  b.bytes = size;
}
}  // namespace

void* workspace(int slot, size_t bytes) {
  Buffer& b = t_slots[slot];
  grow(b, bytes, false);
  return b.data.get();
}

const void* zeros(size_t bytes) {
  grow(t_zeros, bytes, true);
  return t_zeros.data.get();
}

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
    default: return table_scalar();
  }
}

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
#if defined(GRADRT_SIMD_HAS_SSE4_2)
#if defined(__EMSCRIPTEN__)
    case Isa::sse4_2: return true;  // WASM SIMD128: the module would not load without it
#elif defined(__x86_64__)
    case Isa::sse4_2: return __builtin_cpu_supports("sse4.2");
#endif
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
  State() {
    Isa chosen = best_isa();
    if (const char* env = std::getenv("GRADRT_CPU_ISA"); env && *env) {
      Isa want;
      if (isa_from_name(env, &want) && runnable(want)) chosen = want;
      else ignored = env;
    }
    isa.store(chosen);
  }
};

State& state() {
  static State s;
  return s;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::scalar: return "scalar";
    case Isa::sse4_2: return "sse4_2";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::neon: return "neon";
  }
  return "scalar";
}

bool isa_from_name(const char* name, Isa* out) {
  for (Isa isa : {Isa::scalar, Isa::sse4_2, Isa::avx2, Isa::avx512, Isa::neon})
    if (std::strcmp(name, isa_name(isa)) == 0) {
      *out = isa;
      return true;
    }
  return false;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::scalar, Isa::sse4_2, Isa::avx2, Isa::avx512, Isa::neon})
    if (runnable(isa)) out.push_back(isa);
  return out;
}

Isa best_isa() {
  for (Isa isa : {Isa::avx512, Isa::avx2, Isa::neon, Isa::sse4_2})
    if (runnable(isa)) return isa;
  return Isa::scalar;
}

Isa cpu_isa() { return state().isa.load(); }

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

template <class T>
const simd::KernelsT<T>& kernels();
template <>
const simd::KernelsT<float>& kernels<float>() { return kt().f32; }
template <>
const simd::KernelsT<double>& kernels<double>() { return kt().f64; }

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  std::string detail() override {
    std::string s = std::string("xsimd ") + simd::isa_name(simd::cpu_isa());
    if (simd::cpu_isa() != simd::best_isa())
      s += std::string(" (forced; best here: ") + simd::isa_name(simd::best_isa()) + ")";
    const std::string ignored = simd::ignored_isa_request();
    if (!ignored.empty()) s += " (GRADRT_CPU_ISA=" + ignored + " is not available here)";
    return s;
  }

#define GRADRT_CPU_KERNELS(T)                                                                       \
  Status conv2d(const Exec& e, const ConvParams& p, const T* x, const T* w, T* y) override {       \
    kernels<T>().conv2d(e, p, x, w, y);                                                             \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status conv2d_backprop_input(const Exec& e, const ConvParams& p, const T* w, const T* dy,       \
                               T* dx) override {                                                    \
    kernels<T>().conv2d_backprop_input(e, p, w, dy, dx);                                            \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status conv2d_backprop_filter(const Exec& e, const ConvParams& p, const T* x, const T* dy,      \
                                T* dw) override {                                                   \
    kernels<T>().conv2d_backprop_filter(e, p, x, dy, dw);                                           \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status depthwise_conv2d_native(const Exec& e, const ConvParams& p, const T* x, const T* w,      \
                                 T* y) override {                                                   \
    kernels<T>().depthwise_conv2d_native(e, p, x, w, y);                                            \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status depthwise_conv2d_native_backprop_input(const Exec& e, const ConvParams& p, const T* w,   \
                                                const T* dy, T* dx) override {                      \
    kernels<T>().depthwise_conv2d_native_backprop_input(e, p, w, dy, dx);                           \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status depthwise_conv2d_native_backprop_filter(const Exec& e, const ConvParams& p, const T* x,  \
                                                 const T* dy, T* dw) override {                     \
    kernels<T>().depthwise_conv2d_native_backprop_filter(e, p, x, dy, dw);                          \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status batch_norm_stats(const Exec& e, const BatchNormParams& p, const T* x, T* mean,           \
                          T* variance) override {                                                   \
    kernels<T>().batch_norm_stats(e, p, x, mean, variance);                                         \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status batch_norm_apply(const Exec& e, const BatchNormParams& p, const T* x, const T* scale,    \
                          const T* offset, const T* mean, const T* variance, T* y) override {       \
    kernels<T>().batch_norm_apply(e, p, x, scale, offset, mean, variance, y);                       \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status fused_batch_norm_grad(const Exec& e, const BatchNormParams& p, const T* dy, const T* x,  \
                               const T* scale, const T* mean, const T* variance, T* dx,            \
                               T* dscale, T* doffset) override {                                    \
    kernels<T>().fused_batch_norm_grad(e, p, dy, x, scale, mean, variance, dx, dscale, doffset);    \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status fractional_avg_pool(const Exec& e, const FracPoolParams& p, const T* x, T* y) override { \
    kernels<T>().fractional_avg_pool(e, p, x, y);                                                   \
    return Status::OK();                                                                            \
  }                                                                                                 \
  Status fractional_avg_pool_grad(const Exec& e, const FracPoolParams& p, const T* dy, T* dx)     \
      override {                                                                                    \
    kernels<T>().fractional_avg_pool_grad(e, p, dy, dx);                                            \
    return Status::OK();                                                                            \
  }

  GRADRT_CPU_KERNELS(float)
  GRADRT_CPU_KERNELS(double)
#undef GRADRT_CPU_KERNELS
};

}  // namespace

Backend* cpu_backend() {
  static CpuBackend backend;
  return &backend;
}

}  // namespace gradrt

// The WebAssembly unit's side of the drivers: the hooks they call under
// `if constexpr (kTiles.wasm)` (WasmKernels, declared in ukernels/vec.h), each choosing
// the wasm micro-kernel (wasm/depthwise.h) for a row shape. Included only by
// arch/wasm_simd128.cpp.
#pragma once

#include "../kernels/common.h"
#include "depthwise.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Which kernel of wasm/depthwise.h serves a row.
// Each kernel is called through a volatile function pointer: Binaryen inlines a function
// with one caller (noinline does not reach it), and V8 allocates registers worse in the big
// merged function; as an indirect call it stays its own (small) function.
template <class T, class Arch>
struct WasmKernels {
  // dwf_wasm_chunks (simd/kernels/depthwise_conv2d_native_backprop_filter.h): at most
  // kFilterRows output rows per dwf_wasm call, a part's pass within kL1Bytes.
  static constexpr int64_t kFilterRows = 3, kL1Bytes = 32 << 10;

  // dwg_wasm<R, K> (float); false where there is none.
  static bool gather(int R, int K, const float* const* row, int64_t o, int64_t nj, int64_t j_lo, int64_t j_hi,
                     int64_t src_w, int64_t C, const float* const* w, int64_t cv, float* dst, int64_t ds) {
    using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                        const float* const*, int64_t, float*, int64_t);
    static Fn volatile const kFns[3][3] = {{&dwg_wasm<1, 1>, &dwg_wasm<2, 1>, &dwg_wasm<3, 1>},
                                           {&dwg_wasm<1, 2>, &dwg_wasm<2, 2>, &dwg_wasm<3, 2>},
                                           {&dwg_wasm<1, 3>, &dwg_wasm<2, 3>, &dwg_wasm<3, 3>}};
    if (R < 1 || R > 3 || K < 1 || K > 3) return false;
    kFns[K - 1][R - 1](row, o, nj, j_lo, j_hi, src_w, C, w, cv, dst, ds);
    return true;
  }

  // dwf_wasm<K, S> (float); false where there is none.
  static bool filter(int64_t S, int K, const float* const* row, int64_t R, int64_t o, int64_t nj, int64_t src_w,
                     int64_t C, const float* dy, float* const* acc, int64_t cv, int64_t nr, int64_t xrs, int64_t dys,
                     float* sum, int64_t sub) {
    using Fn = void (*)(const float* const*, int64_t, int64_t, int64_t, int64_t, int64_t, const float*, float* const*,
                        int64_t, int64_t, int64_t, int64_t, float*, int64_t);
    static Fn volatile const kFns[2][2] = {{&dwf_wasm<2, 1>, &dwf_wasm<3, 1>}, {&dwf_wasm<2, 2>, &dwf_wasm<3, 2>}};
    if ((S != 1 && S != 2) || (K != 2 && K != 3)) return false;
    kFns[S - 1][K - 2](row, R, o, nj, src_w, C, dy, acc, cv, nr, xrs, dys, sum, sub);
    return true;
  }

  // dwx2_wasm<R> (float), R in 1..3.
  static void dwx2(int R, const float* const* dyr, const float* const* wr, int64_t ow, int64_t C, int64_t cv,
                   float* dx) {
    using Fn = void (*)(const float* const*, const float* const*, int64_t, int64_t, int64_t, float*);
    static Fn volatile const kFns[3] = {&dwx2_wasm<1>, &dwx2_wasm<2>, &dwx2_wasm<3>};
    kFns[R - 1](dyr, wr, ow, C, cv, dx);
  }

  // dw_interior_wasm over the interior pixels [j_lo, j_hi) of a dw_row (simd/kernels/
  // depthwise_rows.h), vector channels c < cv; dst at pixel j_lo.
  static void interior(int64_t j_lo, int64_t j_hi, int64_t nt, const T* const* src, const int64_t* off,
                       const T* const* wt, int64_t step, int64_t C, int64_t cv, T* dst, int64_t ds) {
    // The tap tables are the caller's (from the plan's workspace); the kernel offsets each
    // tap's row to pixel j_lo itself, so this hook needs no scratch of its own.
    dw_interior_wasm<T, Arch>(j_hi - j_lo, nt, src, off, j_lo * step, C, wt, step * C, cv, dst, ds);
  }
};

}  // namespace gradrt::simd::GRADRT_SIMD_NS

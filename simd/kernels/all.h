// Every kernel of the cpu backend, and make_table<Arch>() that instantiates them for one
// arch. Included only by simd/arch/<isa>.cpp (simd/arch/arch_unit.h), after GRADRT_SIMD_NS and
// kTiles are defined.
#pragma once

#include "conv2d.h"
#include "conv2d_backprop_filter.h"
#include "conv2d_backprop_input.h"
#include "depthwise_conv2d_native.h"
#include "depthwise_conv2d_native_backprop_filter.h"
#include "depthwise_conv2d_native_backprop_input.h"
#include "fractional_avg_pool.h"
#include "fractional_avg_pool_grad.h"
#include "fused_batch_norm.h"
#include "fused_batch_norm_grad.h"
// The relu family and the bias ops (issue 20).
#include "bias_add.h"
#include "bias_add_grad.h"
#include "relu.h"
#include "relu_grad.h"
#include "avg_pool.h"
#include "avg_pool_grad.h"
#include "max_pool.h"
#include "max_pool_grad.h"
#include "table.h"
#include "ukernel_table.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// A driver that takes scratch defines <stem>_workspace<T, Arch>(threads, tuning, params) next
// to itself (the bytes its Arena takes: ScratchSize); the others take none. (The driver's
// own overload is more specialised than this one and wins.)
#define GRADRT_CPU_NO_WORKSPACE(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  template <class T, class Arch, class... A>                        \
  size_t STEM##_workspace(const A&...) {                            \
    return 0;                                                       \
  }
GRADRT_KERNELS(GRADRT_CPU_NO_WORKSPACE, float)
#undef GRADRT_CPU_NO_WORKSPACE

template <class T, class Arch>
KernelsT<T> make_kernels() {
  KernelsT<T> k;
  // A driver that takes the ConvTuning (the GEMM ones) gets it; the others are called without.
#define GRADRT_CPU_FILL(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES)                                        \
  k.STEM = [](const Exec& e, const ConvTuning& tu, const P& p, GRADRT_UNPACK ARGS) {                 \
    if constexpr (requires { STEM<T, Arch>(e, tu, p, GRADRT_UNPACK NAMES); })                        \
      STEM<T, Arch>(e, tu, p, GRADRT_UNPACK NAMES);                                                   \
    else                                                                                             \
      STEM<T, Arch>(e, p, GRADRT_UNPACK NAMES);                                                       \
  };                                                                                                 \
  k.STEM##_workspace = [](int threads, const ConvTuning& tu, const P& p) -> size_t {                 \
    return STEM##_workspace<T, Arch>(threads, tu, p);                                                \
  };
  GRADRT_KERNELS(GRADRT_CPU_FILL, T)
#undef GRADRT_CPU_FILL
  return k;
}

// The float GEMM micro-kernels of tile MR x NRV and its remainder variants, into g[0..3).
template <class Arch, int MR, int NRV>
void fill_gemm_ukernels(GemmUkernel* g) {
  auto one = [&]<int R>(GemmUkernel& u) {
    using G = Gemm<float, Arch, R, NRV>;
    u = GemmUkernel{GemmTile{R, NRV}, int(G::L), &G::rows, &G::rows_acc, &G::cols, &G::cols_strided,
                    &G::cols_pf, &G::cols_strided_pf};
  };
  one.template operator()<MR>(g[0]);
  one.template operator()<rows_b(MR)>(g[1]);
  one.template operator()<rows_c(MR)>(g[2]);
}

template <class Arch, int I = 0>
void fill_gemm_table(GemmUkernel* g) {
  if constexpr (I < kMaxGemmTiles && kTiles.gemm[I].rows > 0) {
    fill_gemm_ukernels<Arch, kTiles.gemm[I].rows, kTiles.gemm[I].vectors>(g + 3 * I);
    fill_gemm_table<Arch, I + 1>(g);
  }
}

template <class Arch, int CV>
StreamUkernel stream_ukernel() {
  using K = Conv1x1Stream<float, Arch, kTiles.stream_rows[CV - 1], CV>;
  return StreamUkernel{kTiles.stream_rows[CV - 1], CV, int(K::L), &K::run, &Conv1x1Stream<float, Arch, 1, CV>::run};
}

template <class Arch>
StreamUkernel stream_half_ukernel() {
  using H = typename HalfArch<Arch>::type;
  if constexpr (std::is_void_v<H> || kTiles.stream_half_rows == 0) {
    return StreamUkernel{};
  } else {
    using K = Conv1x1Stream<float, H, kTiles.stream_half_rows, 1>;
    return StreamUkernel{kTiles.stream_half_rows, 1, int(K::L), &K::run, &Conv1x1Stream<float, H, 1, 1>::run};
  }
}

template <class T, class Arch>
InputPath input_path(const ConvTuning& tu, const ConvParams& p) {
  if (const int cv = conv2d_backprop_input_stream_vectors<T, Arch>(tu, p)) {
    if (const int half = conv2d_backprop_input_stream_half_rows<T, Arch>(p.in_c))
      return InputPath{.stream = true, .tile = GemmTile{half, 1}, .half = true};
    return InputPath{true, GemmTile{kTiles.stream_rows[cv - 1], cv}};
  }
  const GemmTile tile = conv2d_backprop_input_tile<T, Arch>(tu, p);
  if (conv2d_backprop_input_edge_groups(p, tile.rows, tu.input_edge_groups))
    return InputPath{.stream = false, .tile = tile, .edge_groups = true};
  const DyPad pad = conv2d_backprop_input_dy_pad(p, tile.rows, tu.input_pad_dy, tu.input_pad_rows, tile.vectors);
  return InputPath{.stream = false, .tile = tile, .padded_dy = pad.on, .row_tiles = int(pad.rows)};
}

template <class T, class Arch>
FilterPath filter_path(const ConvTuning& tu, const ConvParams& p) {
  if (conv2d_backprop_filter_few_c_applies<T, Arch>(tu, p)) return FilterPath{.few_c = true};
  const GemmTile tile = conv2d_backprop_filter_tile<T, Arch>(tu, p);
  int64_t slices = 1;
  with_gemm_tile<kTiles>(tile, [&]<int MR, int NRV>() {
    slices = conv2d_backprop_filter_slices<T>(tu, p, MR, Gemm<T, Arch, MR, NRV>::NR);
  });
  return FilterPath{.tile = tile, .slices = slices};
}

template <class Arch>
KernelTable make_table() {
  KernelTable t{make_kernels<float, Arch>(), make_kernels<double, Arch>(), {}, {}, {}, nullptr};
  fill_gemm_table<Arch>(t.gemm);
  t.rows = row_ukernels<Arch>();
  t.stream[0] = stream_ukernel<Arch, 1>();
  t.stream[1] = stream_ukernel<Arch, 2>();
  t.stream[2] = stream_ukernel<Arch, 3>();
  t.stream[3] = stream_ukernel<Arch, 4>();
  t.input_path = [](const ConvTuning& tu, const ConvParams& p, bool f64) {
    return f64 ? input_path<double, Arch>(tu, p) : input_path<float, Arch>(tu, p);
  };
  t.stream_half = stream_half_ukernel<Arch>();
  t.filter_path = [](const ConvTuning& tu, const ConvParams& p, bool f64) {
    return f64 ? filter_path<double, Arch>(tu, p) : filter_path<float, Arch>(tu, p);
  };
  return t;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// The kernel table one ISA's translation unit fills (simd/arch/<isa>.cpp) and
// cpu_backend.cpp calls through. Plain function pointers: no arch-dependent type crosses
// the boundary.
#pragma once

#include "backend.h"
#include "../cpu_isa.h"
#include "../tiles.h"

namespace gradrt::simd {

// One slot per kernel of the list (kernels.h); make_kernels (all.h) fills them. Every slot
// takes the run-time GEMM choices (tiles.h ConvTuning); only the GEMM drivers read them.
// <stem>_workspace: the scratch bytes the driver takes for these params on `threads`
// threads (Backend::workspace_size; 0 for a driver that takes none).
template <class T>
struct KernelsT {
#define GRADRT_CPU_SLOT(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  void (*STEM)(const Exec&, const ConvTuning&, const P&, GRADRT_UNPACK ARGS);   \
  size_t (*STEM##_workspace)(int threads, const ConvTuning&, const P&);
  GRADRT_KERNELS(GRADRT_CPU_SLOT, T)
#undef GRADRT_CPU_SLOT
};

// A GEMM micro-kernel of the unit (ukernels/gemm.h Gemm<float, Arch, rows, vectors>), for its
// tester (tests/test_ukernels.cpp): the unit's tiles and their 2MR/3, MR/3-row variants.
struct GemmUkernel {
  GemmTile tile;
  int lanes = 1;  // floats per vector: the micro-kernel's NR is tile.vectors * lanes
  void (*rows)(int64_t ntaps, int64_t kc, const float* const* a, int64_t as, const float* const* b, float* const* c,
               int64_t mr, int64_t nr) = nullptr;
  // rows adding to what c holds (a K block after the first; gemm.h).
  void (*rows_acc)(int64_t ntaps, int64_t kc, const float* const* a, int64_t as, const float* const* b,
                   float* const* c, int64_t mr, int64_t nr) = nullptr;
  void (*cols)(int64_t kc, const float* const* a, int64_t a_off, const float* b, int64_t ldb, float* c, int64_t ldc,
               int64_t mr, int64_t nr, bool accumulate) = nullptr;
  void (*cols_strided)(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                       int64_t mr, int64_t nr, bool accumulate) = nullptr;
  // The same with the next K chunk's prefetch (lines at pa + k*sa, pb + k*sb; gemm.h).
  void (*cols_pf)(int64_t kc, const float* const* a, int64_t a_off, const float* b, int64_t ldb, float* c, int64_t ldc,
                  int64_t mr, int64_t nr, bool accumulate, uintptr_t pa, int64_t sa, uintptr_t pb, int64_t sb) = nullptr;
  void (*cols_strided_pf)(int64_t kc, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                          int64_t mr, int64_t nr, bool accumulate, uintptr_t pa, int64_t sa, uintptr_t pb,
                          int64_t sb) = nullptr;
};

// The depthwise filter gradient's micro-kernels (ukernels/depthwise_filter.h) and FusedBatchNormGrad's
// non-temporal dx pass (ukernels/batch_norm.h) at one T (the drivers run them at float and double), as
// their drivers call them, for their testers (tests/test_ukernels_rows.cpp). Null: the unit never runs
// that kernel (dwf_block and dwf_chunk3 under WebAssembly, NV = 2 without dw_channel_pairs, the NT pass
// where bn_can_stream is false).
template <class T>
struct TypedRowUkernels {
  int lanes = 1;  // T per vector
  // dwf_interior<NT> for NT = 1, 2, 3, 4, 6, 9 (the driver's switch): [NT], null for the other NT.
  int64_t (*dwf_interior[10])(int64_t j0, int64_t j1, const T* dyrow, const T* const* src, const int64_t* off,
                              T* const* accp, int64_t step, int64_t C) = {};
  // dwf_block<R, K, S> over one grouped row, GroupedRow's fields as arguments: [S - 1][R - 1][K - 2].
  void (*dwf_block[2][3][2])(const T* const* row, const int64_t* o, int64_t nj, int64_t j_lo, int64_t j_hi,
                             int64_t src_w, int64_t C, const T* dy, T* const* acc, int64_t cv) = {};
  // dwf_chunk3<S, NV>: [S - 1][NV - 1].
  void (*dwf_chunk3[2][2])(const ConvParams& p, const T* x, const T* dy, int64_t r0, int64_t r1, int64_t c,
                           int64_t j_lo, int64_t j_hi, int64_t strip, T* out, bool pf) = {};
  void (*bn_grad_dx_stream)(int64_t r0, int64_t r1, int64_t C, const T* dy, const T* x, const T* mean, const T* k1,
                            const T* k2, const T* k3, T* dx) = nullptr;
};

// The unit's other float micro-kernels (simd/ukernels/, filled by kernels/ukernel_table.h), as
// their drivers call them, for their testers (tests/test_ukernels_rows.cpp). A null entry: the unit
// does not use that kernel (the dwg_wasm, dwf_wasm and dw_interior_wasm slots outside WebAssembly).
struct RowUkernels {
  int lanes = 1;                                                           // floats per vector
  void (*relu[2])(int64_t n, const float* x, float* y) = {};               // [six]
  void (*relu_grad[2])(int64_t n, const float* dy, const float* x, float* dx) = {};
  void (*max_pool_row)(const PoolParams& p, int64_t q, const float* x, bool argmax, float* out) = nullptr;
  void (*max_pool_grad_row)(const PoolParams& p, int64_t q, const float* idx, const float* dy, float* dx) = nullptr;
  void (*avg_pool_row)(const PoolParams& p, int64_t q, const float* x, float* y) = nullptr;
  void (*avg_pool_grad_row)(const PoolParams& p, int64_t q, const float* dy, float* dx) = nullptr;
  void (*frac_pool_row)(const FracPoolParams& p, int64_t q, const float* x, float* y) = nullptr;
  void (*frac_pool_grad_row)(const FracPoolParams& p, int64_t q, const int64_t* rr, const int64_t* cr, const float* dy,
                             float* dx) = nullptr;
  // Batch norm over rows [r0, r1) of [rows, C]: s0 = sum x (bn_row_sums with BnSumX), s0 = sum (x - mean)^2
  // (BnSumSq), the chunk combine, y = (x - m) * k + o, the gradient's sums and dx.
  void (*bn_sum_x)(int64_t r0, int64_t r1, int64_t C, const float* x, float* s0) = nullptr;
  void (*bn_sum_sq)(int64_t r0, int64_t r1, int64_t C, const float* x, const float* mean, float* s0) = nullptr;
  void (*bn_combine)(int64_t chunks, const float* part, int64_t stride, int64_t C, float* out) = nullptr;
  void (*bn_affine)(int64_t r0, int64_t r1, int64_t C, const float* x, const float* m, const float* k,
                    const float* o, float* y) = nullptr;
  void (*bn_grad_sums)(int64_t r0, int64_t r1, int64_t C, const float* dy, const float* x, const float* mean,
                       float* s0, float* s1) = nullptr;
  // The three sums above walking whole rows (bn_whole_row_sums; the same bits).
  void (*bn_sum_x_whole)(int64_t r0, int64_t r1, int64_t C, const float* x, float* s0) = nullptr;
  void (*bn_sum_sq_whole)(int64_t r0, int64_t r1, int64_t C, const float* x, const float* mean, float* s0) = nullptr;
  void (*bn_grad_sums_whole)(int64_t r0, int64_t r1, int64_t C, const float* dy, const float* x, const float* mean,
                             float* s0, float* s1) = nullptr;
  void (*bn_grad_dx)(int64_t r0, int64_t r1, int64_t C, bool training, const float* dy, const float* x,
                     const float* mean, const float* k1, const float* k2, const float* k3, float* dx) = nullptr;
  // The channels-first batch-norm gradient over one plane of P values: its two sums, its dx
  // (stream: non-temporal stores, dx vector-aligned).
  void (*bn_grad_plane_sums)(int64_t P, const float* dy, const float* x, float m, float* s0, float* s1) = nullptr;
  void (*bn_grad_plane_dx)(int64_t P, bool training, bool stream, const float* dy, const float* x, float m, float k1,
                           float k2, float k3, float* dx) = nullptr;
  // Depthwise gather row (depthwise_rows.h dw_row: grouped blocks, interior, edges, channel tail).
  void (*dw_row)(int64_t nj, int64_t nt, const float* const* src, const int64_t* off, const float* const* wt,
                 int64_t step, int64_t src_w, int64_t C, float* dst, int64_t dst_step) = nullptr;
  // The stride-2 3-tap input-gradient row with R = 1..3 filter rows (ukernels/depthwise_gather.h
  // dwx2_row; WebAssembly: dwx2_wasm and dwx2_tail).
  void (*dwx2_row[3])(const float* const* dyr, const float* const* wr, int64_t ow, int64_t C, float* dx) = {};
  // WebAssembly's own depthwise kernels (simd/wasm/depthwise.h; null in the other units), as its
  // kernel set (simd/wasm/kernels.h) calls them: the gather dwg_wasm<R, K> [K - 1][R - 1], the
  // filter gradient dwf_wasm<K, S> [S - 1][K - 2], and dw_interior_wasm.
  void (*dwg_wasm[3][3])(const float* const* row, int64_t o, int64_t nj, int64_t j_lo, int64_t j_hi, int64_t src_w,
                         int64_t C, const float* const* w, int64_t cv, float* dst, int64_t ds) = {};
  void (*dwf_wasm[2][2])(const float* const* row, int64_t R, int64_t o, int64_t nj, int64_t src_w, int64_t C,
                         const float* dy, float* const* acc, int64_t cv, int64_t nr, int64_t xrs, int64_t dys,
                         float* sum, int64_t sub) = {};
  void (*dw_interior_wasm)(int64_t nj, int64_t nt, const float* const* src, const int64_t* off, int64_t p0, int64_t C,
                           const float* const* wt, int64_t ss, int64_t cv, float* dst, int64_t ds) = nullptr;
  // The few-input-channel filter gradient's single-row tile (FewCTile in
  // kernels/conv2d_backprop_filter_few_c.h): NRV = 1, 2 vectors, R rows of A, as the driver calls
  // it; few_c_rows[NRV]: the largest R instantiated (0: none).
  // pf_step > 0: with the prefetch body, lines from b at pf_step bytes a pixel.
  void (*few_c)(int nrv, int64_t r, int64_t nrows, int64_t ncols, const float* a, int64_t ars, int64_t acs,
                const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate, int64_t pf_step) = nullptr;
  int few_c_rows[3] = {};
  // Its stacked tile (FewCStackTile): KY = 2, 3 filter rows of J values, NRV = 1, 2 vectors;
  // few_c_stack_rows[KY][NRV]: the largest J instantiated.
  void (*few_c_stack)(int ky, int nrv, int64_t j, int64_t nrows, int64_t ncols, const float* a, int64_t ars,
                      int64_t acs, int64_t kys, const float* b, int64_t ldb, float* c, int64_t ldc, bool accumulate,
                      int64_t pf_step) = nullptr;
  int few_c_stack_rows[4][3] = {};
  // The depthwise filter gradient and the NT batch-norm dx pass, float and double.
  TypedRowUkernels<float> f32;
  TypedRowUkernels<double> f64;
};

// The 1x1 input gradient's streaming micro-kernel (ukernels/conv1x1_stream.h) with CV = 1..4
// vectors of dx channels: the unit's R-row tile and the 1-row one the driver runs on the last
// P % R pixels; for its tester (tests/test_ukernels_stream.cpp). prefetch: the next tile's dy.
struct StreamUkernel {
  int rows = 0, vectors = 0, lanes = 1;
  void (*run)(int64_t co, int64_t ci, const float* dy, const float* wt, float* dx, bool prefetch) = nullptr;
  void (*run1)(int64_t co, int64_t ci, const float* dy, const float* wt, float* dx, bool prefetch) = nullptr;
};

// What Conv2DBackpropInput runs for these params (PlanInfo::tiles through CpuBackend::tiles_for):
// the streaming tile (rows x vectors) or the GEMM tile, and whether the GEMM path runs on
// padded dy (conv2d_backprop_input_dy_pad).
struct InputPath {
  bool stream = false;
  GemmTile tile;
  bool half = false;  // the streaming tile in half-width vectors (Tiles::stream_half_rows)
  bool padded_dy = false;  // the tile reads a zero-bordered copy of dy (small images)
  int row_tiles = 0;       // padded dy in tiles of this many pixels of one class row (0: MR in pixel order)
  bool edge_groups = false;  // tiles of pixels with the same valid taps (conv2d_backprop_input_edge_groups)
};

// What Conv2DBackpropFilter runs for these params (PlanInfo::tiles): the few-input-channel
// path, or the per-tap GEMM tile and its K slices (1: none).
struct FilterPath {
  bool few_c = false;
  GemmTile tile;
  int64_t slices = 1;
};

struct KernelTable {
  KernelsT<float> f32;
  KernelsT<double> f64;
  GemmUkernel gemm[3 * kMaxGemmTiles];  // unused entries: tile {0, 0}
  RowUkernels rows;
  StreamUkernel stream[4];  // [CV - 1]
  InputPath (*input_path)(const ConvTuning&, const ConvParams&, bool f64) = nullptr;
  StreamUkernel stream_half;  // half-width vectors, CV = 1 (rows 0: the unit has none)
  FilterPath (*filter_path)(const ConvTuning&, const ConvParams&, bool f64) = nullptr;
};

// Driver calls that took memory of their own for want of workspace (common.h Arena).
uint64_t workspace_fallbacks();
// Packs of a plan's kept weights (common.h kept_weights).
uint64_t weight_packs();

// The table of an ISA built into this binary (the scalar one for any other); cpu_backend.cpp.
const KernelTable* kernel_table(Isa isa);

// One per ISA unit built into this binary (see simd/CMakeLists.txt).
const KernelTable* table_scalar();
const KernelTable* table_sse4_2();
const KernelTable* table_avx2();
const KernelTable* table_avx512();
const KernelTable* table_neon();
const KernelTable* table_wasm_simd128();

}  // namespace gradrt::simd

// row_ukernels<Arch>(): the unit's non-GEMM micro-kernels as plain function pointers (table.h
// RowUkernels: float; its TypedRowUkernels float and double), each called exactly as its driver
// calls it, for the testers in tests/test_ukernels_rows.cpp. Included by all.h after every driver
// and micro-kernel header.
// The lambdas depend on Arch, so each unit's copy stays its own (ukernels/vec.h, ODR trap).
#pragma once

#include "table.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// dwf_block<T, Arch, R, K, S> with GroupedRow's fields as arguments (the tester cannot name
// GroupedRow: it lives in the unit's namespace).
template <class T, class Arch, int R, int K, int S>
void dwf_block_call(const T* const* row, const int64_t* o, int64_t nj, int64_t j_lo, int64_t j_hi, int64_t src_w,
                    int64_t C, const T* dy, T* const* acc, int64_t cv) {
  GroupedRow<T> gr{{}, {}, nj, j_lo, j_hi, src_w, C};
  for (int r = 0; r < R; ++r) gr.row[r] = row[r], gr.o[r] = o[r];
  dwf_block<T, Arch, R, K, S, kTiles.dw_block_pixels>(gr, dy, acc, cv);
}

template <class T, class Arch, int S>
void fill_dwf_block(TypedRowUkernels<T>& u) {
  auto one = [&]<int R, int K>() { u.dwf_block[S - 1][R - 1][K - 2] = &dwf_block_call<T, Arch, R, K, S>; };
  one.template operator()<1, 2>(), one.template operator()<2, 2>(), one.template operator()<3, 2>();
  one.template operator()<1, 3>(), one.template operator()<2, 3>(), one.template operator()<3, 3>();
}

template <class T, class Arch>
TypedRowUkernels<T> typed_row_ukernels() {
  TypedRowUkernels<T> u;
  u.lanes = static_cast<int>(Vec<T, Arch>::width);
  u.dwf_interior[1] = &dwf_interior<T, Arch, 1>;
  u.dwf_interior[2] = &dwf_interior<T, Arch, 2>;
  u.dwf_interior[3] = &dwf_interior<T, Arch, 3>;
  u.dwf_interior[4] = &dwf_interior<T, Arch, 4>;
  u.dwf_interior[6] = &dwf_interior<T, Arch, 6>;
  u.dwf_interior[9] = &dwf_interior<T, Arch, 9>;
  if constexpr (!kTiles.wasm) {  // (WebAssembly runs dwf_wasm of simd/wasm/ instead)
    fill_dwf_block<T, Arch, 1>(u);
    fill_dwf_block<T, Arch, 2>(u);
    u.dwf_chunk3[0][0] = &dwf_chunk3<T, Arch, 1, 1, kTiles.dw_block_pixels>;
    u.dwf_chunk3[1][0] = &dwf_chunk3<T, Arch, 2, 1, kTiles.dw_block_pixels>;
    if constexpr (kTiles.dw_channel_pairs) {
      u.dwf_chunk3[0][1] = &dwf_chunk3<T, Arch, 1, 2, kTiles.dw_block_pixels>;
      u.dwf_chunk3[1][1] = &dwf_chunk3<T, Arch, 2, 2, kTiles.dw_block_pixels>;
    }
  }
  if constexpr (bn_can_stream<T, Arch>()) u.bn_grad_dx_stream = &bn_grad_dx_stream<T, Arch>;
  return u;
}

template <class Arch>
RowUkernels row_ukernels() {
  using F = float;
  RowUkernels u;
  u.lanes = static_cast<int>(Vec<F, Arch>::width);
  u.relu[0] = [](int64_t n, const F* x, F* y) { relu_span<F, Arch, false>(n, x, y); };
  u.relu[1] = [](int64_t n, const F* x, F* y) { relu_span<F, Arch, true>(n, x, y); };
  u.relu_grad[0] = [](int64_t n, const F* dy, const F* x, F* dx) { relu_grad_span<F, Arch, false>(n, dy, x, dx); };
  u.relu_grad[1] = [](int64_t n, const F* dy, const F* x, F* dx) { relu_grad_span<F, Arch, true>(n, dy, x, dx); };
  u.max_pool_row = &max_pool_row<F, Arch>;
  u.max_pool_grad_row = &max_pool_grad_row<F, Arch>;
  u.avg_pool_row = &avg_pool_row<F, Arch>;
  u.avg_pool_grad_row = &avg_pool_grad_row<F, Arch>;
  u.frac_pool_row = &frac_pool_row<F, Arch>;
  u.frac_pool_grad_row = &frac_pool_grad_row<F, Arch>;
  u.bn_sum_x = [](int64_t r0, int64_t r1, int64_t C, const F* x, F* s0) {
    bn_row_sums<F, Arch, bn_vectors<F>(kTiles)>(r0, r1, C, s0, static_cast<F*>(nullptr), BnSumX<F>{x, C});
  };
  u.bn_sum_sq = [](int64_t r0, int64_t r1, int64_t C, const F* x, const F* mean, F* s0) {
    bn_row_sums<F, Arch, bn_vectors<F>(kTiles)>(r0, r1, C, s0, static_cast<F*>(nullptr), BnSumSq<F>{x, mean, C});
  };
  u.bn_combine = &bn_combine<F, Arch>;
  u.bn_affine = &bn_affine<F, Arch>;
  u.bn_grad_sums = &bn_grad_sums<F, Arch, bn_vectors<F>(kTiles)>;
  u.bn_grad_dx = &bn_grad_dx<F, Arch>;
  u.bn_grad_plane_sums = &bn_grad_plane_sums<F, Arch>;
  u.bn_grad_plane_dx = &bn_grad_plane_dx<F, Arch>;
  u.dw_row = &dw_row<F, Arch>;
  if constexpr (!kTiles.wasm) {  // (WebAssembly runs dwx2_wasm of simd/wasm/ instead)
    u.dwx2_row[0] = &dwx2_row<F, Arch, 1>;
    u.dwx2_row[1] = &dwx2_row<F, Arch, 2>;
    u.dwx2_row[2] = &dwx2_row<F, Arch, 3>;
  }
  u.few_c = &few_c_ukernel<F, Arch>;
  for (int v = 1; v <= kFewCVecMax; ++v) u.few_c_rows[v] = kFewCAcc / v;
  u.few_c_stack = &few_c_stack_ukernel<F, Arch>;
  for (int ky : {2, 3})
    for (int v : {1, 2}) u.few_c_stack_rows[ky][v] = few_c_stack_acc<F, Arch>(v) / (ky * v);
  u.f32 = typed_row_ukernels<float, Arch>();
  u.f64 = typed_row_ukernels<double, Arch>();
  return u;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

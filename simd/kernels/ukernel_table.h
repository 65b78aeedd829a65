// row_ukernels<Arch>(): the unit's non-GEMM micro-kernels as plain function pointers (table.h
// RowUkernels: float; its TypedRowUkernels float and double), each called exactly as its driver
// calls it, for the testers in tests/test_ukernels_rows.cpp. Included by all.h after every driver
// and micro-kernel header.
// The lambdas depend on Arch, so each unit's copy stays its own (ukernels/vec.h, ODR trap).
#pragma once

#include "table.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

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
  DwKernels<T, Arch>::fill_testers(u);  // the unit's own depthwise kernels
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
  u.bn_sum_x_whole = [](int64_t r0, int64_t r1, int64_t C, const F* x, F* s0) {
    bn_whole_row_sums<F, Arch>(r0, r1, C, s0, static_cast<F*>(nullptr), BnSumX<F>{x, C});
  };
  u.bn_sum_sq_whole = [](int64_t r0, int64_t r1, int64_t C, const F* x, const F* mean, F* s0) {
    bn_whole_row_sums<F, Arch>(r0, r1, C, s0, static_cast<F*>(nullptr), BnSumSq<F>{x, mean, C});
  };
  u.bn_grad_sums_whole = [](int64_t r0, int64_t r1, int64_t C, const F* dy, const F* x, const F* mean, F* s0, F* s1) {
    bn_whole_row_sums<F, Arch>(r0, r1, C, s0, s1, BnGradSum<F>{dy, x, mean, C});
  };
  u.bn_grad_dx = &bn_grad_dx<F, Arch>;
  u.bn_grad_plane_sums = &bn_grad_plane_sums<F, Arch>;
  u.bn_grad_plane_dx = &bn_grad_plane_dx<F, Arch>;
  u.dw_row = &dw_row<F, Arch>;
  DwKernels<F, Arch>::fill_testers(u);
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

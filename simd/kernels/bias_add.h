// BiasAdd (TF: value = x, bias -> output = y) over [rows, channels] (NCHW transposed by core):
// batch norm's affine pass y = (x - m) * k + o (fused_batch_norm.h: one pass, rows split across
// threads) with m = 0, k = 1, o = bias. x - 0 and x * 1 are exact, so the one rounding is that of
// x + bias, fused multiply-add or not: the reference's bits, -0, NaN and inf included.
#pragma once

#include "fused_batch_norm.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Scratch: C ones and C zeros.
template <class T, class Arch>
size_t bias_add_workspace(int, const ConvTuning&, const BiasParams& p) {
  return ScratchSize{}.add(line_bytes<T>(p.channels)).add(line_bytes<T>(p.channels)).shared;
}

template <class T, class Arch>
void bias_add(const Exec& exec, const BiasParams& p, const T* x, const T* bias, T* y) {
  const int64_t C = p.channels;
  if (p.rows == 0 || C == 0) return;
  Arena scratch(exec);
  T* one = scratch.take<T>(C);
  for (int64_t c = 0; c < C; ++c) one[c] = T(1);
  bn_affine_rows<T, Arch>(exec, p.rows, C, x, scratch.take_zeros<T>(C), one, bias, y);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

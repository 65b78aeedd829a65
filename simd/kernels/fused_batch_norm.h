// FusedBatchNorm forward pieces over x seen as [rows, channels] (rows = N*H*W):
//   batch_norm_stats: mean = (sum x) * (1/R), variance = (sum (x - mean)^2) * (1/R)  (biased,
//                     two passes, as TF's CPU kernel; 1/R is the float reciprocal)
//   batch_norm_apply: y = (x - mean) * (rsqrt(variance + eps) * scale) + offset
// Reductions: rows cut into fixed chunks (independent of threads), per-chunk partial sums
// per channel, added in chunk order. Channels in the lanes; blocks of channels keep their
// accumulators in registers while the chunk's rows stream by.
#pragma once

#include <cmath>
#include <type_traits>

#include "../ukernels/batch_norm.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Row chunking of the batch-norm reductions.
inline int64_t bn_grain(int64_t rows) { return reduction_grain(rows, 128, 256); }

template <class T, class Arch>
void batch_norm_stats(const Exec& exec, const ConvTuning& tuning, const BatchNormParams& p, const T* x, T* mean,
                      T* variance) {
  const int64_t R = p.rows, C = p.channels;
  if (C == 0) return;
  constexpr int U = bn_vectors<T>(kTiles);
  const bool whole_rows = tuning.bn_whole_rows(R * C * int64_t(sizeof(T)));
  const int64_t grain = bn_grain(R), chunks = nchunks(R, grain);
  Arena scratch(exec);
  T* part = scratch.take<T>(chunks * C + 1);
  const T inv_r = R > 0 ? T(1) / T(R) : T(0);
  par(exec, R, grain, [&](int64_t r0, int64_t r1) {
    bn_sums<T, Arch, U>(whole_rows, r0, r1, C, part + (r0 / grain) * C, static_cast<T*>(nullptr), BnSumX<T>{x, C});
  });
  bn_combine<T, Arch>(chunks, part, C, C, mean);
  for (int64_t c = 0; c < C; ++c) mean[c] *= inv_r;
  par(exec, R, grain, [&](int64_t r0, int64_t r1) {
    bn_sums<T, Arch, U>(whole_rows, r0, r1, C, part + (r0 / grain) * C, static_cast<T*>(nullptr),
                        BnSumSq<T>{x, mean, C});
  });
  bn_combine<T, Arch>(chunks, part, C, C, variance);
  for (int64_t c = 0; c < C; ++c) variance[c] *= inv_r;
}

// Scratch: the chunk partials of one sum.
template <class T, class Arch>
size_t batch_norm_stats_workspace(int, const ConvTuning&, const BatchNormParams& p) {
  return ScratchSize{}.add(line_bytes<T>(nchunks(p.rows, bn_grain(p.rows)) * p.channels + 1)).shared;
}

// y = (x - m) * k + o per channel, rows split across threads (no reduction).
template <class T, class Arch>
inline void bn_affine_rows(const Exec& exec, int64_t R, int64_t C, const T* x, const T* m, const T* k,
                           const T* o, T* y) {
  par(exec, R, imax(1, 16384 / imax(1, C)),
      [&](int64_t r0, int64_t r1) { bn_affine<T, Arch>(r0, r1, C, x, m, k, o, y); });
}

// Scratch: C factors. FusedBatchNorm runs stats and then apply as one kernel call
// (core/ops/fused_batch_norm.cpp), each taking from the start of the same workspace: apply's
// size covers both.
template <class T, class Arch>
size_t batch_norm_apply_workspace(int threads, const ConvTuning& tu, const BatchNormParams& p) {
  const size_t stats = batch_norm_stats_workspace<T, Arch>(threads, tu, p);
  return stats > line_bytes<T>(p.channels) ? stats : line_bytes<T>(p.channels);
}

template <class T, class Arch>
void batch_norm_apply(const Exec& exec, const BatchNormParams& p, const T* x, const T* scale,
                      const T* offset, const T* mean, const T* variance, T* y) {
  const int64_t R = p.rows, C = p.channels;
  if (C == 0 || R == 0) return;
  // TF's order: (x - mean) * (rsqrt(variance + eps) * scale) + offset.
  Arena scratch(exec);
  T* k = scratch.take<T>(C);
  for (int64_t c = 0; c < C; ++c) k[c] = T(1) / std::sqrt(variance[c] + T(p.epsilon)) * scale[c];
  bn_affine_rows<T, Arch>(exec, R, C, x, mean, k, offset, y);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

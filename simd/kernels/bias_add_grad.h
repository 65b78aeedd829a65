// BiasAddGrad (TF: out_backprop = dy -> output = dbias) over [rows, channels] (NCHW transposed
// by core): dbias[c] = sum over rows of dy[r, c]. The batch-norm sum micro-kernels do the work
// (ukernels/batch_norm.h: channels in the lanes, blocks of channel vectors held in registers
// while a chunk's rows stream by). Rows are cut into fixed chunks that depend only on the row
// count (reduction_grain), each chunk's partial sums go to its own slot, and the slots are added
// in chunk order: the same bits for any thread count.
#pragma once

#include "../ukernels/batch_norm.h"
#include "common.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

inline int64_t bias_grad_chunks(int64_t rows) { return nchunks(rows, reduction_grain(rows, 128, 256)); }

// Scratch: one partial sum per chunk and channel.
template <class T, class Arch>
size_t bias_add_grad_workspace(int, const ConvTuning&, const BiasParams& p) {
  return ScratchSize{}.add(line_bytes<T>(bias_grad_chunks(p.rows) * p.channels + 1)).shared;
}

template <class T, class Arch>
void bias_add_grad(const Exec& exec, const BiasParams& p, const T* dy, T* dbias) {
  const int64_t R = p.rows, C = p.channels;
  if (C == 0) return;
  const int64_t grain = reduction_grain(R, 128, 256), chunks = bias_grad_chunks(R);
  Arena scratch(exec);
  T* part = scratch.take<T>(chunks * C + 1);
  par(exec, R, grain, [&](int64_t r0, int64_t r1) {
    bn_row_sums<T, Arch, bn_vectors<T>(kTiles)>(r0, r1, C, part + (r0 / grain) * C, static_cast<T*>(nullptr),
                                                BnSumX<T>{dy, C});
  });
  bn_combine<T, Arch>(chunks, part, C, C, dbias);
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

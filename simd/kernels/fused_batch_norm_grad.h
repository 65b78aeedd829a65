// FusedBatchNormGrad (TF: y_backprop = dy, x, scale, reserve_space_1 = mean mu,
// reserve_space_2 = biased variance; outputs x_backprop = dx, scale_backprop = dscale,
// offset_backprop = doffset). R = rows, inv = rsqrt(var + eps), xc = x - mu.
//   training:  doffset = sum dy, dscale = (sum dy*xc) * inv,
//              dx = scale*inv * (dy - (sum dy)/R - xc * inv^2 * (sum dy*xc)/R)
//   inference: doffset = sum dy, dscale = (sum dy*xc) * inv, dx = dy * scale * inv
// Two passes: the sums (fixed row chunks, partials added in chunk order), then dx as one
// fused multiply-add chain per element: dx = dy*k1 + (xc*k2 + k3) with per-channel k's.
//
// Measured on Zen 5 at 56x56x256 (3.2 MB per tensor at batch 1, L3-resident): both passes
// run at L3 bandwidth (the sum pass within ~10% of a bare read of dy and x), ~19 MB moved
// per call. Tried and not kept: column blocks of one cache line over all rows, to reread dy
// and x from L2 in the dx pass (a 1 KB row stride maps a column onto 1/16 of the L2 sets:
// 3x slower); aligned loads permuted into place for misaligned inputs (no gain through
// run_op); non-temporal dx stores at this size (kept for dx >= 4 MiB, see kBnStreamBytes);
// the dx pass in reverse chunk order (and rows descending).
// Batch 8 (25.7 MB per tensor, DRAM; 1 thread, Zen 5 guest, shared with builds): a bare read
// of two tensors runs at ~49 GB/s (1.04 ms), read 2 + write 1 at 1.78 ms with normal stores and
// 1.35 ms with non-temporal ones. The sum pass takes ~1.25 ms, the dx pass ~2.6 ms with normal
// stores, ~1.6 ms non-temporal: both near those ceilings. No gain at batch 8 from software
// prefetch in the sum pass (2-32 rows ahead), from the dx pass in reverse order (so the tail
// of the sum pass is still in L3: slower, worst with NT stores), or from channel blocks of 64
// or 128 channels swept over all rows (sum pass then dx pass per block, the block's dy and x
// kept in L3 between them: 5-6 ms, the strided 256-byte pieces of each row cost more than the
// L3 hits save).
// Also tried (commit 447ca3b, reverted): channel blocks of 1, 2 or 4 lines per row over all
// rows, dy and x - mean packed into a contiguous per-thread scratch while summing, dx from the
// scratch (dy, x read once). Slower at every block width: at batch 1 (aligned, called
// directly) 0.25 ms vs 0.21, through the bench 0.38-0.60 vs 0.26-0.31 ms; at batch 8 no gain.
// Measured pieces (3.2 MB tensors in L3, 1 thread): strided reads of 1 line per 1 KB row run
// at ~40% of a sequential read, 2 lines ~65%, 4 lines ~100%; strided stores of 1 line per
// row ~25% of sequential, 2+ lines ~90%; but 2 tensors x 4 lines x 3136 rows = 1.6 MB of
// scratch exceeds the 1 MB L2 (the streamed dy/x lines evict it too), so no width gets both.
// Also no gain: the sum pass over whole 1 KB rows (16 vectors, same bits).
#pragma once

#include <cmath>
#include <type_traits>

#include "../ukernels/batch_norm.h"
#include "fused_batch_norm.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// dx of at least this many bytes is written with non-temporal stores (when aligned): it
// will not fit the caches next to dy and x anyway, and a normal store reads each dx line
// from DRAM first. Measured on Zen 5 (56x56x256, 1 thread, dx pass alone): 6.4 MB 0.39 ->
// 0.32 ms, 25.7 MB 2.6 -> 1.7 ms; at 3.2 MB (L3-resident) no difference, so kept below.
constexpr int64_t kBnStreamBytes = int64_t{4} << 20;

template <class T, class Arch>
size_t fused_batch_norm_grad_workspace(int, const ConvTuning&, const BatchNormParams& p) {
  return ScratchSize{}
      .add(line_bytes<T>(nchunks(p.rows, bn_grain(p.rows)) * 2 * p.channels + 1))
      .add(line_bytes<T>(4 * p.channels))
      .shared;
}

template <class T, class Arch>
void fused_batch_norm_grad(const Exec& exec, const BatchNormParams& p, const T* dy, const T* x,
                           const T* scale, const T* mean, const T* variance, T* dx, T* dscale,
                           T* doffset) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t R = p.rows, C = p.channels;
  if (C == 0) return;
  const int64_t grain = bn_grain(R), chunks = nchunks(R, grain);
  // part: [chunk][2][C]; k: k1, k2, k3, per channel (sizes: fused_batch_norm_grad_workspace).
  Arena scratch(exec);
  T* part = scratch.take<T>(chunks * 2 * C + 1);
  T* k = scratch.take<T>(4 * C);
  T* sdyxc = k + 3 * C;
  par(exec, R, grain, [&](int64_t r0, int64_t r1) {
    T* s0 = part + (r0 / grain) * 2 * C;
    bn_grad_sums<T, Arch>(r0, r1, C, dy, x, mean, s0, s0 + C);
  });
  bn_combine<T, Arch>(chunks, part, 2 * C, C, doffset);
  bn_combine<T, Arch>(chunks, part + C, 2 * C, C, sdyxc);
  const T inv_r = R > 0 ? T(1) / T(R) : T(0);
  for (int64_t c = 0; c < C; ++c) {
    const T inv = T(1) / std::sqrt(variance[c] + T(p.epsilon));
    dscale[c] = sdyxc[c] * inv;
    const T k1 = scale[c] * inv;
    if (p.is_training) {
      // dx = k1*dy - k1*(sum dy)/R - k1*inv^2*(sum dy*xc)/R * xc
      k[c] = k1;
      k[C + c] = -k1 * (inv * inv * (sdyxc[c] * inv_r));
      k[2 * C + c] = -k1 * (doffset[c] * inv_r);
    } else {
      k[c] = k1;
      k[C + c] = T(0);
      k[2 * C + c] = T(0);
    }
  }
  if (R == 0) return;
  const T* k1 = k;
  const T* k2 = k + C;
  const T* k3 = k + 2 * C;
  const int64_t dx_grain = imax(1, 16384 / C);
  if constexpr (bn_can_stream<T, Arch>()) {
    const bool aligned = reinterpret_cast<uintptr_t>(dx) % (sizeof(T) * L) == 0 && C % L == 0;
    if (p.is_training && aligned && R * C * int64_t(sizeof(T)) >= kBnStreamBytes) {
      par(exec, R, dx_grain,
          [&](int64_t r0, int64_t r1) { bn_grad_dx_stream<T, Arch>(r0, r1, C, dy, x, mean, k1, k2, k3, dx); });
      return;
    }
  }
  par(exec, R, dx_grain, [&](int64_t r0, int64_t r1) {
    bn_grad_dx<T, Arch>(r0, r1, C, p.is_training, dy, x, mean, k1, k2, k3, dx);
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

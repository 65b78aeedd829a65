// FusedBatchNormGrad (TF: y_backprop = dy, x, scale, reserve_space_1 = mean mu,
// reserve_space_2 = biased variance; outputs x_backprop = dx, scale_backprop = dscale,
// offset_backprop = doffset). R = rows, inv = rsqrt(var + eps), xc = x - mu.
//   training:  doffset = sum dy, dscale = (sum dy*xc) * inv,
//              dx = scale*inv * (dy - (sum dy)/R - xc * inv^2 * (sum dy*xc)/R)
//   inference: doffset = sum dy, dscale = (sum dy*xc) * inv, dx = dy * scale * inv
// Two passes: the sums (fixed row chunks, partials added in chunk order), then dx as one
// fused multiply-add chain per element: dx = dy*k1 + (xc*k2 + k3) with per-channel k's.
// Past ConvTuning::bn_whole_rows_bytes of dy + x the sums walk whole rows (bn_whole_row_sums;
// same bits): Zen 4, batch 8 (51 MB), 0.62x the time at 1 thread (the channel blocks' 512-byte
// pieces at a 1 KB stride ran at under half a sequential read from DRAM there).
//
// Measured on Zen 5 at 56x56x256 (3.2 MB per tensor at batch 1, L3-resident): both passes
// run at L3 bandwidth (the sum pass within ~10% of a bare read of dy and x), ~19 MB moved
// per call. Tried and not kept: column blocks of one cache line over all rows, to reread dy
// and x from L2 in the dx pass (a 1 KB row stride maps a column onto 1/16 of the L2 sets:
// 3x slower); aligned loads permuted into place for misaligned inputs (no gain through
// run_op); non-temporal dx stores at this size (kept for dx >= 4 MiB, ConvTuning::bn_grad_stream_bytes);
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
// Emerald Rapids (2 MB L2 per core; session 12, cli_ab, batch 1): channel blocks of 1-3
// vectors over all rows, each thread running both passes per block of its own (dy + x of a
// block, 0.4-1.2 MB, in L2 for the dx pass; same bits): 1.7-2.1x the time at 1 thread,
// 1.8-4.1x at 2 (64-192 contiguous bytes per 1 KB row, in both passes). Without the NT dx
// stores at batch 8: 1.4-1.6x the time (so 4 MiB stays). The dx pass last chunk first
// (ConvTuning::bn_grad_dx_reverse_bytes): 0.95x the time at batch 1, 1.02-1.05x at batch 8.
// Session 13: non-temporal dx from 1 MiB there (batch 1's 3.2 MB dx no longer evicts the
// dy + x lines that the reversed pass and the next call reread from L2): 0.84x the time at
// batch 1, 1 thread (256 KiB the same; without the reversal 0.92x: both kept).
#pragma once

#include <cmath>
#include <type_traits>

#include "../ukernels/batch_norm.h"
#include "fused_batch_norm.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// dx of at least ConvTuning::bn_grad_stream_bytes is written with non-temporal stores (when
// aligned): it will not fit the caches next to dy and x anyway, and a normal store reads each
// dx line from DRAM first. Measured on Zen 5 (56x56x256, 1 thread, dx pass alone): 6.4 MB
// 0.39 -> 0.32 ms, 25.7 MB 2.6 -> 1.7 ms; at 3.2 MB (L3-resident) no difference: 4 MiB.

// Channels-first (p.plane > 0): the sums per (image, channel) plane, [image][2][C].
inline int64_t bn_grad_partials(const BatchNormParams& p) {
  return p.plane > 0 ? p.rows / p.plane : nchunks(p.rows, bn_grain(p.rows));
}

template <class T, class Arch>
size_t fused_batch_norm_grad_workspace(int, const ConvTuning&, const BatchNormParams& p) {
  return ScratchSize{}
      .add(line_bytes<T>(bn_grad_partials(p) * 2 * p.channels + 1))
      .add(line_bytes<T>(4 * p.channels))
      .shared;
}

// Channels-first (NCHW, p.plane > 0): x, dy, dx are [N, C, plane], N = rows / plane. Planes of
// one image and channel are contiguous, so no transposes: each plane's sums (any thread, its
// own slot of part), combined over images in image order; then dx plane by plane. The same
// math as the channels-last path in another fixed summation order (shape-only).
template <class T, class Arch, class Constants>
void planes_grad(const Exec& exec, const ConvTuning& tuning, const BatchNormParams& p, const T* dy, const T* x,
                 const T* mean, T* part, T* sdyxc, const Constants& constants, const T* k1, const T* k2,
                 const T* k3, T* dx, T* doffset) {
  const int64_t P = p.plane, C = p.channels, N = p.rows / P;
  const int64_t grain = imax(1, 16384 / P);  // planes per task (any split gives the same bits)
  par(exec, N * C, grain, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t n = q / C, c = q % C;
      T* s = part + n * 2 * C + c;
      bn_grad_plane_sums<T, Arch>(P, dy + q * P, x + q * P, mean[c], s, s + C);
    }
  });
  bn_combine<T, Arch>(N, part, 2 * C, C, doffset);
  bn_combine<T, Arch>(N, part + C, 2 * C, C, sdyxc);
  constants(0, C);
  using V = Vec<T, Arch>;
  bool stream = false;
  if constexpr (bn_can_stream<T, Arch>())
    stream = p.is_training && tuning.bn_grad_stream_bytes > 0 && P % V::width == 0 &&
             reinterpret_cast<uintptr_t>(dx) % (sizeof(T) * V::width) == 0 &&
             p.rows * C * int64_t(sizeof(T)) >= tuning.bn_grad_stream_bytes;
  par(exec, N * C, grain, [&](int64_t q0, int64_t q1) {
    for (int64_t q = q0; q < q1; ++q) {
      const int64_t c = q % C;
      bn_grad_plane_dx<T, Arch>(P, p.is_training, stream, dy + q * P, x + q * P, mean[c], k1[c], k2[c], k3[c],
                                dx + q * P);
    }
  });
}

template <class T, class Arch>
void fused_batch_norm_grad(const Exec& exec, const ConvTuning& tuning, const BatchNormParams& p, const T* dy,
                           const T* x, const T* scale, const T* mean, const T* variance, T* dx, T* dscale,
                           T* doffset) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  const int64_t R = p.rows, C = p.channels;
  if (C == 0) return;
  const int64_t grain = bn_grain(R), chunks = bn_grad_partials(p);
  // part: [chunk][2][C]; k: k1, k2, k3, per channel (sizes: fused_batch_norm_grad_workspace).
  Arena scratch(exec);
  T* part = scratch.take<T>(chunks * 2 * C + 1);
  T* k = scratch.take<T>(4 * C);
  T* sdyxc = k + 3 * C;
  T* k1 = k;
  T* k2 = k + C;
  T* k3 = k + 2 * C;
  const T inv_r = R > 0 ? T(1) / T(R) : T(0);
  // dscale and the dx constants of channels [c0, c1) from the combined sums.
  auto constants = [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T inv = T(1) / std::sqrt(variance[c] + T(p.epsilon));
      dscale[c] = sdyxc[c] * inv;
      const T s = scale[c] * inv;
      // training: dx = s*dy - s*(sum dy)/R - s*inv^2*(sum dy*xc)/R * xc
      k1[c] = s;
      k2[c] = p.is_training ? -s * (inv * inv * (sdyxc[c] * inv_r)) : T(0);
      k3[c] = p.is_training ? -s * (doffset[c] * inv_r) : T(0);
    }
  };
  if (p.plane > 0) {
    planes_grad<T, Arch>(exec, tuning, p, dy, x, mean, part, sdyxc, constants, k1, k2, k3, dx, doffset);
    return;
  }
  constexpr int U = bn_vectors<T>(kTiles);
  const bool whole_rows = C > U * L && tuning.bn_whole_rows(2 * R * C * int64_t(sizeof(T)));
  par(exec, R, grain, [&](int64_t r0, int64_t) {
    T* s0 = part + (r0 / grain) * 2 * C;
    const int64_t r1 = imin(R, r0 + grain);
    if (whole_rows)
      bn_whole_row_sums<T, Arch>(r0, r1, C, s0, s0 + C, BnGradSum<T>{dy, x, mean, C});
    else
      bn_grad_sums<T, Arch, U>(r0, r1, C, dy, x, mean, s0, s0 + C);
  });
  bn_combine<T, Arch>(chunks, part, 2 * C, C, doffset);
  bn_combine<T, Arch>(chunks, part + C, 2 * C, C, sdyxc);
  constants(0, C);
  if (R == 0) return;
  // The dx pass in chunks of dx_grain rows; the last chunk first where dy + x are within
  // bn_grad_dx_reverse_bytes (_mt on several threads; elementwise: the order never touches the bits).
  const int64_t dx_grain = imax(1, 16384 / C), dx_chunks = nchunks(R, dx_grain);
  const bool reverse = 2 * R * C * int64_t(sizeof(T)) <= tuning.bn_reverse_bytes(exec.threads);
  auto dx_pass = [&](auto&& rows) {
    par(exec, dx_chunks, 1, [&](int64_t q0, int64_t q1) {
      for (int64_t q = q0; q < q1; ++q) {
        // Reversed per thread (each range of chunks last first: a thread's rows are those it
        // summed, so their last ones are still in its own L2; a global reverse would hand
        // them to the other thread).
        const int64_t r0 = (reverse ? gradrt::mirror_in_range(q, dx_chunks, exec.threads) : q) * dx_grain;
        rows(r0, imin(R, r0 + dx_grain));
      }
    });
  };
  if constexpr (bn_can_stream<T, Arch>()) {
    const bool aligned = reinterpret_cast<uintptr_t>(dx) % (sizeof(T) * L) == 0 && C % L == 0;
    const int64_t nt_bytes = tuning.bn_grad_stream_bytes;
    if (p.is_training && aligned && nt_bytes > 0 && R * C * int64_t(sizeof(T)) >= nt_bytes) {
      dx_pass([&](int64_t r0, int64_t r1) { bn_grad_dx_stream<T, Arch>(r0, r1, C, dy, x, mean, k1, k2, k3, dx); });
      return;
    }
  }
  dx_pass([&](int64_t r0, int64_t r1) { bn_grad_dx<T, Arch>(r0, r1, C, p.is_training, dy, x, mean, k1, k2, k3, dx); });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

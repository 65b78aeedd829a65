// FusedBatchNormGrad (training), channel-blocked with packing: dy and x read once from
// L3/DRAM instead of twice. EXPERIMENT, enabled for every size here to measure it; slower
// than the two-pass kernel on Zen 5 (see the note in fused_batch_norm_grad.h).
//
// The two-pass kernel (fused_batch_norm_grad.h) streams dy and x for the sums, then again
// for dx. Here each task takes a block of CB channels (kBnGradLines cache lines of each row) over ALL
// rows: pass 1 reads the block's lines of dy and x (strided by the row, whole lines of each
// row, sequential: the stride prefetcher follows), sums them, and copies dy and xc = x - mean
// into a contiguous per-thread scratch (2 * R * CB values); pass 2 computes dx for the block
// from the scratch and stores its lines (strided). The scratch is contiguous because a column
// of lines at a 1 KB row stride maps onto 1/16 of the L2 sets: reread in place it thrashes,
// packed it stays in L2 (or in L3 where it is bigger than L2).
//
// Sums: within a block, rows in strips of kStrip; each strip's rows go round-robin into 4
// (or fewer, see RA) accumulators added (a0 + a1) + (a2 + a3) at the strip's end, and strip
// totals are added in row order. A block is always summed by one task in this order, so the
// bits do not depend on the thread count.
#pragma once

#include <cmath>

#include "common.h"

#ifndef GRADRT_BN_GRAD_SCRATCH_KB
#define GRADRT_BN_GRAD_SCRATCH_KB (1 << 20)
#endif

namespace gradrt::simd::GRADRT_SIMD_NS {

// Cache lines of each row per block (1, 2 or 4).
constexpr int kBnGradLines = 2;

// Channels per block: LINES 64-byte lines of each row.
template <class T, int LINES = 1>
constexpr int64_t bn_grad_block() {
  return LINES * 64 / int64_t(sizeof(T));
}

// One block: channels [c, c + CB) of every row. s: scratch of 2 * R * CB values.
template <class T, class Arch, int LINES>
GRADRT_SIMD_NOINLINE void bn_grad_block(int64_t R, int64_t C, int64_t c, T epsilon, const T* dy,
                                        const T* x, const T* scale, const T* mean, const T* variance,
                                        T* dx, T* dscale, T* doffset, T* s) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int64_t CB = bn_grad_block<T, LINES>();
  constexpr int U = int(CB / L);             // vectors per row of the block
  constexpr int RA = U >= 4 ? 1 : 4 / U;     // row accumulators: 2 * RA * U sums in registers
  constexpr int64_t kStrip = 128;
  T* sd = s;            // dy of the block, [R][CB]
  T* sx = s + R * CB;   // x - mean of the block, [R][CB]
  B m[U], ta[U], tb[U];
  for (int u = 0; u < U; ++u) {
    m[u] = V::load(mean + c + u * L);
    ta[u] = tb[u] = V::zero();
  }
  for (int64_t r0 = 0; r0 < R; r0 += kStrip) {
    const int64_t r1 = imin(R, r0 + kStrip);
    B a[RA][U], b[RA][U];
    for (int j = 0; j < RA; ++j)
      for (int u = 0; u < U; ++u) a[j][u] = b[j][u] = V::zero();
    int64_t r = r0;
    for (; r + RA <= r1; r += RA) {
#pragma GCC unroll 4
      for (int j = 0; j < RA; ++j) {
        const T* dyr = dy + (r + j) * C + c;
        const T* xr = x + (r + j) * C + c;
#pragma GCC unroll 16
        for (int u = 0; u < U; ++u) {
          const B d = V::load(dyr + u * L);
          const B xc = V::load(xr + u * L) - m[u];
          V::store(sd + (r + j) * CB + u * L, d);
          V::store(sx + (r + j) * CB + u * L, xc);
          a[j][u] = a[j][u] + d;
          b[j][u] = V::fma(d, xc, b[j][u]);
        }
      }
    }
    for (; r < r1; ++r) {  // the strip's last rows (fewer than RA) into accumulator 0
#pragma GCC unroll 16
      for (int u = 0; u < U; ++u) {
        const B d = V::load(dy + r * C + c + u * L);
        const B xc = V::load(x + r * C + c + u * L) - m[u];
        V::store(sd + r * CB + u * L, d);
        V::store(sx + r * CB + u * L, xc);
        a[0][u] = a[0][u] + d;
        b[0][u] = V::fma(d, xc, b[0][u]);
      }
    }
    // Pairwise over the RA accumulators (RA is 1, 2 or 4), then into the totals.
    for (int w = 1; w < RA; w *= 2)
      for (int j = 0; j + w < RA; j += 2 * w)
        for (int u = 0; u < U; ++u) {
          a[j][u] = a[j][u] + a[j + w][u];
          b[j][u] = b[j][u] + b[j + w][u];
        }
    for (int u = 0; u < U; ++u) {
      ta[u] = ta[u] + a[0][u];
      tb[u] = tb[u] + b[0][u];
    }
  }
  // Per-channel coefficients, as the two-pass kernel: dx = dy*k1 + (xc*k2 + k3).
  alignas(64) T sdy[CB], sdyxc[CB], k1[CB], k2[CB], k3[CB];
  for (int u = 0; u < U; ++u) {
    V::store(sdy + u * L, ta[u]);
    V::store(sdyxc + u * L, tb[u]);
  }
  const T inv_r = T(1) / T(R);
  for (int64_t j = 0; j < CB; ++j) {
    const T inv = T(1) / std::sqrt(variance[c + j] + epsilon);
    doffset[c + j] = sdy[j];
    dscale[c + j] = sdyxc[j] * inv;
    k1[j] = scale[c + j] * inv;
    k2[j] = -k1[j] * (inv * inv * (sdyxc[j] * inv_r));
    k3[j] = -k1[j] * (sdy[j] * inv_r);
  }
  B v1[U], v2[U], v3[U];
  for (int u = 0; u < U; ++u) {
    v1[u] = V::load(k1 + u * L);
    v2[u] = V::load(k2 + u * L);
    v3[u] = V::load(k3 + u * L);
  }
  T* dxr = dx + c;
  for (int64_t r = 0; r < R; ++r, dxr += C) {
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u)
      V::store(dxr + u * L, V::fma(V::load(sd + r * CB + u * L), v1[u],
                                   V::fma(V::load(sx + r * CB + u * L), v2[u], v3[u])));
  }
}

// Whether the blocked kernel takes this call: training, whole blocks, and a scratch of at
// most kMaxScratch bytes per thread.
template <class T>
inline bool bn_grad_blocked_fits(const BatchNormParams& p) {
  constexpr int64_t CB = bn_grad_block<T, kBnGradLines>();
  constexpr int64_t kMaxScratch = int64_t(GRADRT_BN_GRAD_SCRATCH_KB) << 10;
  return p.is_training && p.rows > 0 && p.channels % CB == 0 &&
         2 * p.rows * CB * int64_t(sizeof(T)) <= kMaxScratch;
}

template <class T, class Arch>
void fused_batch_norm_grad_blocked(const Exec& exec, const BatchNormParams& p, const T* dy, const T* x,
                                   const T* scale, const T* mean, const T* variance, T* dx, T* dscale,
                                   T* doffset) {
  constexpr int64_t CB = bn_grad_block<T, kBnGradLines>();
  const int64_t R = p.rows, C = p.channels;
  const T eps = T(p.epsilon);
  par(exec, C / CB, 1, [&](int64_t b0, int64_t b1) {
    T* s = static_cast<T*>(workspace(2, sizeof(T) * 2 * R * CB));
    for (int64_t b = b0; b < b1; ++b)
      bn_grad_block<T, Arch, kBnGradLines>(R, C, b * CB, eps, dy, x, scale, mean, variance, dx, dscale, doffset, s);
  });
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// Depthwise "gather" micro-kernels (channels in the lanes, M == 1): each output pixel sums
// its taps' source vectors times weights. The forward (sources = x rows) and the input
// gradient (sources = dy rows of one phase class) both run them; simd/kernels/depthwise_rows.h
// picks one per row.
#pragma once

#include "batch_norm.h"  // stream_store
#include "depthwise.h"

namespace gradrt::simd::GRADRT_SIMD_NS {

// Interior of dw_row for a compile-time tap count: all vector channel blocks; returns the
// first channel left for the scalar tail.
template <class T, class Arch, int NT>
inline int64_t dw_interior(int64_t j0, int64_t j1, const T* const* src, const int64_t* off, const T* const* wt,
                           int64_t step, int64_t C, T* dst, int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  const int64_t ss = step * C;
  int64_t c = 0;
  // Two vectors of channels x 4 pixels: 8 independent accumulator chains of NT FMAs each.
  for (; c + 2 * L <= C; c += 2 * L) {
    B w[NT], v[NT];
    const T* s[NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      w[t] = V::load(wt[t] + c);
      v[t] = V::load(wt[t] + c + L);
      s[t] = src[t] + (j0 * step + off[t]) * C + c;
    }
    T* out = dst + j0 * ds + c;
    int64_t j = j0;
    for (; j + 4 <= j1; j += 4, out += 4 * ds) {
      B a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
      B b0 = V::zero(), b1 = V::zero(), b2 = V::zero(), b3 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        const T* q = s[t];
        a0 = V::fma(V::load(q), w[t], a0);
        b0 = V::fma(V::load(q + L), v[t], b0);
        a1 = V::fma(V::load(q + ss), w[t], a1);
        b1 = V::fma(V::load(q + ss + L), v[t], b1);
        a2 = V::fma(V::load(q + 2 * ss), w[t], a2);
        b2 = V::fma(V::load(q + 2 * ss + L), v[t], b2);
        a3 = V::fma(V::load(q + 3 * ss), w[t], a3);
        b3 = V::fma(V::load(q + 3 * ss + L), v[t], b3);
        s[t] += 4 * ss;
      }
      V::store(out, a0);
      V::store(out + L, b0);
      V::store(out + ds, a1);
      V::store(out + ds + L, b1);
      V::store(out + 2 * ds, a2);
      V::store(out + 2 * ds + L, b2);
      V::store(out + 3 * ds, a3);
      V::store(out + 3 * ds + L, b3);
    }
    for (; j < j1; ++j, out += ds) {
      B a0 = V::zero(), b0 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        a0 = V::fma(V::load(s[t]), w[t], a0);
        b0 = V::fma(V::load(s[t] + L), v[t], b0);
        s[t] += ss;
      }
      V::store(out, a0);
      V::store(out + L, b0);
    }
  }
  for (; c + L <= C; c += L) {
    B w[NT];
    const T* s[NT];
#pragma GCC unroll 16
    for (int t = 0; t < NT; ++t) {
      w[t] = V::load(wt[t] + c);
      s[t] = src[t] + (j0 * step + off[t]) * C + c;
    }
    T* out = dst + j0 * ds + c;
    int64_t j = j0;
    for (; j + 4 <= j1; j += 4, out += 4 * ds) {
      B a0 = V::zero(), a1 = V::zero(), a2 = V::zero(), a3 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        a0 = V::fma(V::load(s[t]), w[t], a0);
        a1 = V::fma(V::load(s[t] + ss), w[t], a1);
        a2 = V::fma(V::load(s[t] + 2 * ss), w[t], a2);
        a3 = V::fma(V::load(s[t] + 3 * ss), w[t], a3);
        s[t] += 4 * ss;
      }
      V::store(out, a0);
      V::store(out + ds, a1);
      V::store(out + 2 * ds, a2);
      V::store(out + 3 * ds, a3);
    }
    for (; j < j1; ++j, out += ds) {
      B a0 = V::zero();
#pragma GCC unroll 16
      for (int t = 0; t < NT; ++t) {
        a0 = V::fma(V::load(s[t]), w[t], a0);
        s[t] += ss;
      }
      V::store(out, a0);
    }
  }
  return c;
}

// Gather over a whole row, source step 1, one vector of channels at a time (c < cv):
//   dst[j*ds + c] = sum_{r, k} row[r][(j + o[r] + k)*C + c] * w[r*K + k][c]   (taps inside),
// summed r ascending, then k ascending, from zero, for every pixel (block, remainder, edge).
// Channels from c0 (dwg_pair did those before it). P pixels per block; ReloadW: reload a
// group's weights per block instead of keeping all R*K in registers (WASM, see depthwise.h).
template <class T, class Arch, int R, int K, int P, bool ReloadW>
GRADRT_SIMD_NOINLINE void dwg_block(const GroupedRow<T>& gr, const T* const* w, int64_t c0, int64_t cv, T* dst,
                                    int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  const int64_t C = gr.C, nj = gr.nj, j_lo = gr.j_lo, j_hi = gr.j_hi;
  for (int64_t c = c0; c < cv; c += L) {
    B wv[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) wv[t] = V::load(w[t] + c);
    auto edge = [&](int64_t j) {
      B a = V::zero();
      for (int r = 0; r < R; ++r)
        for (int k = 0; k < K; ++k) {
          const int64_t q = j + gr.o[r] + k;
          if (q >= 0 && q < gr.src_w) a = V::fma(V::load(gr.row[r] + q * C + c), wv[r * K + k], a);
        }
      V::store(dst + j * ds + c, a);
    };
    for (int64_t j = 0; j < j_lo; ++j) edge(j);
    // Running pointers: group r's lowest source of the block, the block's first output.
    const T* sr[R];
    for (int r = 0; r < R; ++r) sr[r] = gr.row[r] + (j_lo + gr.o[r]) * C + c;
    T* out = dst + j_lo * ds + c;
    int64_t j = j_lo;
    for (; j + P <= j_hi; j += P) {
      B a[P];
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) a[p] = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = sr[r];
        sr[r] += P * C;
        B wr[K];
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k) wr[k] = ReloadW ? V::load(w[r * K + k] + c) : wv[r * K + k];
        // Source pixel q feeds pixel p = q - k through tap k; for a fixed p the taps come
        // in k ascending order, as in the remainder and edge loops.
#pragma GCC unroll 16
        for (int q = 0; q < P + K - 1; ++q) {
          B x = V::load(s);
          s += C;
          dw_pin_ptr(s);
          dw_pin(x);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q - k >= 0 && q - k < P) {
              a[q - k] = V::fma(x, wr[k], a[q - k]);
              dw_keep(a[q - k]);
            }
        }
      }
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        V::store(out, a[p]);
        out += ds;
        dw_pin_ptr(out);
      }
    }
    for (; j < j_hi; ++j) {
      B a = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k) a = V::fma(V::load(gr.row[r] + (j + gr.o[r] + k) * C + c), wv[r * K + k], a);
      V::store(dst + j * ds + c, a);
    }
    for (j = imax(j_hi, j_lo); j < nj; ++j) edge(j);
  }
}

// dwg_block for two adjacent channel vectors at once (native, 32 registers: 2*R*K <= 18
// weights + 2 x 4 sums), channels [0, cv2), cv2 a multiple of 2L: each pass along the row
// reads and writes two adjacent lines per pixel (the whole pixel when C = 2L) instead of
// one. Same sums in the same order as dwg_block (r ascending, then k, from zero).
template <class T, class Arch, int R, int K>
GRADRT_SIMD_NOINLINE void dwg_pair(const GroupedRow<T>& gr, const T* const* w, int64_t cv2, T* dst, int64_t ds) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int P = 4;
  const int64_t C = gr.C, nj = gr.nj, j_lo = gr.j_lo, j_hi = gr.j_hi;
  for (int64_t c = 0; c < cv2; c += 2 * L) {
    B wv[R * K], wu[R * K];
#pragma GCC unroll 9
    for (int t = 0; t < R * K; ++t) {
      wv[t] = V::load(w[t] + c);
      wu[t] = V::load(w[t] + c + L);
    }
    auto one = [&](int64_t j, bool test) {
      B a = V::zero(), b = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int k = 0; k < K; ++k) {
          const int64_t q = j + gr.o[r] + k;
          if (!test || (q >= 0 && q < gr.src_w)) {
            const T* s = gr.row[r] + q * C + c;
            a = V::fma(V::load(s), wv[r * K + k], a);
            b = V::fma(V::load(s + L), wu[r * K + k], b);
          }
        }
      V::store(dst + j * ds + c, a);
      V::store(dst + j * ds + c + L, b);
    };
    for (int64_t j = 0; j < j_lo; ++j) one(j, true);
    const T* sr[R];
    for (int r = 0; r < R; ++r) sr[r] = gr.row[r] + (j_lo + gr.o[r]) * C + c;
    T* out = dst + j_lo * ds + c;
    int64_t j = j_lo;
    for (; j + P <= j_hi; j += P) {
      B a[P], b[P];
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) a[p] = b[p] = V::zero();
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        const T* s = sr[r];
        sr[r] += P * C;
#pragma GCC unroll 8
        for (int q = 0; q < P + K - 1; ++q) {
          B x = V::load(s), y = V::load(s + L);
          s += C;
          dw_pin_ptr(s);
          dw_pin(x);
          dw_pin(y);
#pragma GCC unroll 3
          for (int k = 0; k < K; ++k)
            if (q - k >= 0 && q - k < P) {
              a[q - k] = V::fma(x, wv[r * K + k], a[q - k]);
              b[q - k] = V::fma(y, wu[r * K + k], b[q - k]);
            }
        }
      }
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
        V::store(out, a[p]);
        V::store(out + L, b[p]);
        out += ds;
        dw_pin_ptr(out);
      }
    }
    for (; j < j_hi; ++j) one(j, false);
    for (j = imax(j_hi, j_lo); j < nj; ++j) one(j, true);
  }
}

// The channels [cv, C) of a dwx2 row (dwx2_row, dwx2_wasm), one at a time, same order.
template <class T>
void dwx2_tail(const T* const* dyr, const T* const* wr, int R, int64_t ow, int64_t C, int64_t cv, T* dx) {
  for (int64_t j = 0; j < ow && cv < C; ++j)
    for (int64_t c = cv; c < C; ++c) {
      T e = T(0), o = T(0);
      if (j > 0)
        for (int r = 0; r < R; ++r) e += dyr[r][(j - 1) * C + c] * wr[r][2 * C + c];
      for (int r = 0; r < R; ++r) e += dyr[r][j * C + c] * wr[r][c];
      for (int r = 0; r < R; ++r) o += dyr[r][j * C + c] * wr[r][C + c];
      dx[2 * j * C + c] = e;
      dx[(2 * j + 1) * C + c] = o;
    }
}

// Native input gradient along a row with stride 2 and 3 taps (dilation 1, pad_left 0,
// in_w == 2*out_w: TF's SAME on an even width), both column phases at once, (WASM: dwx2_wasm):
// dy pixel j of each filter row r feeds dx pixels 2j, 2j+1, 2j+2 through kx = 0, 1, 2:
//   dx[2j]   = sum_r dy_r[j-1]*w_r[2] (j >= 1, r ascending) + sum_r dy_r[j]*w_r[0] (r ascending),
//   dx[2j+1] = sum_r dy_r[j]*w_r[1].
// Pixels outer in blocks of 8, channel vectors inner: dx is written in address order
// (whole lines, a window moving forward) instead of one line per pixel per channel
// vector, and each dy vector is loaded once (the phase-class form loads it twice).
// dyr[r]: dy row of filter row r; wr[r]: w + ky*3*C. Channels past the last whole vector
// go one at a time, same order (dwx2_tail).
// NT: non-temporal vector stores (dx and C*sizeof(T) multiples of the vector: each store one
// whole line with AVX-512; the caller's bn_can_stream and alignment checks); the same values.
template <class T, class Arch, int R, bool NT = false>
GRADRT_SIMD_NOINLINE void dwx2_row(const T* const* dyr, const T* const* wr, int64_t ow, int64_t C, T* dx) {
  using V = Vec<T, Arch>;
  using B = typename V::type;
  constexpr int64_t L = V::width;
  constexpr int64_t P = 8;
  const int64_t cv = C / L * L;
  for (int64_t j0 = 0; j0 < ow; j0 += P) {
    const int64_t n = imin(P, ow - j0);
    for (int64_t c = 0; c < cv; c += L) {
      B w0[R], w1[R], w2[R], xp[R];
#pragma GCC unroll 3
      for (int r = 0; r < R; ++r) {
        w0[r] = V::load(wr[r] + c);
        w1[r] = V::load(wr[r] + C + c);
        w2[r] = V::load(wr[r] + 2 * C + c);
        xp[r] = j0 > 0 ? V::load(dyr[r] + (j0 - 1) * C + c) : V::zero();
      }
      T* out = dx + 2 * j0 * C + c;
      for (int64_t q = 0; q < n; ++q) {
        B x[R];
#pragma GCC unroll 3
        for (int r = 0; r < R; ++r) x[r] = V::load(dyr[r] + (j0 + q) * C + c);
        B e, o = V::zero();
        if (j0 + q > 0) {
          e = V::zero();
#pragma GCC unroll 3
          for (int r = 0; r < R; ++r) e = V::fma(xp[r], w2[r], e);
#pragma GCC unroll 3
          for (int r = 0; r < R; ++r) e = V::fma(x[r], w0[r], e);
        } else {
          e = V::zero();
#pragma GCC unroll 3
          for (int r = 0; r < R; ++r) e = V::fma(x[r], w0[r], e);
        }
#pragma GCC unroll 3
        for (int r = 0; r < R; ++r) o = V::fma(x[r], w1[r], o);
        if constexpr (NT) {
          stream_store<T, Arch>(out, e);
          stream_store<T, Arch>(out + C, o);
        } else {
          V::store(out, e);
          V::store(out + C, o);
        }
        out += 2 * C;
#pragma GCC unroll 3
        for (int r = 0; r < R; ++r) xp[r] = x[r];
      }
    }
  }
  dwx2_tail(dyr, wr, R, ow, C, cv, dx);
#if defined(GRADRT_BN_STREAM)
  if constexpr (NT) _mm_sfence();  // this thread's NT stores ordered before it reports done
#endif
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

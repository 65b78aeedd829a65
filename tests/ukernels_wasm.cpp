// Testers for WebAssembly's own depthwise micro-kernels (simd/wasm/depthwise.h: the gather
// dwg_wasm, the filter gradient dwf_wasm, dw_interior_wasm; their dwx2_wasm runs in the dwx2_row
// tester), run from test_ukernels_rows.cpp's table. Only the wasm_simd128 unit fills their slots
// (kernels/table.h RowUkernels), so they run in the Emscripten build of the testers
// (web/test/ukernels_wasm.test.mjs) and are skipped elsewhere. Each against a double loop written
// here, with sentinels in every channel past the kernel's vector channels (cv), between strided
// output pixels and after the output.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cases.h"
#include "ukernel_rows.h"

namespace ukrows {
namespace {

using Vec = std::vector<float>;

Vec random(std::mt19937& rng, int64_t n) { return test::random_vec<float>(rng, n); }

// dst: pixels ds apart, channels [0, cv) of each written (add(j, c, want, mag) sums the terms of
// pixel j, channel c); every other element must still hold its sentinel.
template <class Add>
void check_pixels(const Vec& dst, int64_t ds, int64_t cv, const std::string& shape, Report& r, Add add) {
  for (int64_t i = 0; i + 1 < int64_t(dst.size()); ++i) {
    const int64_t j = i / ds, c = i % ds;
    if (c >= cv) {
      r.expect(dst[size_t(i)] == kSentinel, shape + ": wrote past the vector channels at " + std::to_string(i));
      continue;
    }
    double want = 0, mag = 0;
    add(j, c, want, mag);
    r.near(dst[size_t(i)], want, mag, shape);
  }
  r.untouched(dst, dst.size() - 1, shape);
}

// dst[j*ds + c] = sum_{r, k: 0 <= j + o + k < src_w} row[r][(j + o + k)*C + c] * w[r*K + k][c],
// j < nj, c < cv (a multiple of 4); [j_lo, j_hi): the pixels with every tap inside.
void dwg_wasm_one(const Rows& u, int R, int K, std::mt19937& rng, Report& r) {
  const auto fn = u.dwg_wasm[K - 1][R - 1];
  for (int64_t o : {0, -1, -2, 1})
    for (int64_t nj : {1, 2, 3, 8, 9, 17})
      for (int64_t src_w : {int64_t(1), int64_t(3), nj + K - 1, nj + 2})
        for (int64_t C : {4, 5, 8, 13})
          for (int64_t dstep : {1, 2}) {
            const int64_t cv = C / 4 * 4, ds = dstep * C;
            std::vector<Vec> rows(static_cast<size_t>(R)), w(static_cast<size_t>(R * K));
            std::vector<const float*> rp(static_cast<size_t>(R)), wp(static_cast<size_t>(R * K));
            for (int i = 0; i < R; ++i) rows[size_t(i)] = random(rng, src_w * C), rp[size_t(i)] = rows[size_t(i)].data();
            for (int t = 0; t < R * K; ++t) w[size_t(t)] = random(rng, C), wp[size_t(t)] = w[size_t(t)].data();
            const int64_t j_lo = std::min(nj, std::max<int64_t>(0, -o));
            const int64_t j_hi = std::max(j_lo, std::min(nj, src_w - o - K + 1));
            Vec dst = with_sentinel(size_t((nj - 1) * ds + C));
            fn(rp.data(), o, nj, j_lo, j_hi, src_w, C, wp.data(), cv, dst.data(), ds);
            const std::string shape = at("dwg_wasm R K o nj src_w C ds", {R, K, o, nj, src_w, C, ds});
            check_pixels(dst, ds, cv, shape, r, [&](int64_t j, int64_t c, double& want, double& mag) {
              for (int rr = 0; rr < R; ++rr)
                for (int k = 0; k < K; ++k) {
                  const int64_t q = j + o + k;
                  if (q < 0 || q >= src_w) continue;
                  const double term = double(rp[size_t(rr)][q * C + c]) * wp[size_t(rr * K + k)][c];
                  want += term, mag += std::fabs(term);
                }
            });
          }
}

// Filter gradient over nr output rows (row i: sources row[r] + i*xrs, dy + i*dys), source step S,
// offset o = -pad:
//   acc[r*K + k][c] += sum_i sum_{j < nj: 0 <= j*S + o + k < src_w} dy_i[j*C + c] * src_i[r][(j*S + o + k)*C + c],
// c < cv; the rows in parts of `sub` with the running sums in sum[(r*K + k)*C + c] (null: one part).
// Rows as a convolution makes them: every output pixel has a tap inside (pad < K).
void dwf_wasm_one(const Rows& u, int S, int K, std::mt19937& rng, Report& r) {
  const auto fn = u.dwf_wasm[S - 1][K - 2];
  for (int R = 1; R <= 3; ++R)
    for (int64_t pad = 0; pad < std::min(K, 3); ++pad)
      for (int64_t nj : {1, 2, 3, 8, 9, 17})
        for (int64_t src_w : {(nj - 1) * S + K - 2 * pad, (nj - 1) * S + 1, (nj - 1) * S + K - pad}) {
          if (src_w < 1) continue;
          for (int64_t C : {4, 8, 12, 20})
            for (int64_t nr : {1, 2, 3})
              for (int64_t sub : {int64_t(1), int64_t(2), nr}) {
                if (sub > nr || (sub == 2 && nr == 2)) continue;
                const int64_t cv = C >= 8 && nj % 2 ? C - 4 : C, o = -pad;
                const int64_t xrs = (nj % 3 + 1) * src_w * C, dys = nj * C + 4 * (nr % 2);
                const Vec x = random(rng, (nr - 1) * xrs + (R + 1) * src_w * C);
                const Vec dy = random(rng, (nr - 1) * dys + nj * C);
                std::vector<const float*> row(static_cast<size_t>(R));
                for (int i = 0; i < R; ++i) row[size_t(i)] = x.data() + i * src_w * C;
                const Vec init = random(rng, R * K * C);
                Vec acc = init;
                std::vector<float*> accp(static_cast<size_t>(R * K));
                for (int t = 0; t < R * K; ++t) accp[size_t(t)] = acc.data() + t * C;
                Vec sum(size_t(R * K * C), kSentinel);
                fn(row.data(), R, o, nj, src_w, C, dy.data(), accp.data(), cv, nr, xrs, dys,
                   sub < nr ? sum.data() : nullptr, sub);
                const std::string shape = at("dwf_wasm S K R o nj src_w C cv nr sub", {S, K, R, o, nj, src_w, C, cv, nr, sub});
                for (int t = 0; t < R * K; ++t)
                  for (int64_t c = 0; c < C; ++c) {
                    const size_t e = size_t(t * C + c);
                    if (c >= cv) {
                      r.same(acc[e], init[e], shape + ": changed a channel past cv");
                      continue;
                    }
                    const int rr = t / K, k = t % K;
                    double want = init[e], mag = std::fabs(want);
                    for (int64_t i = 0; i < nr; ++i)
                      for (int64_t j = 0; j < nj; ++j) {
                        const int64_t q = j * S + o + k;
                        if (q < 0 || q >= src_w) continue;
                        const double term = double(dy[size_t(i * dys + j * C + c)]) * x[size_t(i * xrs + rr * src_w * C + q * C + c)];
                        want += term, mag += std::fabs(term);
                      }
                    r.near(acc[e], want, mag, shape);
                  }
              }
        }
}

}  // namespace

void dwg_wasm(const Rows& u, std::mt19937& rng, Report& r) {
  for (int K = 1; K <= 3; ++K)
    for (int R = 1; R <= 3; ++R)
      if (u.dwg_wasm[K - 1][R - 1]) dwg_wasm_one(u, R, K, rng, r);
}

void dwf_wasm(const Rows& u, std::mt19937& rng, Report& r) {
  for (int S = 1; S <= 2; ++S)
    for (int K = 2; K <= 3; ++K)
      if (u.dwf_wasm[S - 1][K - 2]) dwf_wasm_one(u, S, K, rng, r);
}

// dst[j*ds + c] = sum_t src[t][(p0 + off[t])*C + j*ss + c] * wt[t][c], j < nj, c < cv (every tap
// inside: the interior of a dw_row with more than 4 taps).
void dw_interior_wasm(const Rows& u, std::mt19937& rng, Report& r) {
  if (!u.dw_interior_wasm) return;
  for (int64_t nt : {5, 6, 9})
    for (int64_t step : {1, 2})
      for (int64_t p0 : {0, 3})
        for (int64_t nj : {1, 3, 4, 7, 8, 9, 17})
          for (int64_t C : {4, 5, 8, 13})
            for (int64_t dstep : {1, 2}) {
              const int64_t cv = C / 4 * 4, ds = dstep * C, ss = step * C, width = p0 + 3 + (nj - 1) * step;
              std::vector<Vec> rows(static_cast<size_t>(nt)), w(static_cast<size_t>(nt));
              std::vector<const float*> src(static_cast<size_t>(nt)), wt(static_cast<size_t>(nt));
              std::vector<int64_t> off(static_cast<size_t>(nt));
              for (int64_t t = 0; t < nt; ++t) {
                rows[size_t(t)] = random(rng, width * C), src[size_t(t)] = rows[size_t(t)].data();
                w[size_t(t)] = random(rng, C), wt[size_t(t)] = w[size_t(t)].data();
                off[size_t(t)] = (t * 7 + nj) % 3;
              }
              Vec dst = with_sentinel(size_t((nj - 1) * ds + C));
              u.dw_interior_wasm(nj, nt, src.data(), off.data(), p0, C, wt.data(), ss, cv, dst.data(), ds);
              const std::string shape = at("dw_interior_wasm nt step p0 nj C ds", {nt, step, p0, nj, C, ds});
              check_pixels(dst, ds, cv, shape, r, [&](int64_t j, int64_t c, double& want, double& mag) {
                for (int64_t t = 0; t < nt; ++t) {
                  const double term = double(src[size_t(t)][(p0 + off[size_t(t)]) * C + j * ss + c]) * wt[size_t(t)][c];
                  want += term, mag += std::fabs(term);
                }
              });
            }
}

}  // namespace ukrows

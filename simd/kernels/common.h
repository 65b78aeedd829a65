// What the cpu drivers (simd/kernels/<stem>.h) add to the micro-kernels' toolbox
// (ukernels/vec.h): threads (par, par_guided), scratch memory (workspace, zeros) and the
// chunkings. A driver checks nothing and allocates nothing of its own (core has validated
// and allocated the operands); it packs, takes scratch, splits the work over threads and
// calls micro-kernels, which take every buffer as an argument.
#pragma once

#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "../ukernels/vec.h"
#include "backend.h"

namespace gradrt::simd {

// ---- implemented in cpu_backend.cpp (baseline flags)
// parallel_for(exec, n, grain, fn) with fn as a plain function pointer + context.
void parallel_chunks(const Exec& exec, int64_t n, int64_t grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end));
// parallel_for_guided(exec, n, min_grain, fn), likewise.
void parallel_guided(const Exec& exec, int64_t n, int64_t min_grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end));
// A thread-local, 64-byte aligned scratch buffer per slot, grown on demand and kept for
// reuse (the only memory kernels obtain). Contents are unspecified. Slots let one kernel
// hold several buffers at once; a pointer stays valid until the same thread asks the same
// slot for more bytes.
void* workspace(int slot, size_t bytes);
// A zero-filled, read-only buffer of at least `bytes` (thread-local, grown on demand).
const void* zeros(size_t bytes);

}  // namespace gradrt::simd

namespace gradrt::simd::GRADRT_SIMD_NS {

// Calls f(begin, end) over [0, n) in chunks of `grain` through parallel_chunks. The chunking
// is parallel_for's: it depends on n and grain only.
template <class F>
inline void par(const Exec& exec, int64_t n, int64_t grain, F&& f) {
  using Fn = std::remove_reference_t<F>;
  parallel_chunks(exec, n, grain, const_cast<void*>(static_cast<const void*>(&f)),
                  [](void* ctx, int64_t b, int64_t e) { (*static_cast<Fn*>(ctx))(b, e); });
}

// Calls f(begin, end) over [0, n) in guided chunks of at least min_grain items (parallel.h
// parallel_for_guided): only for loops whose results do not depend on the cut.
template <class F>
inline void par_guided(const Exec& exec, int64_t n, int64_t min_grain, F&& f) {
  using Fn = std::remove_reference_t<F>;
  parallel_guided(exec, n, min_grain, const_cast<void*>(static_cast<const void*>(&f)),
                  [](void* ctx, int64_t b, int64_t e) { (*static_cast<Fn*>(ctx))(b, e); });
}

// f(i) for each i in [0, n), in par_guided's chunks: rows whose results do not depend on the cut.
template <class F>
inline void par_each(const Exec& exec, int64_t n, F&& f) {
  par_guided(exec, n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

// Grain for loops whose results do not depend on the chunking (each output written by one
// chunk, no cross-chunk sums): a few chunks per thread for load balance.
inline int64_t balance_grain(const Exec& exec, int64_t n, int64_t chunks_per_thread = 4) {
  int64_t parts = imax(1, int64_t(exec.threads) * chunks_per_thread);
  return imax(1, (n + parts - 1) / parts);
}

// Chunks of `grain` in [0, n): what parallel_for cuts.
constexpr int64_t nchunks(int64_t n, int64_t grain) { return grain <= 0 ? 0 : (n + grain - 1) / grain; }

// Calls f.template operator()<MR, NRV>() with the GEMM tile of U (a unit's row, kTiles: the
// tiles it instantiates) equal to `want`, or with U's default tile (gemm[0]) when none is.
template <const Tiles& U, int I = 1, class F>
void with_gemm_tile(GemmTile want, F&& f) {
  if constexpr (I < kMaxGemmTiles && U.gemm[I].rows > 0) {
    if (want == U.gemm[I]) return f.template operator()<U.gemm[I].rows, U.gemm[I].vectors>();
    return with_gemm_tile<U, I + 1>(want, f);
  } else {
    return f.template operator()<U.gemm[0].rows, U.gemm[0].vectors>();
  }
}

// Which threads have run a call's one-time per-thread step (a private copy of packed
// weights): first() is true once per calling thread. Owned by the call (a local), so no state
// outlives it; at most `threads` threads ask, a few times each.
class FirstPerThread {
 public:
  explicit FirstPerThread(int threads) { seen_.reserve(size_t(imax(threads, 1))); }
  bool first() {
    const std::thread::id me = std::this_thread::get_id();
    std::lock_guard<std::mutex> lock(mutex_);
    for (const std::thread::id& id : seen_)
      if (id == me) return false;
    seen_.push_back(me);
    return true;
  }

 private:
  std::mutex mutex_;
  std::vector<std::thread::id> seen_;
};

// Fixed row chunking for reductions over rows: depends only on `rows` (never on threads),
// at least `min_rows` rows per chunk and at most `max_chunks` chunks, so the partial sums
// and their fixed-order combination are the same for any thread count.
constexpr int64_t reduction_grain(int64_t rows, int64_t min_rows, int64_t max_chunks) {
  int64_t g = (rows + max_chunks - 1) / max_chunks;
  return g < min_rows ? min_rows : g;
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

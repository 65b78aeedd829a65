// What the cpu drivers (simd/kernels/<stem>.h) add to the micro-kernels' toolbox
// (ukernels/vec.h): threads (par, par_guided), scratch memory (Arena, ThreadParts) and the
// chunkings. A driver checks nothing and allocates nothing of its own (core has validated
// and allocated the operands); it packs, takes scratch, splits the work over threads and
// calls micro-kernels, which take every buffer as an argument.
#pragma once

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "../ukernels/vec.h"
#include "backend.h"
#include "parallel.h"  // mirror_in_range

namespace gradrt::simd {

// ---- implemented in cpu_backend.cpp (baseline flags)
// parallel_for(exec, n, grain, fn) with fn as a plain function pointer + context.
void parallel_chunks(const Exec& exec, int64_t n, int64_t grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end));
// parallel_for_guided(exec, n, min_grain, fn), likewise.
void parallel_guided(const Exec& exec, int64_t n, int64_t min_grain, void* ctx,
                     void (*fn)(void* ctx, int64_t begin, int64_t end));
// A driver call whose Exec::workspace was missing or smaller than its <stem>_workspace size
// took memory of its own (counted for the tests: a plan's run never should).
void note_workspace_fallback();
uint64_t workspace_fallbacks();
// The plan's kept copy of a kernel's packed weights (Exec::state): `bytes` of 64-aligned
// memory. *current: it already holds the packing of weights `w` in `layout` (a tag of the
// packed format, e.g. the panel width) at this run's weights_version, so the caller packs
// nothing; otherwise the caller packs into it now (it then counts as made from w at this
// version). nullptr when the call has no plan, its run gives no weights_version (0: the
// weights may have changed in place) or the memory could not grow: pack into scratch.
void* kept_weights(const Exec& exec, const void* w, size_t bytes, uint64_t layout, bool* current);
uint64_t weight_packs();  // packs into kept weights so far (tests)

// Bytes of a buffer of n T rounded up to whole 64-byte lines: every Arena take starts on a line.
template <class T>
constexpr size_t line_bytes(int64_t n) {
  return (size_t(n < 0 ? 0 : n) * sizeof(T) + 63) / 64 * 64;
}

// A driver's scratch for one call, carved in order from Exec::workspace (the plan's, sized by
// the driver's <stem>_workspace for the same params and threads). Where the call brings too
// little (a kernel called outside a plan, e.g. by a test), a take gets memory of its own,
// freed with the Arena: nothing outlives the call. Contents are unspecified.
class Arena {
 public:
  explicit Arena(const Exec& e) : Arena(e.workspace.data, e.workspace.bytes) {}
  Arena(void* base, size_t bytes) : base_(static_cast<char*>(base)), cap_(base ? bytes : 0) {}
  Arena(Arena&&) = default;
  template <class T>
  T* take(int64_t n) {
    return static_cast<T*>(take_bytes(line_bytes<T>(n)));
  }
  // n zero T (read-only use: padding reads).
  template <class T>
  const T* take_zeros(int64_t n) {
    T* z = take<T>(n);
    std::memset(static_cast<void*>(z), 0, line_bytes<T>(n));
    return z;
  }
  void* take_bytes(size_t bytes) {
    bytes = (bytes + 63) / 64 * 64;
    if (bytes == 0) bytes = 64;
    if (cap_ - used_ >= bytes) {
      void* p = base_ + used_;
      used_ += bytes;
      return p;
    }
    note_workspace_fallback();
    void* p = std::aligned_alloc(64, bytes);
    if (!p) std::abort();  // kernels cannot fail; a plan's run never gets here
    own_.emplace_back(p);
    return p;
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  char* base_;
  size_t cap_, used_ = 0;
  std::vector<std::unique_ptr<void, Free>> own_;
};

// What a driver's call takes (its <stem>_workspace): shared buffers, plus one part per thread
// for buffers each thread fills on its own (ThreadParts). The total is
// shared + threads x per_thread.
struct ScratchSize {
  size_t shared = 0, per_thread = 0;
  // Bytes of one buffer (line_bytes<T>(n)): shared, or in each thread's part.
  ScratchSize& add(size_t bytes) {
    shared += bytes;
    return *this;
  }
  ScratchSize& add_per_thread(size_t bytes) {
    per_thread += bytes;
    return *this;
  }
  size_t total(int threads) const { return shared + size_t(threads < 1 ? 1 : threads) * per_thread; }
};

// One part of `part_bytes` per thread of a parallel loop, taken from the call's Arena before
// the loop: mine() hands each calling thread its own part (the same one on each of its
// chunks, so a thread may keep data there across chunks, e.g. its private copy of packed
// panels); *first says whether this is the thread's first chunk of the call. The first
// `threads` threads get the Arena's parts; a thread beyond (an executor that ran more) gets
// memory the ThreadParts owns. Owned by the call: no state outlives it.
class ThreadParts {
 public:
  ThreadParts(Arena& arena, size_t part_bytes, int threads)
      : part_((part_bytes + 63) / 64 * 64), threads_(threads < 1 ? 1 : threads),
        base_(static_cast<char*>(arena.take_bytes(part_ * size_t(threads_)))) {
    seen_.reserve(size_t(threads_));
  }
  // The calling thread's part, as an Arena over it (take the same buffers in the same order
  // on every chunk).
  Arena mine(bool* first = nullptr) {
    const std::thread::id me = std::this_thread::get_id();
    std::lock_guard<std::mutex> lock(mutex_);
    size_t i = 0;
    while (i < seen_.size() && seen_[i] != me) ++i;
    if (first) *first = i == seen_.size();
    if (i == seen_.size()) seen_.push_back(me);
    if (i < size_t(threads_)) return Arena(base_ + i * part_, part_);
    while (extra_.size() <= i - size_t(threads_)) extra_.emplace_back(arena_part());
    return Arena(extra_[i - size_t(threads_)].get(), part_);
  }

 private:
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  void* arena_part() {
    note_workspace_fallback();
    void* p = std::aligned_alloc(64, part_ ? part_ : 64);
    if (!p) std::abort();
    return p;
  }
  size_t part_;
  int threads_;
  char* base_;
  std::mutex mutex_;
  std::vector<std::thread::id> seen_;
  std::vector<std::unique_ptr<void, Free>> extra_;
};

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

// ---- L2 prefetch of a driver's next block (filter gradients; hints only, never the bits)
// The 64-byte lines holding elements [r.first, r.second) of base (e.g. ConvParams::x_rows_under):
// the first one's address and their count.
struct Lines {
  uintptr_t first = 0;
  int64_t count = 0;
};
template <class T>
Lines lines_of(const T* base, std::pair<int64_t, int64_t> r) {
  if (r.second <= r.first) return {};
  const uintptr_t a = reinterpret_cast<uintptr_t>(base + r.first) & ~uintptr_t(63);
  const uintptr_t e = reinterpret_cast<uintptr_t>(base + r.second);
  return {a, int64_t((e - a + 63) / 64)};
}

// Share i of n of those lines for a micro-kernel call of `steps` pixel steps, each step
// prefetching the line at `at` + k*`step`: at most one line a step (a share of fewer lines
// than steps repeats a line, an L2 hit). step 0: no lines.
struct PrefetchShare {
  uintptr_t at = 0;
  int64_t step = 0;
};
inline PrefetchShare prefetch_share(Lines l, int64_t i, int64_t n, int64_t steps) {
  const int64_t lo = i * l.count / n, hi = (i + 1) * l.count / n;
  if (hi <= lo || steps <= 0) return {};
  return {l.first + uintptr_t(64 * lo), imin(64, (64 * (hi - lo) + steps - 1) / steps)};
}

// Batch-norm channel vectors per pass over the rows in a unit's row (drivers pass
// bn_vectors<T>(kTiles) to the micro-kernels of ukernels/batch_norm.h as their U).
template <class T>
constexpr int bn_vectors(const Tiles& unit) {
  return std::is_same_v<T, float> ? unit.bn_vectors_f32 : unit.bn_vectors_f64;
}

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

// Fixed row chunking for reductions over rows: depends only on `rows` (never on threads),
// at least `min_rows` rows per chunk and at most `max_chunks` chunks, so the partial sums
// and their fixed-order combination are the same for any thread count.
constexpr int64_t reduction_grain(int64_t rows, int64_t min_rows, int64_t max_chunks) {
  int64_t g = (rows + max_chunks - 1) / max_chunks;
  return g < min_rows ? min_rows : g;
}

// Fixed-order combination of chunk partials (part_k at part + k*nw): dw[e] = ((part_0 + part_1) + part_2) ...,
// vectorised across e; up to 2^16 values in all on one thread (no second dispatch).
template <class T, class Arch>
void combine_partials(const Exec& exec, const T* part, int64_t chunks, int64_t nw, T* dw) {
  using V = Vec<T, Arch>;
  constexpr int64_t L = V::width;
  auto combine = [&](int64_t e0, int64_t e1) {
    int64_t e = e0;
    for (; e + L <= e1; e += L) {
      auto v = V::load(part + e);
      for (int64_t k = 1; k < chunks; ++k) v = v + V::load(part + k * nw + e);
      V::store(dw + e, v);
    }
    for (; e < e1; ++e) {
      T v = part[e];
      for (int64_t k = 1; k < chunks; ++k) v += part[k * nw + e];
      dw[e] = v;
    }
  };
  if (chunks == 0) {
    for (int64_t e = 0; e < nw; ++e) dw[e] = T(0);
  } else if (nw * chunks <= (int64_t(1) << 16)) {
    combine(0, nw);
  } else {
    par(exec, nw, imax(L, balance_grain(exec, nw)), combine);
  }
}

}  // namespace gradrt::simd::GRADRT_SIMD_NS

// Deterministic parallel loops. Work [0, n) is cut into chunks of `grain` items; the
// cut depends only on n and grain, never on the thread count, so a kernel that writes
// per-chunk results and combines them in chunk order gives the same bits for 1 or N
// threads. Each worker takes its own range of chunks first, then what the others left
// (parallel.cpp, ChunkRange).
#pragma once

#include <cstdint>
#include <functional>

#include "backend.h"

namespace gradrt {

// Calls fn(begin, end) for every chunk; returns when all are done. Runs inline when
// exec.threads <= 1, when there is one chunk, or when the pool is busy with another caller.
void parallel_for(const Exec& exec, int64_t n, int64_t grain,
                  const std::function<void(int64_t begin, int64_t end)>& fn);

// For loops whose results do not depend on the cut (each output written by one call, no
// cross-chunk sums): each thread has its range of items (as parallel_for's chunks) and claims
// from it guided, max(min_grain, half of what is left there), then from the others' ranges, so
// the first claims are long runs (a thread keeps to contiguous data) and the tail is cut fine
// (a range's last chunk may be shorter than min_grain): a thread that starts late or runs slow
// (a busy machine) delays the job by at most a small chunk. One call fn(0, n) on one thread.
void parallel_for_guided(const Exec& exec, int64_t n, int64_t min_grain,
                         const std::function<void(int64_t begin, int64_t end)>& fn);

inline int64_t num_chunks(int64_t n, int64_t grain) { return grain <= 0 ? 0 : (n + grain - 1) / grain; }

// parallel_for's participants: P = min(threads, chunks); participant w (the caller 0) first takes
// chunks [range_begin(w), range_begin(w + 1)) = [w*chunks/P, (w+1)*chunks/P) in order.
// mirror_in_range(q) is the chunk at q's place counted from the other end of q's range: a loop that
// maps chunk q to it runs each range last chunk first (one thread: the whole loop in reverse).
inline int64_t range_begin(int64_t w, int64_t count, int64_t parts) { return w * count / parts; }

inline int64_t mirror_in_range(int64_t q, int64_t chunks, int64_t threads) {
  const int64_t parts = threads < 1 ? 1 : threads < chunks ? threads : chunks;
  const int64_t w = ((q + 1) * parts - 1) / chunks;  // q's range: range_begin(w) <= q < range_begin(w + 1)
  return range_begin(w, chunks, parts) + range_begin(w + 1, chunks, parts) - 1 - q;
}

// Hardware threads (>= 1); GRADRT_NUM_THREADS overrides it.
int default_threads();

// Minimum work per thread. Every thread an op uses beyond the first must get at least
// min_thread_work_ns() of estimated one-thread time, else the op runs on fewer threads:
// handing a job to a pool thread costs ~3 us natively and ~0.1 ms under Emscripten pthreads,
// more than a small op gains. Only the number of workers changes, never the chunking, so
// results are the same bits either way. 0 turns the minimum off (tests that must reach the
// multi-threaded paths with small shapes). Default 10 us natively, 200 us under Emscripten;
// GRADRT_MIN_THREAD_WORK_NS overrides the default.
int64_t min_thread_work_ns();
void set_min_thread_work_ns(int64_t ns);

// Threads for an op estimated at `cost_ns` of one thread's time: `threads` capped so that
// each gets at least min_thread_work_ns(), and at least 1. A negative cost (unknown) keeps
// `threads`.
int threads_for_work(int threads, double cost_ns);

}  // namespace gradrt

// Deterministic parallel loops. Work [0, n) is cut into chunks of `grain` items; the
// cut depends only on n and grain, never on the thread count, so a kernel that writes
// per-chunk results and combines them in chunk order gives the same bits for 1 or N
// threads. Workers take chunks from a shared counter.
#pragma once

#include <cstdint>
#include <functional>

#include "backend.h"

namespace gradrt {

// Calls fn(begin, end) for every chunk; returns when all are done. Runs inline when
// exec.threads <= 1, when there is one chunk, or when the pool is busy with another caller.
void parallel_for(const Exec& exec, int64_t n, int64_t grain,
                  const std::function<void(int64_t begin, int64_t end)>& fn);

inline int64_t num_chunks(int64_t n, int64_t grain) { return grain <= 0 ? 0 : (n + grain - 1) / grain; }

// Hardware threads (>= 1); GRADRT_NUM_THREADS overrides it.
int default_threads();

}  // namespace gradrt

#include "parallel.h"

#include <algorithm>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace gradrt {
namespace {

// Waiting threads spin this long before sleeping on a condition variable, re-checking
// without yielding the CPU. Measured on a 2-vCPU KVM guest with a background compile (nice
// 19) on the other vCPU, 500 us jobs cut in 64 chunks for 2 threads:
// - spinning with std::this_thread::yield() (the first version): speedup 1.01. Each yield
//   hands the CPU to the other runnable process until the next tick, so the helper misses
//   whole jobs; the same with a 1 ms spin.
// - no yield, 50 us: 0.89-1.88. A helper that went to sleep between jobs is woken into a
//   busy CPU's queue (no idle CPU to place it on) and misses the job.
// - no yield, 1 ms: 1.95-1.99, and an idle machine is unchanged (back-to-back ops find the
//   helpers spinning). No PAUSE either: in a KVM guest a PAUSE loop triggers pause-loop
//   exits, which deschedule the vCPU (measured: 9 us per empty job instead of 3).
// Where threads outnumber the hardware threads, a spinning helper would hold a CPU that a
// thread with work needs: those spins yield (spin_until's `yield`).
constexpr auto kSpin = std::chrono::microseconds(1000);

template <class Pred>
bool spin_until(Pred pred, bool yield = false) {
  const auto end = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i)
      if (pred()) return true;
    if (std::chrono::steady_clock::now() >= end) return pred();
    if (yield) std::this_thread::yield();
  }
}

// One contiguous range per participant (participant w of P: chunks [w*chunks/P, (w+1)*chunks/P), or
// items for guided jobs; range_begin in parallel.h), each with its own counter. A participant takes
// its own range first, then what is left of the others' (from their front: each counter hands a
// chunk out once), so a helper that never joins costs nothing. Each thread computes the same chunks
// call after call where none is late, and the data it read last time is still in its own L2 (one
// shared counter let the caller, awake first, take whichever chunks came first: the next call's
// split differed, and a thread's chunks came from the other core's cache).
struct alignas(64) ChunkRange {
  std::atomic<int64_t> next{0};
  int64_t end = 0;
};

// The ranges of a job of n items: of chunks (grain > 0), else of items (guided).
void set_ranges(ChunkRange* r, int parts, int64_t n, int64_t grain) {
  const int64_t count = grain > 0 ? num_chunks(n, grain) : n;
  for (int w = 0; w < parts; ++w) {
    r[w].next.store(range_begin(w, count, parts), std::memory_order_relaxed);
    r[w].end = range_begin(w + 1, count, parts);
  }
}

// Participant w's share: its own range, then what is left of the others'. A claim takes one chunk
// (grain > 0), or (guided) max(-grain, half of what is left in the range) items: a long first run,
// the tail cut fine.
void claim(ChunkRange* r, int parts, int w, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  for (int i = 0; i < parts; ++i) {
    ChunkRange& range = r[(w + i) % parts];
    if (grain > 0) {
      for (int64_t c; (c = range.next.fetch_add(1, std::memory_order_relaxed)) < range.end;)
        fn(c * grain, std::min(n, c * grain + grain));
      continue;
    }
    int64_t cur = range.next.load(std::memory_order_relaxed);
    while (cur < range.end) {
      const int64_t take = std::max(-grain, (range.end - cur) / 2);
      if (!range.next.compare_exchange_weak(cur, cur + take, std::memory_order_relaxed)) continue;  // cur reloaded
      fn(cur, std::min(range.end, cur + take));
      cur = range.next.load(std::memory_order_relaxed);
    }
  }
}

// A job on the caller's executor (RunOptions::parallel): its workers claim the chunks the pool's would.
void run_external(const Exec& exec, int64_t chunks, int64_t n, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  const int workers = static_cast<int>(std::min<int64_t>(exec.threads, chunks));
  ChunkRange local[8];  // no allocation per job up to 8 workers
  std::vector<ChunkRange> more(workers > 8 ? static_cast<size_t>(workers) : 0);
  ChunkRange* ranges = workers > 8 ? more.data() : local;
  set_ranges(ranges, workers, n, grain);
  (*exec.parallel)(workers, [&](int w) { claim(ranges, workers, w, n, grain, fn); });
}

// A WebAssembly build without pthreads cannot start a thread (std::thread aborts there): its
// loops run inline on the caller, in the same chunks (so the same bits) as on any thread count.
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
constexpr bool kCanStartThreads = false;
#else
constexpr bool kCanStartThreads = true;
#endif

unsigned hardware_threads() {
  static const unsigned n = std::max(1u, std::thread::hardware_concurrency());
  return n;
}

// A fixed pool that grows to the largest thread count asked for. One job at a time:
// a second concurrent caller finds `busy_` taken and runs its loop inline instead.
// `state_` packs a job counter with the number of helpers the job wants, so a worker
// reads both in one load. A wanted helper then joins through `gate_` (the job counter's low
// bits, an open bit and a count of joined helpers, one CAS) and only then reads the job
// fields, written before the gate opened (release/acquire). When the caller has no chunks
// left it closes the gate and waits only for the helpers that joined: a helper that was
// descheduled (a busy machine: its core given to another process) is not waited for, so
// the job costs at most the caller's own time, and no helper reads a finished job's fields.
class Pool {
 public:
  static constexpr int64_t kMaxHelpers = 255;
  static Pool& get() {
    static Pool pool;
    return pool;
  }

  // grain > 0: chunks of grain items; grain < 0: guided, chunks of at least -grain items.
  bool try_run(int threads, int64_t chunks, int64_t n, int64_t grain,
               const std::function<void(int64_t, int64_t)>& fn) {
    if (!kCanStartThreads) return false;  // the caller runs the loop inline
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    const int helpers = static_cast<int>(std::min<int64_t>({threads, chunks, kMaxHelpers + 1})) - 1;
    grow(helpers);
    job_ = &fn;
    n_ = n;
    grain_ = grain;
    parts_ = helpers + 1;
    set_ranges(ranges_, parts_, n, grain);
    finished_.store(0);
    {
      std::lock_guard<std::mutex> lock(m_);
      const uint64_t counter = (state_.load() >> 8) + 1;
      gate_.store(gate_job(counter) | kOpen, std::memory_order_release);
      state_.store(counter << 8 | static_cast<uint64_t>(helpers), std::memory_order_release);
    }
    cv_.notify_all();
    work(0);
    // Close the gate: helpers that have not joined by now skip this job.
    const uint64_t joined = gate_.exchange(0, std::memory_order_acq_rel) & kCount;
    auto done = [&] { return finished_.load(std::memory_order_acquire) == joined; };
    if (!spin_until(done, static_cast<unsigned>(helpers) + 1 > hardware_threads())) {
      std::unique_lock<std::mutex> lock(m_);
      done_cv_.wait(lock, done);
    }
    job_ = nullptr;
    return true;
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_.store(true);
      state_.fetch_add(1 << 8);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  void grow(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      const int index = static_cast<int>(workers_.size());
      const uint64_t start = state_.load();
      workers_.emplace_back([this, index, start] { loop(index, start); });
    }
  }

  // Participant w (the caller 0, helper i: i + 1).
  void work(int w) { claim(ranges_, parts_, w, n_, grain_, *job_); }

  void loop(int index, uint64_t seen) {
    for (;;) {
      auto changed = [&] { return state_.load(std::memory_order_acquire) != seen; };
      // Helper `index` is thread index + 1 (the caller is thread 0).
      if (!spin_until(changed, static_cast<unsigned>(index) + 2 > hardware_threads())) {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, changed);
      }
      seen = state_.load(std::memory_order_acquire);
      if (stop_.load()) return;
      if (index >= static_cast<int>(seen & 0xff)) continue;  // not wanted for this job
      if (!join(seen >> 8)) continue;                        // the caller already finished it
      work(index + 1);
      finished_.fetch_add(1, std::memory_order_acq_rel);
      std::lock_guard<std::mutex> lock(m_);
      done_cv_.notify_one();
    }
  }

  // Joins job `counter` if its gate is still open (counts this helper in).
  bool join(uint64_t counter) {
    const uint64_t want = gate_job(counter) | kOpen;
    uint64_t g = gate_.load(std::memory_order_acquire);
    while ((g & ~kCount) == want)
      if (gate_.compare_exchange_weak(g, g + 1, std::memory_order_acq_rel, std::memory_order_acquire)) return true;
    return false;
  }

  // gate_: job counter (low 31 bits) << 32 | open bit (bit 31) | helpers joined (bits 0-30).
  static constexpr uint64_t kOpen = uint64_t{1} << 31, kCount = kOpen - 1;
  static uint64_t gate_job(uint64_t counter) { return (counter & 0x7fffffff) << 32; }

  std::mutex busy_, m_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t n_ = 0, grain_ = 1;
  int parts_ = 1;  // the caller and the helpers asked for
  ChunkRange ranges_[kMaxHelpers + 1];
  std::atomic<uint64_t> gate_{0};
  std::atomic<uint64_t> finished_{0};  // joined helpers done with the current job
  std::atomic<uint64_t> state_{0};  // job counter << 8 | helpers wanted
  std::atomic<bool> stop_{false};
};

}  // namespace

int default_threads() {
  if (const char* env = std::getenv("GRADRT_NUM_THREADS")) {
    const int v = std::atoi(env);
    if (v > 0) return v;
  }
  return static_cast<int>(hardware_threads());
}

namespace {

int64_t initial_min_thread_work_ns() {
  if (const char* env = std::getenv("GRADRT_MIN_THREAD_WORK_NS")) {
    const long long v = std::atoll(env);
    if (v >= 0) return v;
  }
#if defined(__EMSCRIPTEN__)
  return 200000;
#else
  return 10000;
#endif
}

std::atomic<int64_t>& min_work_ns() {
  static std::atomic<int64_t> v{initial_min_thread_work_ns()};
  return v;
}

}  // namespace

int64_t min_thread_work_ns() { return min_work_ns().load(std::memory_order_relaxed); }

void set_min_thread_work_ns(int64_t ns) { min_work_ns().store(ns < 0 ? 0 : ns, std::memory_order_relaxed); }

int threads_for_work(int threads, double cost_ns) {
  if (threads <= 1) return 1;
  const int64_t min_ns = min_thread_work_ns();
  if (cost_ns < 0 || min_ns <= 0) return threads;
  const double fit = cost_ns / static_cast<double>(min_ns);  // threads that each get min_ns
  return fit >= threads ? threads : std::max(1, static_cast<int>(fit));
}

void parallel_for(const Exec& exec, int64_t n, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain <= 0) grain = 1;
  const int64_t chunks = num_chunks(n, grain);
  if (exec.threads > 1 && chunks > 1 && exec.parallel) return run_external(exec, chunks, n, grain, fn);
  if (exec.threads > 1 && chunks > 1 && Pool::get().try_run(exec.threads, chunks, n, grain, fn)) return;
  for (int64_t begin = 0; begin < n; begin += grain) fn(begin, std::min(n, begin + grain));
}

void parallel_for_guided(const Exec& exec, int64_t n, int64_t min_grain,
                         const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (min_grain <= 0) min_grain = 1;
  const int64_t chunks = num_chunks(n, min_grain);  // at most; caps the helpers woken
  if (exec.threads > 1 && chunks > 1 && exec.parallel) return run_external(exec, chunks, n, -min_grain, fn);
  if (exec.threads > 1 && chunks > 1 && Pool::get().try_run(exec.threads, chunks, n, -min_grain, fn)) return;
  fn(0, n);
}

}  // namespace gradrt

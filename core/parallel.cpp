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

// Spin this long before sleeping on a condition variable: a sleeping worker's wake-up
// costs about a scheduler tick, longer than many of these kernels.
constexpr auto kSpin = std::chrono::microseconds(50);

template <class Pred>
bool spin_until(Pred pred) {
  const auto end = std::chrono::steady_clock::now() + kSpin;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::yield();
  }
  return pred();
}

// A fixed pool that grows to the largest thread count asked for. One job at a time:
// a second concurrent caller finds `busy_` taken and runs its loop inline instead.
// `state_` packs a job counter with the number of helpers the job wants, so a worker
// reads both in one load. Job fields are written before `state_` changes (release) and
// read only by wanted helpers after they see it (acquire); the caller returns only when
// every wanted helper has checked out, so no helper reads the fields of a later job.
class Pool {
 public:
  static constexpr int64_t kMaxHelpers = 255;
  static Pool& get() {
    static Pool pool;
    return pool;
  }

  bool try_run(int threads, int64_t chunks, int64_t n, int64_t grain,
               const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    const int helpers = static_cast<int>(std::min<int64_t>({threads, chunks, kMaxHelpers + 1})) - 1;
    grow(helpers);
    job_ = &fn;
    n_ = n;
    grain_ = grain;
    chunks_ = chunks;
    next_.store(0);
    active_.store(helpers);
    {
      std::lock_guard<std::mutex> lock(m_);
      const uint64_t counter = (state_.load() >> 8) + 1;
      state_.store(counter << 8 | static_cast<uint64_t>(helpers), std::memory_order_release);
    }
    cv_.notify_all();
    work();
    if (!spin_until([&] { return active_.load(std::memory_order_acquire) == 0; })) {
      std::unique_lock<std::mutex> lock(m_);
      done_cv_.wait(lock, [&] { return active_.load(std::memory_order_acquire) == 0; });
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

  void work() {
    for (;;) {
      const int64_t c = next_.fetch_add(1);
      if (c >= chunks_) return;
      const int64_t begin = c * grain_;
      (*job_)(begin, std::min(n_, begin + grain_));
    }
  }

  void loop(int index, uint64_t seen) {
    for (;;) {
      auto changed = [&] { return state_.load(std::memory_order_acquire) != seen; };
      if (!spin_until(changed)) {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, changed);
      }
      seen = state_.load(std::memory_order_acquire);
      if (stop_.load()) return;
      if (index >= static_cast<int>(seen & 0xff)) continue;  // not wanted for this job
      work();
      if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(m_);
        done_cv_.notify_one();
      }
    }
  }

  std::mutex busy_, m_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t n_ = 0, grain_ = 1, chunks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<int> active_{0};
  std::atomic<uint64_t> state_{0};  // job counter << 8 | helpers wanted
  std::atomic<bool> stop_{false};
};

}  // namespace

int default_threads() {
  if (const char* env = std::getenv("GRADRT_NUM_THREADS")) {
    const int v = std::atoi(env);
    if (v > 0) return v;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
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
  if (exec.threads > 1 && chunks > 1 && Pool::get().try_run(exec.threads, chunks, n, grain, fn)) return;
  for (int64_t begin = 0; begin < n; begin += grain) fn(begin, std::min(n, begin + grain));
}

}  // namespace gradrt

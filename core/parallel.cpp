#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace gradrt {
namespace {

// A fixed pool that grows to the largest thread count asked for. One job at a time:
// a second concurrent caller finds `busy` taken and runs its loop inline instead.
class Pool {
 public:
  static Pool& get() {
    static Pool pool;
    return pool;
  }

  bool try_run(int threads, int64_t chunks, int64_t n, int64_t grain,
               const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    int helpers = static_cast<int>(std::min<int64_t>(threads, chunks)) - 1;
    grow(helpers);
    {
      std::lock_guard<std::mutex> lock(m_);
      job_ = &fn;
      n_ = n;
      grain_ = grain;
      chunks_ = chunks;
      next_.store(0);
      active_ = helpers;
      wanted_ = helpers;
      ++generation_;
    }
    cv_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(m_);
    done_cv_.wait(lock, [&] { return active_ == 0; });
    job_ = nullptr;
    return true;
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

 private:
  void grow(int count) {
    while (static_cast<int>(workers_.size()) < count) {
      int index = static_cast<int>(workers_.size());
      workers_.emplace_back([this, index] { loop(index); });
    }
  }

  void work() {
    for (;;) {
      int64_t c = next_.fetch_add(1);
      if (c >= chunks_) return;
      int64_t begin = c * grain_;
      (*job_)(begin, std::min(n_, begin + grain_));
    }
  }

  void loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return stop_ || (generation_ != seen && index < wanted_); });
        if (stop_) return;
        seen = generation_;
      }
      work();
      std::lock_guard<std::mutex> lock(m_);
      if (--active_ == 0) done_cv_.notify_one();
    }
  }

  std::mutex busy_, m_;
  std::condition_variable cv_, done_cv_;
  std::vector<std::thread> workers_;
  const std::function<void(int64_t, int64_t)>* job_ = nullptr;
  int64_t n_ = 0, grain_ = 1, chunks_ = 0;
  std::atomic<int64_t> next_{0};
  int active_ = 0, wanted_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace

int default_threads() {
  if (const char* env = std::getenv("GRADRT_NUM_THREADS")) {
    int v = std::atoi(env);
    if (v > 0) return v;
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

void parallel_for(const Exec& exec, int64_t n, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (grain <= 0) grain = 1;
  int64_t chunks = num_chunks(n, grain);
  if (exec.threads > 1 && chunks > 1 && Pool::get().try_run(exec.threads, chunks, n, grain, fn)) return;
  for (int64_t begin = 0; begin < n; begin += grain) fn(begin, std::min(n, begin + grain));
}

}  // namespace gradrt

// Which thread runs which chunk of a parallel_for (issue 21 item 3: the depthwise and batch-norm
// rows at 2 threads). Per job shape (chunks x microseconds of busy work per chunk, the shapes of
// the drivers at batch 1), back to back as a benchmark's repeated calls: the caller's share of
// the chunks (median and quartiles over calls), the calls in which the caller ran every chunk
// (no helper joined), and the calls whose chunk -> thread map differs from the previous call's
// (a chunk's data then sits in the other core's L2).
//   parallel_share [--threads=2] [--calls=2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "parallel.h"

namespace {

using Clock = std::chrono::steady_clock;

void busy_for(double us) {
  const auto end = Clock::now() + std::chrono::duration<double, std::micro>(us);
  while (Clock::now() < end) {
  }
}

struct Shape {
  const char* name;
  int64_t chunks;
  double us;  // busy time per chunk
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[size_t(q * double(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 2, calls = 2000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--threads=", 0) == 0) threads = std::atoi(a.c_str() + 10);
    else if (a.rfind("--calls=", 0) == 0) calls = std::atoi(a.c_str() + 8);
    else {
      std::printf("usage: parallel_share [--threads=2] [--calls=2000]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  gradrt::Exec exec;
  exec.threads = threads;
  const Shape shapes[] = {
      {"2 chunks x 12 us (depthwise filter s2 b1)", 2, 12},
      {"25 chunks x 5 us (batch-norm sums b1)", 25, 5},
      {"49 chunks x 3 us (batch-norm dx b1)", 49, 3},
      {"16 chunks x 40 us", 16, 40},
  };
  std::printf("threads=%d, %d calls per shape, back to back\n", threads, calls);
  std::printf("%-44s | caller share p25 / p50 / p75 | caller alone | map changed\n", "job");
  for (const Shape& s : shapes) {
    std::vector<std::thread::id> owner(size_t(s.chunks)), prev;
    std::vector<double> share;
    int alone = 0, changed = 0;
    const auto me = std::this_thread::get_id();
    for (int c = 0; c < calls; ++c) {
      gradrt::parallel_for(exec, s.chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          owner[size_t(i)] = std::this_thread::get_id();
          busy_for(s.us);
        }
      });
      const auto mine = std::count(owner.begin(), owner.end(), me);
      share.push_back(double(mine) / double(s.chunks));
      alone += mine == s.chunks;
      if (!prev.empty() && prev != owner) ++changed;
      prev = owner;
    }
    std::printf("%-44s | %8.2f / %5.2f / %5.2f        | %5.1f%%       | %5.1f%%\n", s.name, quantile(share, 0.25),
                quantile(share, 0.5), quantile(share, 0.75), 100.0 * alone / calls, 100.0 * changed / (calls - 1));
  }
  return 0;
}

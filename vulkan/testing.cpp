// Test hooks for the host (tests/test_vulkan_host.cpp declares them weak, so the tests link
// without Vulkan): device loss and timeouts, reuse and concurrency of submissions.
#include "testing.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "context.h"
#include "ops/common.h"

namespace gradrt::vk::testing {
namespace {

std::atomic<const Submissions*> g_fault_target{nullptr};
std::atomic<VkResult> g_fault{VK_SUCCESS};

// A context of its own: validation on when installed, no cache on disk.
Status make_context(std::unique_ptr<Context>* ctx) {
  Options o;
  o.validation = 1;
  o.cache_dir = "-";
  return Context::create(o, ctx);
}

// One job: result[i] = sum over 3 splits of partial[s * n + i], small integers (exact in float),
// checked against the host's sum. `seed` varies the data from job to job.
Status reduce_and_check(Context& ctx, int seed) {
  const int64_t n = 29 + seed % 7, splits = 3;
  std::vector<float> partial(n * splits), result(n, -1.0f);
  for (int64_t i = 0; i < n * splits; ++i) partial[i] = float((i * 5 + seed) % 11);
  Job job(ctx);
  int bp, br;
  Status s = job.input(partial.data(), partial.size() * sizeof(float), &bp);
  if (s.ok()) s = job.output(result.data(), result.size() * sizeof(float), &br);
  if (s.ok()) s = sum_partials<float>(ctx, job, bp, br, n, splits, 1.0f);
  if (s.ok()) s = job.run();
  if (!s.ok()) return s;
  for (int64_t i = 0; i < n; ++i) {
    const float want = partial[i] + partial[n + i] + partial[2 * n + i];
    if (result[i] != want)
      return Status(Code::Internal, "job " + std::to_string(seed) + ": element " + std::to_string(i) + " is " +
                                        std::to_string(result[i]) + ", want " + std::to_string(want));
  }
  return Status::OK();
}

}  // namespace

VkResult wait_fault(const Submissions* target) {
  if (g_fault_target.load(std::memory_order_relaxed) != target) return VK_SUCCESS;  // the usual case
  const Submissions* expected = target;
  return g_fault_target.compare_exchange_strong(expected, nullptr) ? g_fault.load() : VK_SUCCESS;
}

// The next run's wait really waits, then reports `fault` ("timeout" or "device_lost"): *during
// is that run's status, *after the status of a run after it. The context is then destroyed.
Status fault_probe(const std::string& fault, Status* during, Status* after) {
  std::unique_ptr<Context> ctx;
  Status s = make_context(&ctx);
  if (!s.ok()) return s;
  if (!(s = reduce_and_check(*ctx, 0)).ok()) return s;
  g_fault = fault == "timeout" ? VK_TIMEOUT : VK_ERROR_DEVICE_LOST;
  g_fault_target = &ctx->submissions();
  *during = reduce_and_check(*ctx, 1);
  *after = reduce_and_check(*ctx, 2);
  return Status::OK();
}

// `threads` threads each run `runs` jobs on one context at once, without its mutex; the first
// failure is returned. *made: the submissions (command pool, fence, descriptor pool) created.
Status concurrency_probe(int threads, int runs, int* made) {
  std::unique_ptr<Context> ctx;
  Status s = make_context(&ctx);
  if (!s.ok()) return s;
  std::vector<Status> status(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int r = 0; r < runs && status[t].ok(); ++r) status[t] = reduce_and_check(*ctx, t * runs + r);
    });
  for (auto& t : pool) t.join();
  *made = ctx->submissions().made();
  for (const Status& st : status)
    if (!st.ok()) return st;
  return Status::OK();
}

}  // namespace gradrt::vk::testing

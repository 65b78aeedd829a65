// Device tensors and sequences on Vulkan (vulkan/resident.h, vulkan/sequence.h): a small
// backward chain (conv input gradient -> batch-norm gradient -> conv filter, depthwise filter
// and input gradients) as one Sequence on resident tensors gives the op-by-op run's bits, in 1
// submission with 0 bytes copied, also when resubmitted and when threads run sequences at once;
// a host tensor inside a sequence is refused. Skipped without a Vulkan device.
#include <doctest/doctest.h>

#include <cstdint>

#include "gradrt/gradrt.h"

namespace gradrt::vk::testing {
__attribute__((weak)) Status sequence_probe(int threads, int64_t counts[4]);
__attribute__((weak)) Status run_op_sequence_probe(int64_t counts[3]);
}  // namespace gradrt::vk::testing

namespace {

using gradrt::Code;
using gradrt::Status;

void probe(int threads) {
  if (!gradrt::vk::testing::sequence_probe) {
    MESSAGE("skipped: gradrt was built without the Vulkan backend");
    return;
  }
  int64_t counts[4] = {-1, -1, -1, -1};
  const Status s = gradrt::vk::testing::sequence_probe(threads, counts);
  if (s.code() == Code::Unavailable) {
    MESSAGE("skipped: " << s.to_string());
    return;
  }
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  if (threads > 1) return;
  CHECK(counts[0] == 1);  // one submission per run of the whole chain
  CHECK(counts[1] == 0);  // no bytes to the device
  CHECK(counts[2] == 0);  // nor back
  CHECK(counts[3] >= 5);  // the five kernels' dispatches (+ the split-sum passes)
}

TEST_CASE("vulkan: a backward chain as one Sequence on device tensors: 1 submission, 0 copies, op-by-op bits") {
  probe(1);
}

TEST_CASE("vulkan: sequences on several threads at once") { probe(3); }

TEST_CASE("vulkan: run_op on device tensors inside a Sequence: 1 submission, 0 copies, the host run's bits") {
  if (!gradrt::vk::testing::run_op_sequence_probe) {
    MESSAGE("skipped: gradrt was built without the Vulkan backend");
    return;
  }
  int64_t counts[3] = {-1, -1, -1};
  const Status s = gradrt::vk::testing::run_op_sequence_probe(counts);
  if (s.code() == Code::Unavailable) {
    MESSAGE("skipped: " << s.to_string());
    return;
  }
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  CHECK(counts[0] == 1);
  CHECK(counts[1] == 0);
  CHECK(counts[2] == 0);
}

}  // namespace

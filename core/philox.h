// TensorFlow's Philox4x32-10 generator and FractionalAvgPool's pooling-sequence generation
// (ops.md §5.4), bit-compatible with TF's GuardedPhiloxRandom / SingleSampleAdapter /
// SimplePhilox as described there.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace gradrt {

class Philox {
 public:
  using Block = std::array<uint32_t, 4>;
  Philox(uint64_t seed, uint64_t seed2);  // key = seed, counter words 2-3 = seed2
  Philox(Block counter, std::array<uint32_t, 2> key) : counter_(counter), key_(key) {}
  Block next_block();                     // one 10-round block, then counter += 1
  void skip_blocks(uint64_t n);           // counter += n (128-bit)

 private:
  Block counter_;
  std::array<uint32_t, 2> key_;
};

// A stream of 32-bit samples taken from a copy of the shared generator, which itself
// skips ceil(n/4) blocks (TF's ReserveSamples32 + SingleSampleAdapter).
class SampleStream {
 public:
  SampleStream(Philox* shared, uint64_t n);
  uint32_t next();

 private:
  Philox local_;
  Philox::Block block_{};
  int used_ = 4;
};

// Cumulative pooling sequence of out+1 entries from 0 to in (requires 1 <= out <= in).
std::vector<int64_t> pooling_sequence(int64_t in, int64_t out, Philox* generator, bool pseudo_random);

}  // namespace gradrt

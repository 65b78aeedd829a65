#include "philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace gradrt {

Philox::Philox(uint64_t seed, uint64_t seed2)
    : counter_{0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)},
      key_{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)} {}

Philox::Block Philox::next_block() {
  Block c = counter_;
  std::array<uint32_t, 2> k = key_;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += 0x9E3779B9u;
      k[1] += 0xBB67AE85u;
    }
    const uint64_t p0 = uint64_t{0xD2511F53u} * c[0];
    const uint64_t p1 = uint64_t{0xCD9E8D57u} * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  skip_blocks(1);
  return c;
}

void Philox::skip_blocks(uint64_t n) {
  // 128-bit add of n into counter words 0..3 (word 0 least significant).
  uint64_t lo = (uint64_t{counter_[1]} << 32 | counter_[0]);
  uint64_t sum = lo + n;
  counter_[0] = static_cast<uint32_t>(sum);
  counter_[1] = static_cast<uint32_t>(sum >> 32);
  if (sum < lo) {
    uint64_t hi = (uint64_t{counter_[3]} << 32 | counter_[2]) + 1;
    counter_[2] = static_cast<uint32_t>(hi);
    counter_[3] = static_cast<uint32_t>(hi >> 32);
  }
}

SampleStream::SampleStream(Philox* shared, uint64_t n) : local_(*shared) { shared->skip_blocks((n + 3) / 4); }

uint32_t SampleStream::next() {
  if (used_ == 4) {
    block_ = local_.next_block();
    used_ = 0;
  }
  return block_[used_++];
}

std::vector<int64_t> pooling_sequence(int64_t in, int64_t out, Philox* generator, bool pseudo_random) {
  const int64_t k = in / out;
  std::vector<int64_t> diff(static_cast<size_t>(out), k);
  if (pseudo_random) {
    const double alpha = static_cast<double>(in) / static_cast<double>(out);
    const double u_max1 = (k + 2) / alpha - 1;
    const double u_max2 = (in + 1 - k) / alpha - (out - 1);
    const double max_u = std::min(u_max1, u_max2);
    SampleStream samples(generator, 2);
    const uint32_t x0 = samples.next(), x1 = samples.next();
    // SimplePhilox::RandDouble: 52 random mantissa bits under exponent 0 gives [1, 2).
    const uint64_t bits = (uint64_t{0x3FF} << 52) | (uint64_t{x0 & 0xFFFFFu} << 32) | x1;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    const double u = (d - 1.0) * max_u;
    std::vector<int64_t> cum(static_cast<size_t>(out + 1));
    cum[0] = 1;
    cum[out] = in + 1;
    for (int64_t i = 1; i < out; ++i) cum[i] = static_cast<int>(std::ceil(alpha * (i + u)));
    for (int64_t i = 0; i < out; ++i) diff[i] = cum[i + 1] - cum[i];
  } else {
    for (int64_t i = 0; i < in % out; ++i) diff[i] += 1;
    SampleStream samples(generator, static_cast<uint64_t>(out));
    for (int64_t i = 0; i + 1 < out; ++i) {
      const int64_t j = i + static_cast<int64_t>(samples.next() % static_cast<uint64_t>(out - i));
      std::swap(diff[i], diff[j]);
    }
  }
  std::vector<int64_t> seq(static_cast<size_t>(out + 1), 0);
  for (int64_t i = 0; i < out; ++i) seq[i + 1] = seq[i] + diff[i];
  return seq;
}

}  // namespace gradrt

// Tensor storage: alignment, and the reuse of freed blocks (core/tensor.cpp's BlockCache).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "gradrt/gradrt.h"

using gradrt::DType;
using gradrt::Tensor;

TEST_CASE("tensor: storage is 128-byte aligned and writable at every size") {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{17}, int64_t{1} << 18, (int64_t{1} << 18) + 3}) {
    Tensor t;
    REQUIRE(Tensor::allocate(DType::float32, {n}, &t).ok());
    CHECK(reinterpret_cast<uintptr_t>(t.data()) % 128 == 0);
    std::memset(t.data(), 0x5a, t.num_bytes());
  }
}

TEST_CASE("tensor: a freed large block serves the next tensor of the same size") {
  const int64_t n = int64_t{1} << 20;  // 4 MiB of float32
  void* first = nullptr;
  {
    Tensor t;
    REQUIRE(Tensor::allocate(DType::float32, {n}, &t).ok());
    first = t.data();
    t.data_as<float>()[n - 1] = 1.0f;
  }
  Tensor again, other;
  REQUIRE(Tensor::allocate(DType::float32, {n}, &again).ok());
  CHECK(again.data() == first);
  // A different size never gets that block, and both are fully usable.
  REQUIRE(Tensor::allocate(DType::float32, {n + 16}, &other).ok());
  CHECK(other.data() != again.data());
  std::memset(again.data(), 0, again.num_bytes());
  std::memset(other.data(), 0, other.num_bytes());
}

TEST_CASE("tensor: many large frees stay bounded and every block remains valid") {
  // More blocks (and bytes) than the cache keeps: the oldest are released, none is handed
  // out twice (all live tensors have distinct storage).
  std::vector<Tensor> live(12);
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < live.size(); ++i) {
      Tensor t;
      REQUIRE(Tensor::allocate(DType::float32, {(int64_t{1} << 20) * int64_t(1 + i % 4)}, &t).ok());
      std::memset(t.data(), int(i), t.num_bytes());
      live[i] = std::move(t);  // frees the previous round's tensor into the cache
    }
    for (size_t i = 0; i < live.size(); ++i)
      for (size_t j = i + 1; j < live.size(); ++j) CHECK(live[i].data() != live[j].data());
  }
}

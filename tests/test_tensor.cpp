// Tensor storage: alignment, and the reuse of freed blocks (core/tensor.cpp's BlockCache).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
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

// RunOptions::output_memory: outputs written into the caller's memory (what gradrt_tf does with
// TensorFlow's output tensors), with the same values as gradrt's own allocation.
TEST_CASE("tensor: outputs go into memory the caller gives, same values as gradrt's own") {
  std::vector<float> x(2 * 5 * 5 * 3), w(3 * 3 * 3 * 4);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  gradrt::Inputs in;
  in["input"] = {DType::float32, {2, 5, 5, 3}, x.data()};
  in["filter"] = {DType::float32, {3, 3, 3, 4}, w.data()};
  gradrt::Attrs attrs = {{"strides", gradrt::AttrValue(std::vector<int64_t>{1, 2, 2, 1})},
                         {"padding", gradrt::AttrValue(std::string("SAME"))}};
  gradrt::Outputs own;
  REQUIRE(gradrt::run_op("Conv2D", in, attrs, &own).ok());

  for (size_t misalign : {size_t{0}, size_t{4}}) {
    CAPTURE(misalign);
    alignas(64) static float buffer[2 * 3 * 3 * 4 + 16];
    void* mine = reinterpret_cast<char*>(buffer) + misalign;
    int calls = 0;
    gradrt::RunOptions options;
    options.output_memory = [&](std::string_view name, DType dtype, const std::vector<int64_t>& shape) -> void* {
      ++calls;
      CHECK(name == "output");
      CHECK(dtype == DType::float32);
      CHECK(shape == std::vector<int64_t>{2, 3, 3, 4});
      return mine;
    };
    gradrt::Outputs got;
    REQUIRE(gradrt::run_op("Conv2D", in, attrs, &got, options).ok());
    CHECK(calls == 1);
    REQUIRE(got.size() == 1);
    // Under 64-byte alignment gradrt allocates itself; otherwise it wrote into the buffer.
    CHECK((got[0].second.data() == mine) == (misalign == 0));
    REQUIRE(got[0].second.num_bytes() == own[0].second.num_bytes());
    CHECK(std::memcmp(got[0].second.data(), own[0].second.data(), own[0].second.num_bytes()) == 0);
  }
  // A refused input never reaches the callback.
  in["filter"] = {DType::float32, {3, 3, 2, 4}, w.data()};  // depth 2 vs input depth 3
  gradrt::RunOptions options;
  options.output_memory = [](std::string_view, DType, const std::vector<int64_t>&) -> void* {
    FAIL("called for a refused input");
    return nullptr;
  };
  gradrt::Outputs none;
  CHECK(gradrt::run_op("Conv2D", in, attrs, &none, options).code() == gradrt::Code::InvalidArgument);
  CHECK(none.empty());
}

// core/convert.h against the scalar rules (float_to_half & co. applied one element at a
// time, indices written out plainly), on the vector tiles and on the portable loops, on odd
// shapes, with NaN payloads, infinities, denormals and rounding ties.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "convert.h"

using namespace gradrt;

namespace {

std::string hex(uint64_t u) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(u));
  return s;
}
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Floats that exercise the roundings: every half value, the midpoints between neighbouring
// halves and one float ulp either side, bfloat16 ties, NaNs with payloads, infinities,
// float denormals, the overflow edge of half, and random bit patterns.
std::vector<float> hard_floats() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 65536; h += 3) {
    const float a = half_to_float(static_cast<uint16_t>(h)), b = half_to_float(static_cast<uint16_t>(h + 1));
    v.push_back(a);
    if (std::isfinite(a) && std::isfinite(b) && (h & 0x7fff) != 0x7bff) {
      const float mid = a + (b - a) / 2;  // exact: the midpoint needs one more bit than half has
      v.insert(v.end(), {mid, std::nextafter(mid, a), std::nextafter(mid, b)});
    }
  }
  for (uint32_t hi : {0x3f80u, 0x3f81u, 0xbf80u, 0x7f7fu, 0x0001u, 0x8080u})
    for (uint32_t lo : {0x7fffu, 0x8000u, 0x8001u, 0x0000u, 0xffffu}) v.push_back(from_bits(hi << 16 | lo));
  for (uint32_t u : {0x7f800000u, 0xff800000u, 0x7f800001u, 0x7fc00000u, 0xffc00001u, 0x7fbfffffu, 0x7fff8000u,
                     0x00000001u, 0x807fffffu, 0x00400000u, 0x477fefffu, 0x477ff000u, 0x477ff001u, 0x38800000u,
                     0x387fffffu, 0x33000000u, 0x33000001u, 0xb3000000u})
    v.push_back(from_bits(u));
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) v.push_back(from_bits(static_cast<uint32_t>(rng())));
  return v;
}

// The stored bits of element i of a tensor of dtype d.
uint64_t stored(const unsigned char* buf, DType d, int64_t i) {
  uint64_t u = 0;
  std::memcpy(&u, buf + i * dtype_size(d), dtype_size(d));
  return u;
}

// The scalar rule for one element: bits u of dtype `from` as dtype `to` (one of the two is
// float32, the compute side), through bfloat16 when round (float32 storage under T=bfloat16).
uint64_t scalar_rule(uint64_t u, DType from, DType to, bool round) {
  float v = from == DType::float16    ? half_to_float(static_cast<uint16_t>(u))
            : from == DType::bfloat16 ? bfloat16_to_float(static_cast<uint16_t>(u))
                                      : from_bits(static_cast<uint32_t>(u));
  if (round) v = bfloat16_to_float(float_to_bfloat16(v));
  if (to == DType::float16) return float_to_half(v);
  if (to == DType::bfloat16) return float_to_bfloat16(v);
  return bits(v);
}

std::vector<unsigned char> bytes(const std::vector<float>& v) {
  std::vector<unsigned char> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// convert_in (raw elements of dtype d, channels first when cf, to float channels last) or
// convert_out (float channels last to dtype d, channels first when cf) of the raw elements
// `src`, against the scalar rule per element.
enum class Dir { in, out };
void check(Dir dir, const std::vector<unsigned char>& src, DType d, bool round, const ChannelsFirst* cf, int threads) {
  const DType from = dir == Dir::in ? d : DType::float32, to = dir == Dir::in ? DType::float32 : d;
  const int64_t n = static_cast<int64_t>(src.size() / dtype_size(from));
  std::vector<unsigned char> got(n * dtype_size(to) + 1);
  const Exec exec{threads};
  if (dir == Dir::in) convert_in<float>(exec, src.data(), d, n, cf, round, reinterpret_cast<float*>(got.data()));
  else convert_out<float>(exec, reinterpret_cast<const float*>(src.data()), got.data(), d, n, cf, round);
  // Element (o, c, s) of [outer, channels, inner] sits at `first` channels first, at `last`
  // channels last; flat data is one channel.
  const ChannelsFirst shape = cf ? *cf : ChannelsFirst{1, 1, n};
  int64_t bad = 0;
  for (int64_t o = 0; o < shape.outer; ++o)
    for (int64_t c = 0; c < shape.channels; ++c)
      for (int64_t s = 0; s < shape.inner && bad < 5; ++s) {
        const int64_t first = (o * shape.channels + c) * shape.inner + s;
        const int64_t last = (o * shape.inner + s) * shape.channels + c;
        const int64_t at = dir == Dir::in ? last : first, of = dir == Dir::in ? first : last;
        const uint64_t u = stored(src.data(), from, of), want = scalar_rule(u, from, to, round);
        if (stored(got.data(), to, at) != want) {
          ++bad;
          FAIL_CHECK("element " << at << " from " << hex(u) << ": got " << hex(stored(got.data(), to, at)) << ", want "
                                << hex(want));
        }
      }
  CHECK(bad == 0);
}

// Both paths where the machine has the vector tiles; restores the default after.
template <class F>
void on_each_path(F f) {
  for (bool vec : {true, false}) {
    CAPTURE(vec);
    set_convert_vector_tiles(vec);
    f();
  }
  set_convert_vector_tiles(true);
}

const DType kFloats[] = {DType::float16, DType::bfloat16, DType::float32};

}  // namespace

TEST_CASE("convert: every float16 bit pattern and the hard floats, flat, both paths") {
  std::vector<unsigned char> halves(2 * 65536 + 2 * 5);  // + a tail that does not fill a vector
  for (uint32_t h = 0; h < 65536 + 5; ++h) {
    const uint16_t v = static_cast<uint16_t>(h * 40503u);
    std::memcpy(halves.data() + 2 * h, &v, 2);
  }
  const std::vector<unsigned char> hard = bytes(hard_floats());
  on_each_path([&] {
    check(Dir::in, halves, DType::float16, false, nullptr, 1);
    check(Dir::in, halves, DType::bfloat16, false, nullptr, 1);
    check(Dir::in, hard, DType::float32, true, nullptr, 1);
    for (DType d : kFloats) check(Dir::out, hard, d, d == DType::float32, nullptr, 1);
  });
}

TEST_CASE("convert: NCHW <-> NHWC on odd shapes, every float dtype, both paths, 1 and 3 threads") {
  const std::vector<float> hard = hard_floats();
  const ChannelsFirst shapes[] = {{1, 1, 1}, {2, 3, 5}, {1, 8, 8}, {3, 9, 17}, {1, 7, 65}, {2, 16, 63}, {1, 64, 300},
                                  {2, 4, 20000}};  // the last: several parallel_for chunks
  on_each_path([&] {
    for (const ChannelsFirst& cf : shapes) {
      CAPTURE(cf.outer);
      CAPTURE(cf.channels);
      CAPTURE(cf.inner);
      const int64_t n = cf.outer * cf.channels * cf.inner;
      std::vector<float> src(hard.begin() + 1000, hard.begin() + 1000 + n);
      for (int threads : {1, 3})
        for (DType d : kFloats)
          for (bool round : {false, true}) {
            if (round && d != DType::float32) continue;
            check(Dir::out, bytes(src), d, round, &cf, threads);
            std::vector<unsigned char> raw(n * dtype_size(d));
            convert_out<float>(Exec{1}, src.data(), raw.data(), d, n, nullptr, false);  // some stored values
            check(Dir::in, raw, d, round, &cf, threads);
          }
    }
  });
}

TEST_CASE("convert: double compute and integer storage keep their plain casts") {
  const ChannelsFirst cf{2, 3, 5};
  std::vector<double> src(30);
  for (int i = 0; i < 30; ++i) src[i] = i * 1.25 - 7;
  std::vector<double> back(30), nhwc(30);
  convert_out<double>(Exec{1}, src.data(), back.data(), DType::float64, 30, &cf, false);
  convert_in<double>(Exec{1}, back.data(), DType::float64, 30, &cf, false, nhwc.data());
  CHECK(nhwc == src);  // a transpose and its inverse
  CHECK(back[1] == src[3]);  // (o 0, c 0, s 1) came from channels-last (s 1, c 0) = 1 * 3 + 0
  std::vector<int32_t> ints(30);
  convert_out<double>(Exec{1}, src.data(), ints.data(), DType::int32, 30, nullptr, false);
  CHECK(ints[1] == static_cast<int32_t>(src[1]));
  std::vector<float> f(30);
  convert_in<float>(Exec{1}, ints.data(), DType::int32, 30, nullptr, false, f.data());
  CHECK(f[29] == static_cast<float>(ints[29]));
}

// The op through OpContext: an NCHW float16 Conv2DBackpropFilter equals the NHWC float32 op
// on the same values (inputs widened and transposed here by index, one element at a time)
// with its output rounded by float_to_half, byte for byte, on 1 and 3 threads.
TEST_CASE("convert: NCHW float16 conv gradient = NHWC float32 on scalar-converted tensors") {
  const int64_t N = 2, C = 5, H = 7, W = 9, K = 11;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  std::vector<uint16_t> x16(N * C * H * W), dy16(N * K * H * W);  // NCHW
  for (auto& v : x16) v = float_to_half(u(rng));
  for (auto& v : dy16) v = float_to_half(u(rng));
  auto to_nhwc = [&](const std::vector<uint16_t>& src, int64_t ch) {
    std::vector<float> out(src.size());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < ch; ++c)
        for (int64_t s = 0; s < H * W; ++s) out[(n * H * W + s) * ch + c] = half_to_float(src[(n * ch + c) * H * W + s]);
    return out;
  };
  const std::vector<float> x32 = to_nhwc(x16, C), dy32 = to_nhwc(dy16, K);
  const std::vector<int32_t> fsizes = {3, 3, static_cast<int32_t>(C), static_cast<int32_t>(K)};
  auto run = [&](const char* format, DType d, const void* x, const void* dy, int threads) {
    const bool nchw = std::string(format) == "NCHW";
    Inputs in;
    in["input"] = {d, nchw ? std::vector<int64_t>{N, C, H, W} : std::vector<int64_t>{N, H, W, C}, x};
    in["filter_sizes"] = {DType::int32, {4}, fsizes.data()};
    in["out_backprop"] = {d, nchw ? std::vector<int64_t>{N, K, H, W} : std::vector<int64_t>{N, H, W, K}, dy};
    Attrs attrs{{"strides", AttrValue(std::vector<int64_t>{1, 1, 1, 1})}, {"padding", AttrValue("SAME")},
                {"data_format", AttrValue(format)}};
    RunOptions options;
    options.backend = "cpu";
    options.threads = threads;
    Outputs out;
    REQUIRE(run_op("Conv2DBackpropFilter", in, attrs, &out, options).ok());
    return std::move(out[0].second);
  };
  const Tensor want32 = run("NHWC", DType::float32, x32.data(), dy32.data(), 1);
  for (int threads : {1, 3}) {
    CAPTURE(threads);
    const Tensor got = run("NCHW", DType::float16, x16.data(), dy16.data(), threads);
    REQUIRE(got.num_elements() == want32.num_elements());
    int64_t bad = 0;
    for (int64_t i = 0; i < got.num_elements(); ++i)
      bad += got.data_as<uint16_t>()[i] != float_to_half(want32.data_as<float>()[i]);
    CHECK(bad == 0);
  }
}

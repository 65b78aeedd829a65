// .npy reading and writing (core/npy.h). Expected bytes are written out by hand from the
// format's description (numpy.lib.format), not produced by the code under test.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "npy.h"

namespace {

using gradrt::Code;
using gradrt::DType;
using gradrt::Tensor;
using gradrt::TensorView;

const std::string kMagic = std::string("\x93") + "NUMPY";

// A .npy image with the given header dict (a '\n' is appended, no alignment padding:
// readers must not depend on it) and raw data bytes.
std::string npy_image(const std::string& dict, const std::string& data, int major = 1) {
  const std::string header = dict + "\n";
  std::string out = kMagic;
  out += static_cast<char>(major);
  out += '\0';
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string dict_for(const std::string& descr, const std::string& shape, const std::string& fortran = "False") {
  return "{'descr': '" + descr + "', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

gradrt::Status read(const std::string& image, Tensor* t) { return gradrt::npy::read_bytes(image.data(), image.size(), t); }

// Reads `image` and expects InvalidArgument with `needle` in the message.
void expect_refused(const std::string& image, const std::string& needle) {
  Tensor t;
  gradrt::Status s = read(image, &t);
  CAPTURE(s.to_string());
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(s.message().find(needle) != std::string::npos);
}

template <class T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data_as<T>();
  return std::vector<T>(p, p + t.num_elements());
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gradrt_test_npy_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("npy: encode writes NumPy's format 1.0 layout, data 64-byte aligned") {
  const std::vector<float> v = {0, 1, 2, 3, 4, 5};
  const std::string got = gradrt::npy::encode(TensorView{DType::float32, {2, 3}, v.data()});
  // 10-byte prefix + 59-byte dict + 58 spaces + '\n' = 128; header length 118 = 'v'.
  const std::string expected = kMagic + std::string("\x01\x00\x76\x00", 4) +
                               "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" +
                               std::string(58, ' ') + "\n" + raw(v);
  CHECK(got == expected);
}

TEST_CASE("npy: shapes are written as Python tuples") {
  const int64_t x = 7;
  const std::string one = gradrt::npy::encode(TensorView{DType::int64, {1}, &x});
  CHECK(one.find("'shape': (1,), }") != std::string::npos);
  const std::string scalar = gradrt::npy::encode(TensorView{DType::int64, {}, &x});
  CHECK(scalar.find("{'descr': '<i8', 'fortran_order': False, 'shape': (), }") == 10);
  CHECK(scalar.size() == 128 + 8);  // 10 + 55 + 1 = 66 bytes of header, padded to 128
}

TEST_CASE("npy: round trip of every dtype, 0-d and zero-size shapes") {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {5}, {2, 3}, {0}, {2, 0, 3}, {1, 2, 1, 3}};
  struct Case { DType dtype; const char* descr; };
  const Case cases[] = {{DType::float16, "<f2"}, {DType::float32, "<f4"}, {DType::float64, "<f8"},
                        {DType::int32, "<i4"},   {DType::int64, "<i8"}};
  for (const Case& c : cases) {
    for (const auto& shape : shapes) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      const size_t bytes = static_cast<size_t>(n) * gradrt::dtype_size(c.dtype);
      std::vector<unsigned char> data(bytes);
      for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(i * 37 + 11);
      CAPTURE(c.descr);
      CAPTURE(shape.size());
      const std::string image = gradrt::npy::encode(TensorView{c.dtype, shape, data.data()});
      CHECK(image.find(std::string("'descr': '") + c.descr + "'") != std::string::npos);
      CHECK((image.size() - bytes) % 64 == 0);
      Tensor t;
      REQUIRE(read(image, &t).ok());
      CHECK(t.dtype() == c.dtype);
      CHECK(t.shape() == shape);
      CHECK(t.num_elements() == n);
      if (bytes > 0) CHECK(std::memcmp(t.data(), data.data(), bytes) == 0);
    }
  }
}

TEST_CASE("npy: a scalar shape () is a 0-d tensor with one element") {
  Tensor t;
  REQUIRE(read(npy_image(dict_for("<f8", "()"), raw(std::vector<double>{2.5})), &t).ok());
  CHECK(t.shape().empty());
  CHECK(t.num_elements() == 1);
  CHECK(t.data_as<double>()[0] == 2.5);
}

TEST_CASE("npy: bfloat16 is written as float32 values") {
  const std::vector<uint16_t> bits = {0x3FC0, 0xC000, 0x0000, 0x4049};  // 1.5, -2, 0, 3.140625
  const std::string image = gradrt::npy::encode(TensorView{DType::bfloat16, {4}, bits.data()});
  CHECK(image.find("'descr': '<f4'") != std::string::npos);
  Tensor t;
  REQUIRE(read(image, &t).ok());
  CHECK(t.dtype() == DType::float32);
  CHECK(values_of<float>(t) == std::vector<float>{1.5f, -2.0f, 0.0f, 3.140625f});
}

TEST_CASE("npy: versions 2.0 and 3.0, other key orders and spellings are read") {
  const std::string data = raw(std::vector<int32_t>{1, -2, 3});
  Tensor t;
  REQUIRE(read(npy_image(dict_for("<i4", "(3,)"), data, 2), &t).ok());
  CHECK(values_of<int32_t>(t) == std::vector<int32_t>{1, -2, 3});
  REQUIRE(read(npy_image(dict_for("<i4", "(3,)"), data, 3), &t).ok());
  CHECK(t.shape() == std::vector<int64_t>{3});
  // Keys in another order, double quotes, no trailing comma, Python 2 longs, '=' and '|'.
  REQUIRE(read(npy_image("{\"shape\": (1, 3L), 'fortran_order': False, 'descr': '=i4'}", data), &t).ok());
  CHECK(t.shape() == std::vector<int64_t>{1, 3});
  REQUIRE(read(npy_image("{'descr':'|i4','fortran_order':False,'shape':(3)}", data), &t).ok());
  CHECK(t.shape() == std::vector<int64_t>{3});
}

TEST_CASE("npy: bad magic, version and truncated headers are refused") {
  const std::string good = npy_image(dict_for("<f4", "(1,)"), raw(std::vector<float>{1}));
  expect_refused("", "empty");
  expect_refused("PK\x03\x04 not npy at all", "bad magic");
  expect_refused(std::string("\x93NUMPZ\x01\x00\x00\x00", 10), "bad magic");
  expect_refused(kMagic.substr(0, 4), "truncated header");
  expect_refused(kMagic + "\x01", "truncated header");
  expect_refused(kMagic + std::string("\x01\x00\x10", 3), "truncated header");
  expect_refused(kMagic + std::string("\x02\x00\x10\x00\x00", 5), "truncated header");
  std::string v4 = good, v11 = good;
  v4[6] = 4;
  v11[7] = 1;
  expect_refused(v4, "unsupported format version 4.0");
  expect_refused(v11, "unsupported format version 1.1");
  // The header length says 0x7f00 bytes; the file is shorter.
  std::string long_header = good;
  long_header[8] = 0x00;
  long_header[9] = 0x7f;
  expect_refused(long_header, "truncated header");
  // Every strict prefix of a good file is refused.
  for (size_t n = 0; n < good.size(); ++n) {
    Tensor t;
    CAPTURE(n);
    CHECK(gradrt::npy::read_bytes(good.data(), n, &t).code() == Code::InvalidArgument);
  }
}

TEST_CASE("npy: malformed header dicts are refused") {
  const std::string d = raw(std::vector<float>{1, 2});
  expect_refused(npy_image("'descr': '<f4', 'fortran_order': False, 'shape': (2,)", d), "malformed header dict");
  expect_refused(npy_image("{'descr': '<f4', 'fortran_order': False}", d), "missing key 'shape'");
  expect_refused(npy_image("{'descr': '<f4', 'shape': (2,)}", d), "missing key 'fortran_order'");
  expect_refused(npy_image("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", d),
                 "duplicate key");
  expect_refused(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", d),
                 "unexpected key");
  expect_refused(npy_image("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", d), "malformed header dict");
  expect_refused(npy_image("{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", d), "True or False");
  expect_refused(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", d), "tuple");
  expect_refused(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,,)}", d), "malformed header dict");
  expect_refused(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", d), "after '}'");
  expect_refused(npy_image("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", d), "malformed header dict");
  expect_refused(npy_image("{'descr': <f4, 'fortran_order': False, 'shape': (2,)}", d), "quoted string");
}

TEST_CASE("npy: big-endian, Fortran order and unknown dtypes are refused") {
  const std::string d = raw(std::vector<float>{1, 2});
  expect_refused(npy_image(dict_for(">f4", "(2,)"), d), "big-endian");
  expect_refused(npy_image(dict_for("<f4", "(2,)", "True"), d), "fortran_order");
  expect_refused(npy_image(dict_for("<u4", "(2,)"), d), "unsupported dtype '<u4'");
  expect_refused(npy_image(dict_for("<c8", "(1,)"), d), "unsupported dtype");
  expect_refused(npy_image(dict_for("|b1", "(8,)"), d), "unsupported dtype");
  expect_refused(npy_image(dict_for("<f4x", "(2,)"), d), "unsupported dtype");
  expect_refused(npy_image("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", d), "structured");
}

TEST_CASE("npy: negative and overflowing shapes are refused before allocating") {
  const std::string d = raw(std::vector<float>{1, 2});
  expect_refused(npy_image(dict_for("<f4", "(-1, 2)"), d), "negative");
  expect_refused(npy_image(dict_for("<f4", "(99999999999999999999,)"), d), "overflows");
  expect_refused(npy_image(dict_for("<f4", "(4294967296, 4294967296)"), d), "overflows");
  expect_refused(npy_image(dict_for("<f8", "(2305843009213693952,)"), d), "too large");  // 2^61 * 8 bytes
  // Plausible arithmetic, absurd size: refused by the data size, nothing allocated.
  expect_refused(npy_image(dict_for("<f4", "(1000000000000,)"), d), "data truncated");
  expect_refused(npy_image(dict_for("<f4", "(0, 4611686018427387904, 4)"), ""), "overflows");
}

TEST_CASE("npy: data shorter or longer than the shape implies is refused") {
  const std::string d = raw(std::vector<float>{1, 2, 3});
  expect_refused(npy_image(dict_for("<f4", "(4,)"), d), "data truncated");
  expect_refused(npy_image(dict_for("<f4", "(2,)"), d), "trailing bytes");
  expect_refused(npy_image(dict_for("<f4", "()"), ""), "data truncated");
  expect_refused(npy_image(dict_for("<f4", "(0,)"), d), "trailing bytes");
}

TEST_CASE("npy: tensors beyond max_tensor_elements are ResourceExhausted") {
  const int64_t saved = gradrt::max_tensor_elements();
  gradrt::set_max_tensor_elements(4);
  Tensor t;
  gradrt::Status s = read(npy_image(dict_for("<f4", "(5,)"), raw(std::vector<float>(5, 1.0f))), &t);
  gradrt::set_max_tensor_elements(saved);
  CHECK(s.code() == Code::ResourceExhausted);
}

TEST_CASE("npy: corrupting any header byte never crashes") {
  const std::string good = npy_image(dict_for("<f4", "(2, 2)"), raw(std::vector<float>{1, 2, 3, 4}));
  const unsigned char replacements[] = {0x00, 0x7f, 0xff, '(', ')', ',', '\'', '-', '9'};
  for (size_t i = 0; i < good.size() - 16; ++i) {
    for (unsigned char r : replacements) {
      std::string bad = good;
      bad[i] = static_cast<char>(r);
      Tensor t;
      gradrt::Status s = read(bad, &t);
      if (s.ok()) CHECK(t.num_elements() * static_cast<int64_t>(gradrt::dtype_size(t.dtype())) <= 16);
    }
  }
}

TEST_CASE("npy: write_file and read_file round trip, no temporary left behind") {
  const auto dir = fresh_dir("files");
  const std::vector<double> v = {1.25, -3.5, 1e300};
  const std::string path = (dir / "x.npy").string();
  REQUIRE(gradrt::npy::write_file(path, TensorView{DType::float64, {3, 1}, v.data()}).ok());
  Tensor t;
  REQUIRE(gradrt::npy::read_file(path, &t).ok());
  CHECK(t.shape() == std::vector<int64_t>{3, 1});
  CHECK(values_of<double>(t) == v);
  // Overwriting an existing file works too.
  REQUIRE(gradrt::npy::write_file(path, TensorView{DType::float64, {1}, v.data()}).ok());
  REQUIRE(gradrt::npy::read_file(path, &t).ok());
  CHECK(t.shape() == std::vector<int64_t>{1});
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("npy: read_file refusals") {
  const auto dir = fresh_dir("refusals");
  Tensor t;
  CHECK(gradrt::npy::read_file((dir / "missing.npy").string(), &t).code() == Code::NotFound);
  CHECK(gradrt::npy::read_file(dir.string(), &t).code() == Code::NotFound);  // a directory
  const std::string image = npy_image(dict_for("<i8", "(3,)"), raw(std::vector<int64_t>{1, 2, 3}));
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::FILE* f = std::fopen((dir / name).string().c_str(), "wb");
    REQUIRE(f != nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return (dir / name).string();
  };
  gradrt::Status s = gradrt::npy::read_file(write("short.npy", image.substr(0, image.size() - 1)), &t);
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(s.message().find("data truncated") != std::string::npos);
  s = gradrt::npy::read_file(write("header.npy", image.substr(0, 20)), &t);
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(s.message().find("truncated header") != std::string::npos);
  CHECK(gradrt::npy::read_file(write("empty.npy", ""), &t).code() == Code::InvalidArgument);
  REQUIRE(gradrt::npy::read_file(write("good.npy", image), &t).ok());
  CHECK(values_of<int64_t>(t) == std::vector<int64_t>{1, 2, 3});
  std::filesystem::remove_all(dir);
}

TEST_CASE("npy: write_file into a missing directory fails cleanly") {
  const float x = 1;
  gradrt::Status s = gradrt::npy::write_file("/nonexistent-gradrt-dir/x.npy", TensorView{DType::float32, {1}, &x});
  CHECK_FALSE(s.ok());
  CHECK(s.message().find("/nonexistent-gradrt-dir") != std::string::npos);
  CHECK(gradrt::npy::write_file("/tmp/gradrt_never.npy", TensorView{DType::float32, {2}, nullptr}).code() ==
        Code::InvalidArgument);
  CHECK(gradrt::npy::encode(TensorView{DType::float32, {-1}, &x}).empty());
}

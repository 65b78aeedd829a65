// Test helpers: host tensors, running ops by name on a chosen backend, comparisons.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"

namespace test {

using gradrt::DType;

// An owned input tensor built from doubles (converted to its dtype).
struct Host {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  gradrt::TensorView view() const { return {dtype, shape, bytes.empty() ? nullptr : bytes.data()}; }
  int64_t size() const;
  std::vector<double> values() const;
};

Host make(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values);
Host iota(DType dtype, std::vector<int64_t> shape, double start = 1);  // 1, 2, 3, ... (TF tests' fill)
Host random(DType dtype, std::vector<int64_t> shape, std::mt19937& rng, double lo = -1, double hi = 1);
Host ints(std::vector<int64_t> values, DType dtype = DType::int32);  // a 1-D shape/sequence vector
Host transpose_nhwc_to_nchw(const Host& t);                          // 4-D only
std::vector<double> nchw_to_nhwc(const std::vector<double>& v, const std::vector<int64_t>& nchw_shape);

std::vector<double> values(const gradrt::Tensor& t);

struct Result {
  gradrt::Status status;
  gradrt::Outputs outputs;
  std::string backend;
  const gradrt::Tensor& out(size_t i = 0) const { return outputs.at(i).second; }
  std::vector<double> vals(size_t i = 0) const { return values(out(i)); }
};

using Named = std::vector<std::pair<std::string, Host>>;
// Pairs hosts, given in op's input order, with the input names of gradrt::ops().
Named named(const std::string& op, std::vector<Host> hosts);
Result run(const std::string& op, const Named& inputs, const gradrt::Attrs& attrs,
           const std::string& backend = "reference", int threads = 0);

// The backends a backend-agreement test runs on: reference, cpu, and vulkan when available.
std::vector<std::string> backends();

// A Vulkan device without shaderFloat64 refuses float64 kernels (Unimplemented): such a
// case is skipped on that backend, with a message, not failed.
bool device_lacks_dtype(const gradrt::Status& s);

// Every |got - want| <= atol + rtol * |want|; reports the first mismatches.
void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol,
                 const std::string& what = "");

// Tolerance for a dtype with a reduction of length k.
double tolerance(DType dtype, int64_t k);

}  // namespace test

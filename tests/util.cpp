#include "util.h"

#include <algorithm>
#include <sstream>

#include "registry.h"

namespace test {

using namespace gradrt;

int64_t Host::size() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

static double get(const void* data, DType dtype, int64_t i) {
  switch (dtype) {
    case DType::float16: return half_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::bfloat16: return bfloat16_to_float(static_cast<const uint16_t*>(data)[i]);
    case DType::float32: return static_cast<const float*>(data)[i];
    case DType::float64: return static_cast<const double*>(data)[i];
    case DType::int32: return static_cast<const int32_t*>(data)[i];
    case DType::int64: return static_cast<double>(static_cast<const int64_t*>(data)[i]);
  }
  return 0;
}

static void put(void* data, DType dtype, int64_t i, double v) {
  switch (dtype) {
    case DType::float16: static_cast<uint16_t*>(data)[i] = float_to_half(static_cast<float>(v)); break;
    case DType::bfloat16: static_cast<uint16_t*>(data)[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DType::float32: static_cast<float*>(data)[i] = static_cast<float>(v); break;
    case DType::float64: static_cast<double*>(data)[i] = v; break;
    case DType::int32: static_cast<int32_t*>(data)[i] = static_cast<int32_t>(v); break;
    case DType::int64: static_cast<int64_t*>(data)[i] = static_cast<int64_t>(v); break;
  }
}

std::vector<double> Host::values() const {
  std::vector<double> v(static_cast<size_t>(size()));
  for (int64_t i = 0; i < size(); ++i) v[i] = get(bytes.data(), dtype, i);
  return v;
}

Host make(DType dtype, std::vector<int64_t> shape, const std::vector<double>& values) {
  Host h{dtype, std::move(shape), {}};
  REQUIRE(static_cast<int64_t>(values.size()) == h.size());
  h.bytes.resize(values.size() * dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) put(h.bytes.data(), dtype, static_cast<int64_t>(i), values[i]);
  return h;
}

Host iota(DType dtype, std::vector<int64_t> shape, double start) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return make(dtype, std::move(shape), v);
}

Host random(DType dtype, std::vector<int64_t> shape, std::mt19937& rng, double lo, double hi) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return make(dtype, std::move(shape), v);
}

Host ints(std::vector<int64_t> values, DType dtype) {
  std::vector<double> v(values.begin(), values.end());
  return make(dtype, {static_cast<int64_t>(values.size())}, v);
}

Host transpose_nhwc_to_nchw(const Host& t) {
  REQUIRE(t.shape.size() == 4);
  const int64_t N = t.shape[0], H = t.shape[1], W = t.shape[2], C = t.shape[3];
  std::vector<double> in = t.values(), out(in.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t w = 0; w < W; ++w)
        for (int64_t c = 0; c < C; ++c) out[((n * C + c) * H + h) * W + w] = in[((n * H + h) * W + w) * C + c];
  return make(t.dtype, {N, C, H, W}, out);
}

std::vector<double> nchw_to_nhwc(const std::vector<double>& v, const std::vector<int64_t>& s) {
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3];
  std::vector<double> out(v.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) out[((n * H + h) * W + w) * C + c] = v[((n * C + c) * H + h) * W + w];
  return out;
}

std::vector<double> values(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = get(t.data(), t.dtype(), i);
  return v;
}

Named named(const std::string& op, std::vector<Host> hosts) {
  const gradrt::OpInfo* info = gradrt::find_op(op);
  REQUIRE_MESSAGE(info != nullptr, "unknown op ", op);
  REQUIRE_MESSAGE(info->inputs.size() == hosts.size(), op, " takes ", info->inputs.size(), " inputs");
  Named out;
  for (size_t i = 0; i < hosts.size(); ++i) out.emplace_back(info->inputs[i], std::move(hosts[i]));
  return out;
}

Result run(const std::string& op, const Named& inputs, const Attrs& attrs, const std::string& backend, int threads) {
  Inputs in;
  for (const auto& [name, host] : inputs) in[name] = host.view();
  Result r;
  RunOptions options;
  options.backend = backend;
  options.threads = threads;
  RunInfo info;
  r.status = run_op(op, in, attrs, &r.outputs, options, &info);
  r.backend = info.backend;
  return r;
}

std::vector<std::string> backends() {
  std::vector<std::string> list = {"reference", "cpu"};
  for (const BackendInfo& b : gradrt::backends())
    if (b.name == "vulkan" && b.available) list.push_back("vulkan");
  return list;
}

bool device_lacks_dtype(const Status& s) {
  if (s.code() != Code::Unimplemented || s.message().find("shaderFloat64") == std::string::npos) return false;
  MESSAGE("skipped: " << s.to_string());
  return true;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double rtol, double atol,
                 const std::string& what) {
  REQUIRE_MESSAGE(got.size() == want.size(), what << ": size " << got.size() << " vs " << want.size());
  int bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < got.size(); ++i) {
    bool both_nan = std::isnan(got[i]) && std::isnan(want[i]);
    if (both_nan || std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i])) continue;
    if (bad++ < 5) msg << " [" << i << "] got " << got[i] << " want " << want[i] << ";";
  }
  CHECK_MESSAGE(bad == 0, what << ": " << bad << " of " << got.size() << " differ:" << msg.str());
}

double tolerance(DType dtype, int64_t k) {
  double kk = std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  switch (dtype) {
    case DType::float64: return 1e-12 * kk;
    case DType::float32: return 2e-6 * kk;
    case DType::float16: return 2e-3 * kk;
    case DType::bfloat16: return 1.6e-2 * kk;
    default: return 0;
  }
}

}  // namespace test

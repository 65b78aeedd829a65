// libFuzzer target: gradrt::run_op by name with a fuzzed op, shapes (small), attributes and
// data, on the reference and cpu backends.
//
// Two modes, chosen by the first byte:
//  * structured: shapes consistent for the op (conv family, batch norm, fractional pooling)
//    with fuzzed geometry, formats, dtypes and attributes; the two backends must agree
//    within a tolerance on accepted inputs.
//  * raw: every input's dtype, rank, dims (including negative and huge ones), data and
//    every attribute's kind and value come from the fuzzer; only the invariants below.
// Invariants for both: no crash, hang, leak or UB; both backends give the same status code;
// a refusal has a non-empty message naming the op and leaves `outputs` empty; an accepted
// run gives the op's outputs in order with the same dtypes and shapes on both backends.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "registry.h"

namespace {

using gradrt::AttrValue;
using gradrt::Attrs;
using gradrt::DType;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_run_op invariant broken: %s\n", what.c_str());
  std::abort();
}

// An input tensor the harness owns.
struct Buf {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  bool has_data = true;
  gradrt::TensorView view() const { return {dtype, shape, has_data && !bytes.empty() ? bytes.data() : nullptr}; }
};

constexpr int64_t kMaxDataElements = 1 << 14;

// Product of dims when every dim is in [0, 2^20] and the product is small; -1 otherwise.
int64_t small_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > (1 << 20)) return -1;
    n *= d;
    if (n > kMaxDataElements) return -1;
  }
  return n;
}

// double -> integer without the harness itself doing a UB conversion (NaN, Inf, 1e30).
int64_t clamp_int(double v, double limit) {
  if (!(v == v)) return 0;
  return static_cast<int64_t>(std::max(-limit, std::min(limit, v)));
}

void put(Buf* b, int64_t i, double v) {
  unsigned char* p = b->bytes.data();
  switch (b->dtype) {
    case DType::float16: { uint16_t h = gradrt::float_to_half(float(v)); std::memcpy(p + 2 * i, &h, 2); break; }
    case DType::bfloat16: { uint16_t h = gradrt::float_to_bfloat16(float(v)); std::memcpy(p + 2 * i, &h, 2); break; }
    case DType::float32: { float f = float(v); std::memcpy(p + 4 * i, &f, 4); break; }
    case DType::float64: std::memcpy(p + 8 * i, &v, 8); break;
    case DType::int32: { int32_t x = int32_t(clamp_int(v, 2147483647.0)); std::memcpy(p + 4 * i, &x, 4); break; }
    case DType::int64: { int64_t x = clamp_int(v, 9.2e18); std::memcpy(p + 8 * i, &x, 8); break; }
  }
}

double get(const void* data, DType dtype, int64_t i) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  switch (dtype) {
    case DType::float16: { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return gradrt::half_to_float(h); }
    case DType::bfloat16: { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return gradrt::bfloat16_to_float(h); }
    case DType::float32: { float f; std::memcpy(&f, p + 4 * i, 4); return f; }
    case DType::float64: { double d; std::memcpy(&d, p + 8 * i, 8); return d; }
    case DType::int32: { int32_t x; std::memcpy(&x, p + 4 * i, 4); return x; }
    case DType::int64: { int64_t x; std::memcpy(&x, p + 8 * i, 8); return double(x); }
  }
  return 0;
}

// A tensor of `shape` with values in [-1, 1] drawn from the fuzzer (a cheap LCG after the
// fuzzer's bytes run out, so shapes stay interesting with short inputs).
Buf tensor(FuzzedDataProvider& fdp, DType dtype, std::vector<int64_t> shape, double lo = -1, double hi = 1) {
  Buf b{dtype, std::move(shape), {}, true};
  int64_t n = small_count(b.shape);
  if (n < 0) {
    b.has_data = false;
    return b;
  }
  b.bytes.resize(static_cast<size_t>(n) * gradrt::dtype_size(dtype));
  uint32_t state = fdp.ConsumeIntegral<uint32_t>();
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    double u = double(state >> 8) / double(1 << 24);
    put(&b, i, lo + (hi - lo) * u);
  }
  return b;
}

Buf ivec(std::vector<int64_t> v, DType dtype = DType::int32) {
  Buf b{dtype, {static_cast<int64_t>(v.size())}, {}, true};
  b.bytes.resize(v.size() * gradrt::dtype_size(dtype));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == DType::int64) std::memcpy(b.bytes.data() + 8 * i, &v[i], 8);
    else { int32_t x = int32_t(v[i]); std::memcpy(b.bytes.data() + 4 * i, &x, 4); }
  }
  return b;
}

struct Program {
  std::string op;
  std::vector<std::pair<std::string, Buf>> inputs;
  Attrs attrs;
  bool compare_values = false;  // structured and deterministic: the backends must agree
  double tolerance = 1e-3;
};

// ---------------------------------------------------------------- structured mode

int64_t out_size(int64_t in, int64_t f, int64_t d, int64_t s, int pad, int64_t pb, int64_t pa) {
  int64_t e = (f - 1) * d + 1;
  if (pad == 0) return (in + s - 1) / s;          // SAME
  if (pad == 1) return (in - e + s) / s;          // VALID (may be <= 0: then refused)
  return (in + pb + pa - e + s) / s;              // EXPLICIT
}

std::vector<int64_t> fmt(bool nchw, int64_t n, int64_t h, int64_t w, int64_t c) {
  return nchw ? std::vector<int64_t>{n, c, h, w} : std::vector<int64_t>{n, h, w, c};
}

DType float_dtype(FuzzedDataProvider& fdp, bool halves) {
  static const DType all[] = {DType::float32, DType::float64, DType::float16, DType::bfloat16};
  return all[fdp.ConsumeIntegralInRange<int>(0, halves ? 3 : 1)];
}

double tol_for(DType t) {
  switch (t) {
    case DType::float16: return 2e-2;
    case DType::bfloat16: return 1e-1;
    case DType::float64: return 1e-9;
    default: return 2e-3;
  }
}

void structured_conv(FuzzedDataProvider& fdp, Program* p) {
  static const char* ops[] = {"Conv2DBackpropInput", "Conv2DBackpropInputV2", "Conv2DBackpropFilter",
                              "Conv2DBackpropFilterV2", "DepthwiseConv2dNativeBackpropInput",
                              "DepthwiseConv2dNativeBackpropFilter", "Conv2D", "DepthwiseConv2dNative"};
  int k = fdp.ConsumeIntegralInRange<int>(0, 7);
  p->op = ops[k];
  bool depthwise = k == 4 || k == 5 || k == 7;
  bool nchw = fdp.ConsumeBool();
  int64_t n = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  int64_t h = fdp.ConsumeIntegralInRange<int64_t>(0, 9), w = fdp.ConsumeIntegralInRange<int64_t>(0, 9);
  int64_t fh = fdp.ConsumeIntegralInRange<int64_t>(1, 4), fw = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
  int64_t sh = fdp.ConsumeIntegralInRange<int64_t>(1, 3), sw = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  int64_t dh = fdp.ConsumeIntegralInRange<int64_t>(1, 3), dw = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  int pad = fdp.ConsumeIntegralInRange<int>(0, 2);
  int64_t pt = fdp.ConsumeIntegralInRange<int64_t>(0, 3), pb = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  int64_t pl = fdp.ConsumeIntegralInRange<int64_t>(0, 3), pr = fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  int64_t groups = depthwise ? 1 : fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  int64_t cin_g = fdp.ConsumeIntegralInRange<int64_t>(1, 4);
  int64_t cout = depthwise ? fdp.ConsumeIntegralInRange<int64_t>(0, 3) : groups * fdp.ConsumeIntegralInRange<int64_t>(0, 3);
  int64_t c = depthwise ? cin_g : groups * cin_g;
  DType dt = float_dtype(fdp, true);
  p->tolerance = tol_for(dt);
  int64_t oh = out_size(h, fh, dh, sh, pad, pt, pb), ow = out_size(w, fw, dw, sw, pad, pl, pr);
  if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) oh += fdp.ConsumeIntegralInRange<int>(-1, 1);  // a mismatch now and then
  oh = std::max<int64_t>(oh, 0);
  ow = std::max<int64_t>(ow, 0);
  std::vector<int64_t> x_shape = fmt(nchw, n, h, w, c);
  std::vector<int64_t> f_shape = depthwise ? std::vector<int64_t>{fh, fw, c, cout} : std::vector<int64_t>{fh, fw, cin_g, cout};
  int64_t yc = depthwise ? c * cout : cout;
  std::vector<int64_t> y_shape = fmt(nchw, n, oh, ow, yc);

  p->attrs["strides"] = AttrValue(fmt(nchw, 1, sh, sw, 1));
  p->attrs["dilations"] = AttrValue(fmt(nchw, 1, dh, dw, 1));
  p->attrs["data_format"] = AttrValue(nchw ? "NCHW" : "NHWC");
  if (pad == 2) {
    p->attrs["padding"] = AttrValue("EXPLICIT");
    std::vector<int64_t> e = nchw ? std::vector<int64_t>{0, 0, 0, 0, pt, pb, pl, pr}
                                  : std::vector<int64_t>{0, 0, pt, pb, pl, pr, 0, 0};
    p->attrs["explicit_paddings"] = AttrValue(e);
  } else {
    p->attrs["padding"] = AttrValue(pad == 0 ? "SAME" : "VALID");
  }
  if (!depthwise && fdp.ConsumeBool()) p->attrs["use_cudnn_on_gpu"] = AttrValue(fdp.ConsumeBool());
  DType storage = dt;
  if (dt == DType::bfloat16 && fdp.ConsumeBool()) {  // T=bfloat16 over float32 storage
    storage = DType::float32;
    p->attrs["T"] = AttrValue("bfloat16");
  }
  DType sizes_dtype = fdp.ConsumeBool() ? DType::int32 : DType::int64;
  // The op's inputs in its order (ops.inc); a *_sizes input is the shape as a vector.
  const gradrt::OpInfo& info = *gradrt::find_op(p->op);
  for (const std::string& name : info.inputs) {
    if (name == "input_sizes" && k == 0 && !nchw && groups == 1 && fdp.ConsumeBool())
      p->inputs.push_back({name, ivec({h, w}, sizes_dtype)});  // Conv2DBackpropInput's 2-element form
    else if (name == "input_sizes") p->inputs.push_back({name, ivec(x_shape, sizes_dtype)});
    else if (name == "filter_sizes") p->inputs.push_back({name, ivec(f_shape, sizes_dtype)});
    else if (name == "input") p->inputs.push_back({name, tensor(fdp, storage, x_shape)});
    else if (name == "filter") p->inputs.push_back({name, tensor(fdp, storage, f_shape)});
    else p->inputs.push_back({name, tensor(fdp, storage, y_shape)});  // out_backprop
  }
  p->compare_values = true;
}

void structured_batch_norm(FuzzedDataProvider& fdp, Program* p) {
  static const char* ops[] = {"FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3",
                              "FusedBatchNorm",     "FusedBatchNormV2",     "FusedBatchNormV3"};
  int k = fdp.ConsumeIntegralInRange<int>(0, 5);
  p->op = ops[k];
  bool grad = k < 3, v3 = k == 2 || k == 5, v1 = k == 0 || k == 3;
  static const char* formats[] = {"NHWC", "NCHW", "NDHWC", "NCDHW"};
  int f = fdp.ConsumeIntegralInRange<int>(0, v3 ? 3 : 1);
  bool cf = formats[f][1] == 'C';
  int rank = f >= 2 ? 5 : 4;
  int64_t c = fdp.ConsumeIntegralInRange<int64_t>(0, 5);
  std::vector<int64_t> shape;
  for (int d = 0; d < rank; ++d) shape.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, 4));
  shape[cf ? 1 : rank - 1] = c;
  DType dt = v1 ? float_dtype(fdp, false) : float_dtype(fdp, true);
  DType u = dt == DType::float64 ? DType::float64 : DType::float32;
  p->tolerance = std::max(tol_for(dt), 1e-2);
  p->attrs["data_format"] = AttrValue(formats[f]);
  bool training = fdp.ConsumeBool();
  p->attrs["is_training"] = AttrValue(training);
  p->attrs["epsilon"] = AttrValue(fdp.ConsumeFloatingPointInRange<double>(0.01, 1.0));
  if (grad) {
    p->inputs.push_back({"y_backprop", tensor(fdp, dt, shape)});
    p->inputs.push_back({"x", tensor(fdp, dt, shape)});
    p->inputs.push_back({"scale", tensor(fdp, u, {c})});
    p->inputs.push_back({"reserve_space_1", tensor(fdp, u, {c}, -0.5, 0.5)});
    p->inputs.push_back({"reserve_space_2", tensor(fdp, u, {c}, 0.5, 2)});
    if (v3) p->inputs.push_back({"reserve_space_3", tensor(fdp, DType::float32, {0})});
    // Training-mode x_backprop amplifies reduction-order differences by rsqrt(var + eps):
    // compare with a correspondingly looser bound.
    if (training) p->tolerance *= 10;
  } else {
    double factor = fdp.ConsumeBool() ? 1.0 : fdp.ConsumeFloatingPointInRange<double>(0, 1);
    p->attrs["exponential_avg_factor"] = AttrValue(factor);
    bool need = !training || factor != 1.0;
    int64_t mc = need || fdp.ConsumeBool() ? c : 0;
    p->inputs.push_back({"x", tensor(fdp, dt, shape)});
    p->inputs.push_back({"scale", tensor(fdp, u, {c})});
    p->inputs.push_back({"offset", tensor(fdp, u, {c})});
    p->inputs.push_back({"mean", tensor(fdp, u, {mc}, -0.5, 0.5)});
    p->inputs.push_back({"variance", tensor(fdp, u, {mc}, 0.5, 2)});
    // Training with small per-channel counts: the normalised output divides by a tiny
    // standard deviation; looser bound.
    if (training) p->tolerance *= 10;
  }
  p->compare_values = true;
}

std::vector<int64_t> sequence(FuzzedDataProvider& fdp, int64_t in, int64_t out) {
  // Non-decreasing, from 0 to in, out+1 entries; sometimes broken on purpose.
  std::vector<int64_t> s = {0};
  for (int64_t i = 1; i < out; ++i) s.push_back(std::min(in, s.back() + fdp.ConsumeIntegralInRange<int64_t>(0, 3)));
  s.push_back(in);
  int breakage = fdp.ConsumeIntegralInRange<int>(0, 20);
  if (breakage == 0 && !s.empty()) s[fdp.ConsumeIntegralInRange<size_t>(0, s.size() - 1)] = fdp.ConsumeIntegral<int64_t>();
  if (breakage == 1) s.pop_back();
  if (breakage == 2) s.push_back(fdp.ConsumeIntegralInRange<int64_t>(-2, in + 2));
  return s;
}

void structured_pool(FuzzedDataProvider& fdp, Program* p) {
  bool grad = fdp.ConsumeBool();
  static const DType dts[] = {DType::float32, DType::float64, DType::int32, DType::int64};
  DType dt = dts[fdp.ConsumeIntegralInRange<int>(0, 3)];
  p->tolerance = tol_for(dt);
  int64_t n = fdp.ConsumeIntegralInRange<int64_t>(1, 2), h = fdp.ConsumeIntegralInRange<int64_t>(1, 12);
  int64_t w = fdp.ConsumeIntegralInRange<int64_t>(1, 12), c = fdp.ConsumeIntegralInRange<int64_t>(1, 3);
  bool overlapping = fdp.ConsumeBool();
  p->attrs["overlapping"] = AttrValue(overlapping);
  double lo = dt == DType::int32 || dt == DType::int64 ? -100 : -1, hi = -lo;
  if (grad) {
    p->op = "FractionalAvgPoolGrad";
    int64_t oh = fdp.ConsumeIntegralInRange<int64_t>(1, h), ow = fdp.ConsumeIntegralInRange<int64_t>(1, w);
    p->inputs.push_back({"orig_input_tensor_shape", ivec({n, h, w, c}, fdp.ConsumeBool() ? DType::int64 : DType::int32)});
    p->inputs.push_back({"out_backprop", tensor(fdp, dt, {n, oh, ow, c}, lo, hi)});
    p->inputs.push_back({"row_pooling_sequence", ivec(sequence(fdp, h, oh), DType::int64)});
    p->inputs.push_back({"col_pooling_sequence", ivec(sequence(fdp, w, ow), DType::int64)});
    p->compare_values = true;
  } else {
    p->op = "FractionalAvgPool";
    std::vector<double> ratio = {1, fdp.ConsumeFloatingPointInRange<double>(1, 3), fdp.ConsumeFloatingPointInRange<double>(1, 3), 1};
    p->attrs["pooling_ratio"] = AttrValue(ratio);
    p->attrs["pseudo_random"] = AttrValue(fdp.ConsumeBool());
    // Fresh random seeds on every call unless deterministic with a non-zero seed.
    bool det = fdp.ConsumeBool();
    p->attrs["deterministic"] = AttrValue(det);
    if (det) {
      p->attrs["seed"] = AttrValue(fdp.ConsumeIntegral<int64_t>());
      p->attrs["seed2"] = AttrValue(fdp.ConsumeIntegral<int64_t>());
    }
    p->compare_values = det;
    p->inputs.push_back({"value", tensor(fdp, dt, {n, h, w, c}, lo, hi)});
  }
}

// ---------------------------------------------------------------- raw mode

AttrValue raw_attr(FuzzedDataProvider& fdp, int depth) {
  switch (fdp.ConsumeIntegralInRange<int>(0, depth > 1 ? 4 : 5)) {
    case 0: return AttrValue(fdp.ConsumeBool());
    case 1: return AttrValue(fdp.ConsumeIntegral<int64_t>());
    case 2: return AttrValue(fdp.ConsumeFloatingPoint<double>());
    case 3: {
      static const char* words[] = {"SAME", "VALID", "EXPLICIT", "NHWC", "NCHW", "NDHWC", "NCDHW", "bfloat16", "float32",
                                    "float16", "float64", "int32", ""};
      if (fdp.ConsumeBool()) return AttrValue(words[fdp.ConsumeIntegralInRange<int>(0, 12)]);
      return AttrValue(fdp.ConsumeRandomLengthString(16));
    }
    case 4: return AttrValue();
    default: {
      AttrValue list;
      list.kind = AttrValue::Kind::List;
      int len = fdp.ConsumeIntegralInRange<int>(0, 9);
      bool small = fdp.ConsumeBool();
      for (int i = 0; i < len; ++i)
        list.list.push_back(small ? AttrValue(fdp.ConsumeIntegralInRange<int64_t>(-1, 4)) : raw_attr(fdp, depth + 1));
      return list;
    }
  }
}

void raw(FuzzedDataProvider& fdp, Program* p) {
  const auto& ops = gradrt::ops();
  const gradrt::OpInfo& info = ops[fdp.ConsumeIntegralInRange<size_t>(0, ops.size() - 1)];
  p->op = info.name;
  if (fdp.ConsumeIntegralInRange<int>(0, 31) == 0) p->op = fdp.ConsumeRandomLengthString(24);
  std::vector<std::string> names = info.inputs;
  if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) names.push_back(fdp.ConsumeRandomLengthString(12));
  for (const std::string& name : names) {
    if (fdp.ConsumeIntegralInRange<int>(0, 15) == 0) continue;  // missing input
    DType dt = static_cast<DType>(fdp.ConsumeIntegralInRange<int>(0, 5));
    int rank = fdp.ConsumeIntegralInRange<int>(0, 6);
    std::vector<int64_t> shape;
    for (int d = 0; d < rank; ++d) {
      switch (fdp.ConsumeIntegralInRange<int>(0, 12)) {
        case 0: shape.push_back(fdp.ConsumeIntegral<int64_t>()); break;
        case 1: shape.push_back(-fdp.ConsumeIntegralInRange<int64_t>(1, 3)); break;
        case 2: shape.push_back(int64_t{1} << fdp.ConsumeIntegralInRange<int>(20, 62)); break;
        default: shape.push_back(fdp.ConsumeIntegralInRange<int64_t>(0, 6)); break;
      }
    }
    Buf b;
    if ((dt == DType::int32 || dt == DType::int64) && rank == 1 && small_count(shape) >= 0) {
      // Shape and sequence vectors: small values mostly, hostile ones sometimes.
      b = Buf{dt, shape, std::vector<unsigned char>(static_cast<size_t>(shape[0]) * gradrt::dtype_size(dt)), true};
      for (int64_t i = 0; i < shape[0]; ++i) {
        int64_t v = fdp.ConsumeIntegralInRange<int>(0, 7) == 0 ? fdp.ConsumeIntegral<int64_t>()
                                                                : fdp.ConsumeIntegralInRange<int64_t>(-1, 8);
        if (dt == DType::int64) std::memcpy(b.bytes.data() + 8 * i, &v, 8);
        else { int32_t x = int32_t(v); std::memcpy(b.bytes.data() + 4 * i, &x, 4); }
      }
    } else {
      b = tensor(fdp, dt, shape, -4, 4);
      // Special values now and then.
      int64_t n = b.has_data ? small_count(shape) : 0;
      if (n > 0 && fdp.ConsumeBool()) {
        static const double specials[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, 1e30, -1e30, 65504, 1e-40};
        for (int k = fdp.ConsumeIntegralInRange<int>(0, 3); k > 0; --k)
          put(&b, fdp.ConsumeIntegralInRange<int64_t>(0, n - 1), specials[fdp.ConsumeIntegralInRange<int>(0, 8)]);
      }
    }
    if (fdp.ConsumeIntegralInRange<int>(0, 31) == 0) b.has_data = false;
    p->inputs.push_back({name, std::move(b)});
  }
  static const char* attr_names[] = {"strides", "padding", "explicit_paddings", "data_format", "dilations",
                                     "use_cudnn_on_gpu", "epsilon", "exponential_avg_factor", "is_training",
                                     "pooling_ratio", "pseudo_random", "overlapping", "deterministic", "seed",
                                     "seed2", "T", "bogus"};
  int count = fdp.ConsumeIntegralInRange<int>(0, 8);
  for (int i = 0; i < count; ++i) p->attrs[attr_names[fdp.ConsumeIntegralInRange<int>(0, 16)]] = raw_attr(fdp, 0);
  p->compare_values = false;
}

// ---------------------------------------------------------------- running and comparing

struct Run {
  gradrt::Status status;
  gradrt::Outputs outputs;
};

Run run(const Program& p, const char* backend, int threads) {
  gradrt::Inputs in;
  for (const auto& [name, b] : p.inputs) in[name] = b.view();
  Run r;
  gradrt::Tensor stale;
  (void)gradrt::Tensor::allocate(DType::float32, {1}, &stale);
  r.outputs.emplace_back("stale", std::move(stale));  // run_op must clear it
  gradrt::RunOptions o;
  o.backend = backend;
  o.threads = threads;
  r.status = gradrt::run_op(p.op, in, p.attrs, &r.outputs, o);
  return r;
}

void check_one(const Program& p, const Run& r, const char* backend) {
  const std::string where = p.op + " on " + backend + ": ";
  if (r.status.ok()) {
    const gradrt::OpInfo* info = nullptr;
    for (const auto& op : gradrt::ops())
      if (op.name == p.op) info = &op;
    if (!info) fail(where + "an unknown op succeeded");
    if (r.outputs.size() != info->outputs.size()) fail(where + "wrong number of outputs");
    for (size_t i = 0; i < r.outputs.size(); ++i) {
      if (r.outputs[i].first != info->outputs[i]) fail(where + "output names out of order");
      const gradrt::Tensor& t = r.outputs[i].second;
      int64_t n = 1;
      for (int64_t d : t.shape()) {
        if (d < 0) fail(where + "negative output dim");
        n *= d;
      }
      if (n != t.num_elements() || t.data() == nullptr) fail(where + "inconsistent output tensor");
      if (t.num_elements() > gradrt::max_tensor_elements()) fail(where + "output beyond max_tensor_elements");
    }
    return;
  }
  if (r.status.message().empty()) fail(where + "error without a message");
  if (!r.outputs.empty()) fail(where + "outputs left after an error: " + r.status.to_string());
  if (r.status.code() != gradrt::Code::NotFound && r.status.message().find(p.op) == std::string::npos)
    fail(where + "message does not name the op: " + r.status.to_string());
}

void compare(const Program& p, const Run& a, const Run& b) {
  if (a.status.code() != b.status.code())
    fail(p.op + ": reference says " + a.status.to_string() + ", cpu says " + b.status.to_string());
  if (!a.status.ok()) return;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const gradrt::Tensor &x = a.outputs[i].second, &y = b.outputs[i].second;
    if (x.dtype() != y.dtype() || x.shape() != y.shape())
      fail(p.op + ": output " + a.outputs[i].first + " differs in dtype or shape between backends");
    if (!p.compare_values) continue;
    // Magnitude of the output: a scale for the absolute error of reordered sums.
    double scale = 1;
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      double v = std::fabs(get(x.data(), x.dtype(), k));
      if (std::isfinite(v)) scale = std::max(scale, v);
    }
    for (int64_t k = 0; k < x.num_elements(); ++k) {
      double u = get(x.data(), x.dtype(), k), v = get(y.data(), y.dtype(), k);
      if (std::isnan(u) && std::isnan(v)) continue;
      if (u == v) continue;
      if (std::fabs(u - v) <= p.tolerance * scale) continue;
      char msg[256];
      std::snprintf(msg, sizeof msg, ": output %s[%lld]: reference %.9g, cpu %.9g (tolerance %g x %g)",
                    a.outputs[i].first.c_str(), static_cast<long long>(k), u, v, p.tolerance, scale);
      fail(p.op + msg);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  gradrt::set_max_tensor_elements(int64_t{1} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider fdp(data, size);
  Program p;
  int mode = fdp.ConsumeIntegralInRange<int>(0, 7);
  int threads = fdp.ConsumeIntegralInRange<int>(0, 4);
  int64_t limit = fdp.ConsumeIntegralInRange<int>(0, 15) == 0 ? fdp.ConsumeIntegralInRange<int64_t>(1, 64) : int64_t{1} << 20;
  if (mode <= 2) structured_conv(fdp, &p);
  else if (mode == 3) structured_batch_norm(fdp, &p);
  else if (mode == 4) structured_pool(fdp, &p);
  else raw(fdp, &p);
  gradrt::set_max_tensor_elements(limit);
  Run a = run(p, "reference", threads);
  Run b = run(p, "cpu", threads);
  gradrt::set_max_tensor_elements(int64_t{1} << 20);
  check_one(p, a, "reference");
  check_one(p, b, "cpu");
  compare(p, a, b);
  return 0;
}

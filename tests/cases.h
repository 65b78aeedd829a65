// Random, valid configurations shared by the tests, at two levels:
//  - op level (ConvConfig, for run_op): odd sizes, channel counts off the vector widths, every
//    padding, strides 1-3, dilations 1-2, groups, both layouts. Used by the sweep and
//    gradient-check tests.
//  - kernel level (gradrt::ConvParams, for gradrt::Backend): what a backend sees after core
//    resolved layout and padding (NHWC, HWIO, pad_top/pad_left, out_h/out_w). Used by the
//    backend-agreement tests (test_cpu_backend.cpp, test_vulkan_backend.cpp).
#pragma once

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "util.h"

namespace test {

inline int64_t uniform(std::mt19937& rng, int64_t lo, int64_t hi) {  // inclusive
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

// ---- op level

struct ConvConfig {
  bool depthwise = false, nchw = false;
  int64_t n = 1, h = 1, w = 1, c = 1;          // input
  int64_t fh = 1, fw = 1, fin = 1, out_c = 1;  // filter HWIO (depthwise: [fh, fw, c, out_c / c])
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::string padding = "VALID";               // SAME | VALID | EXPLICIT
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;

  std::vector<int64_t> input_shape() const;   // data_format order
  std::vector<int64_t> filter_shape() const;
  gradrt::Attrs attrs() const;
  std::string describe() const;
  const char* forward_op() const { return depthwise ? "DepthwiseConv2dNative" : "Conv2D"; }
  const char* input_grad_op() const { return depthwise ? "DepthwiseConv2dNativeBackpropInput" : "Conv2DBackpropInput"; }
  const char* filter_grad_op() const { return depthwise ? "DepthwiseConv2dNativeBackpropFilter" : "Conv2DBackpropFilter"; }
};

ConvConfig random_conv(std::mt19937& rng, bool depthwise);

// Output shape of the forward op for cfg (via the reference backend); false if the
// configuration is refused (e.g. a VALID window larger than the input).
bool forward_shape(const ConvConfig& cfg, std::vector<int64_t>* out);

// ---- kernel level

// The six conv-family kernels of gradrt::Backend.
enum class ConvKernel { fwd, bwd_input, bwd_filter, dw_fwd, dw_bwd_input, dw_bwd_filter };
inline bool is_depthwise(ConvKernel k) {
  return k == ConvKernel::dw_fwd || k == ConvKernel::dw_bwd_input || k == ConvKernel::dw_bwd_filter;
}
// How many products one output element sums (scales the tolerance).
double reduction_length(ConvKernel k, const gradrt::ConvParams& p);

// Random geometry that is always valid (the dilated window fits the padded input):
// strides 1-3, dilations 1-2, uneven padding up to the dilated window minus one (TF's SAME
// and VALID are special cases), channel counts off the vector widths; in about one case of
// `odds` groups 2-3 (conv) or a depth multiplier 2-3 (depthwise).
//   small (big = false): 1-2 x 1-11 x 1-13, channels up to 37-45: every vector tail and
//                        full register tiles along channels.
//   big: 2-3 x 17-33 x 17-35, wide channels: several GEMM tiles and several chunks of a
//        split reduction (filter gradients).
gradrt::ConvParams random_conv_params(std::mt19937& rng, bool depthwise, bool big = false, int odds = 4);

// A conv (or depthwise, with out_c = in_c * multiplier) with TF SAME padding, square filter
// and stride: the shape of most real layers.
gradrt::ConvParams same_conv_params(int64_t batch, int64_t in_h, int64_t in_w, int64_t in_c, int64_t out_c,
                                    int64_t filter, int64_t stride, int64_t groups = 1, bool depthwise = false);

// Geometries with empty operands that core passes to kernels: batch 0; an empty image
// (in_h = 0, out_h = 0). Only the filter gradients have elements to write (zeros).
std::vector<gradrt::ConvParams> empty_conv_params(bool depthwise);

// One line with every field, for failure messages.
std::string describe(const gradrt::ConvParams& p);

template <class T>
std::vector<T> random_vec(std::mt19937& rng, int64_t n, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) e = T(d(rng));
  return v;
}

// Runs kernel k on backend b with `threads` threads into *out, sized and filled with -7 first
// (an element the kernel forgets shows). w is unused by the filter gradients, x by the input
// gradients. T = float or double.
template <class T>
gradrt::Status run_conv(gradrt::Backend* b, ConvKernel k, const gradrt::ConvParams& p, int threads,
                        const std::vector<T>& x, const std::vector<T>& w, const std::vector<T>& dy,
                        std::vector<T>* out);

// Every |got - want| <= factor * eps(T) * max(1, k) * max(1, scale), k the reduction length
// and scale the data's magnitude (eps: 1.2e-7 float, 2.3e-16 double); reports the first miss.
// T = float or double.
template <class T>
void check_near(const std::vector<T>& got, const std::vector<T>& want, double k, double scale, double factor,
                const std::string& what);

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// A pooling sequence of n+1 entries from 0 to size, strictly increasing (n <= size), or with
// dups non-decreasing with repeated entries (empty cells).
std::vector<int64_t> random_seq(std::mt19937& rng, int64_t size, int64_t n, bool dups = false);

}  // namespace test

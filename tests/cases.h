// Random, valid op configurations shared by the sweep and gradient-check tests:
// odd sizes, channel counts off the vector widths, every padding, strides 1-3,
// dilations 1-2, groups, both layouts.
#pragma once

#include <random>
#include <string>

#include "util.h"

namespace test {

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

inline int64_t uniform(std::mt19937& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

}  // namespace test

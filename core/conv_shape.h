// TensorFlow's convolution attribute decoding and shape arithmetic (ops.md §1.2-1.4, 2.2,
// 4.2), shared by Conv2D, DepthwiseConv2dNative and their gradients.
#pragma once

#include <string>
#include <vector>

#include "attrs.h"
#include "params.h"

namespace gradrt {

enum class Padding { kSame, kValid, kExplicit };

struct ConvSpec {
  std::vector<int64_t> strides, dilations, explicit_paddings;  // data_format order
  Padding padding = Padding::kValid;
  bool nchw = false;
  int h_dim() const { return nchw ? 2 : 1; }
  int w_dim() const { return nchw ? 3 : 2; }
  int c_dim() const { return nchw ? 1 : 3; }
};

enum class ConvOpKind { kConv2D, kBackpropInput, kBackpropFilter, kDepthwise };

// Reads strides, padding (a name, or the [[0,0],[t,b],[l,r],[0,0]] list form of
// tf.compat.v1.nn.conv2d_backprop_*), explicit_paddings, data_format, dilations (and
// use_cudnn_on_gpu for the conv ops) and applies TF's attribute checks.
Status decode_conv_spec(AttrReader& attrs, ConvOpKind kind, bool has_cudnn_attr, ConvSpec* spec);

// ops.md §1.3 for one spatial dimension.
Status windowed_output_size(const std::string& label, int64_t in, int64_t filter, int64_t dilation, int64_t stride,
                            Padding padding, int64_t explicit_before, int64_t explicit_after, int64_t* out,
                            int64_t* pad_before);

// Conv2D family: checks ranks/depths/sizes (ops.md §1.4) and fills params.
// `out_shape` is out_backprop's shape, or nullptr for the forward op (then *forward_out
// receives y's shape in data_format order).
Status resolve_conv(const std::string& label, const ConvSpec& spec, const std::vector<int64_t>& input_shape,
                    const std::vector<int64_t>& filter_shape, const std::vector<int64_t>* out_shape,
                    ConvParams* p, std::vector<int64_t>* forward_out);

// Depthwise family (ops.md §4.2), filter [FH, FW, C, M].
Status resolve_depthwise(const std::string& label, const ConvSpec& spec, const std::vector<int64_t>& input_shape,
                         const std::vector<int64_t>& filter_shape, const std::vector<int64_t>* out_shape,
                         ConvParams* p, std::vector<int64_t>* forward_out);

// Shape in data_format order from NHWC-ordered dims.
std::vector<int64_t> to_format(const ConvSpec& spec, int64_t n, int64_t h, int64_t w, int64_t c);

}  // namespace gradrt

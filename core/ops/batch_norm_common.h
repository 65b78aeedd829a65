// What FusedBatchNorm and FusedBatchNormGrad share: data_format decoding, the channel
// count, and the [rows, channels] view (ops.md §6.2-6.3, 6.8-6.9).
#pragma once

#include "ops.h"

namespace gradrt {

struct BatchNormLayout {
  bool channels_first = false;  // NCHW / NCDHW
  int rank = 4;                 // 5 for NDHWC / NCDHW (FusedBatchNormV3 only)
  int64_t channels = 0, rows = 0;
  ChannelsFirst cf;             // used when channels_first
  const ChannelsFirst* cf_ptr() const { return channels_first ? &cf : nullptr; }
};

// Reads data_format (V3 also takes NDHWC/NCDHW) and the layout of x.
Status batch_norm_layout(OpContext& ctx, bool allow_3d, const TensorView& x, const char* x_name,
                         BatchNormLayout* layout);

// `t` must be 1-D with `channels` elements (TF's messages: "<what> must be 1-dimensional",
// "<what> must have the same number of elements as the channels of x").
Status check_channel_vector(OpContext& ctx, const TensorView& t, const char* what, int64_t channels,
                            const std::string& prefix = "");

// FusedBatchNorm's parameter dtype U: float64 with float64 data (a gradrt extension), else float32.
inline DType batch_norm_param_dtype(DType x) { return x == DType::float64 ? DType::float64 : DType::float32; }

}  // namespace gradrt

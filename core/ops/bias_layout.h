// What BiasAdd and BiasAddGrad share (TF's bias_op.cc): data_format and which dimension holds
// the channels. value / out_backprop has rank >= 2; NHWC: channels are the last dimension;
// NCHW: dimension 1 (any rank >= 2; rank 2 is [N, C] either way). Kernels see [rows, channels]
// channels last: under NCHW with rank > 2 core transposes [N, C, inner] around the kernel.
#pragma once

#include "ops.h"

namespace gradrt {

struct BiasLayout {
  BiasParams p;
  bool channels_first = false;  // NCHW with rank > 2
  ChannelsFirst cf;             // [N, C, product of the dimensions after C]
  int64_t elements = 0;
  const ChannelsFirst* cf_ptr() const { return channels_first ? &cf : nullptr; }
};

// Reads data_format and the layout of `t` (input `name`).
inline Status bias_layout(OpContext& ctx, const TensorView& t, const char* name, BiasLayout* out) {
  std::string format;
  GRADRT_RETURN_IF_ERROR(ctx.attrs().str("data_format", &format, std::string("NHWC")));
  if (format != "NHWC" && format != "NCHW")
    return ctx.error("data_format must be NHWC or NCHW, got \"" + format + "\"");
  const size_t rank = t.shape.size();
  if (rank < 2)
    return ctx.error(std::string(name) + " must be at least 2-dimensional, got shape " + shape_string(t.shape));
  GRADRT_RETURN_IF_ERROR(ctx.num_elements(t, name, &out->elements));
  const size_t c_dim = format == "NCHW" ? 1 : rank - 1;
  out->p.channels = t.shape[c_dim];
  out->channels_first = c_dim + 1 < rank;
  if (out->elements == 0) return Status::OK();  // nothing runs (and the products below could overflow)
  // Every dimension is >= 1 here, so these products are bounded by the element count.
  int64_t inner = 1;  // the dimensions after the channels'
  for (size_t d = c_dim + 1; d < rank; ++d) inner *= t.shape[d];
  out->cf = {t.shape[0], out->p.channels, inner};
  out->p.rows = out->elements / out->p.channels;
  return Status::OK();
}

}  // namespace gradrt

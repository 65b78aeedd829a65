#include "batch_norm_common.h"
#include "status_macros.h"

namespace gradrt {

Status batch_norm_layout(OpContext& ctx, bool allow_3d, const TensorView& x, const char* x_name,
                         BatchNormLayout* layout) {
  std::string format;
  GRADRT_RETURN_IF_ERROR(ctx.attrs().str("data_format", &format, std::string("NHWC")));
  bool ok4 = format == "NHWC" || format == "NCHW";
  bool ok5 = allow_3d && (format == "NDHWC" || format == "NCDHW");
  if (!ok4 && !ok5)
    return ctx.error("data_format must be " + std::string(allow_3d ? "NHWC, NCHW, NDHWC or NCDHW" : "NHWC or NCHW") +
                     ", got \"" + format + "\"");
  layout->rank = ok5 ? 5 : 4;
  layout->channels_first = format[1] == 'C';
  if (static_cast<int>(x.shape.size()) != layout->rank)
    return ctx.error(std::string(x_name) + " must be " + std::to_string(layout->rank) + "-dimensional for data_format " +
                     format + ", got shape " + shape_string(x.shape));
  int c_dim = layout->channels_first ? 1 : layout->rank - 1;
  layout->channels = x.shape[c_dim];
  int64_t inner = 1;  // the spatial dims (checked by the caller's element count)
  for (int d = 1; d < layout->rank; ++d)
    if (d != c_dim) inner *= x.shape[d];
  layout->rows = x.shape[0] * inner;
  layout->cf = {x.shape[0], layout->channels, inner};
  return Status::OK();
}

Status check_channel_vector(OpContext& ctx, const TensorView& t, const char* what, int64_t channels,
                            const std::string& prefix) {
  if (t.shape.size() != 1)
    return ctx.error(std::string(what) + " must be 1-dimensional, got shape " + shape_string(t.shape));
  if (t.shape[0] != channels)
    return ctx.error(prefix + what + " must have the same number of elements as the channels of x, got " +
                     std::to_string(t.shape[0]) + " and " + std::to_string(channels));
  return Status::OK();
}

}  // namespace gradrt

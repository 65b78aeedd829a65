#include "conv_shape.h"

#include "checked.h"
#include "status_macros.h"

namespace gradrt {
namespace {

std::string list_string(const std::vector<int64_t>& v) { return shape_string(v); }

// strides / dilations: 4 entries, batch and depth 1, spatial > 0. TF reports a batch or
// depth stride as Unimplemented for Conv2D and Conv2DBackpropInput, InvalidArgument elsewhere.
Status check_window_attr(AttrReader& attrs, const ConvSpec& spec, const char* name, const std::vector<int64_t>& v,
                         Code batch_depth_code) {
  if (v.size() != 4)
    return attrs.error(std::string(name) + " must have 4 entries (one per dimension), got " +
                       std::to_string(v.size()) + ": " + list_string(v));
  int n = 0, c = spec.c_dim();
  for (int i : {spec.h_dim(), spec.w_dim()}) {
    if (v[i] <= 0)
      return attrs.error(std::string(name) + "[" + std::to_string(i) + "] must be > 0, got " + std::to_string(v[i]));
  }
  if (v[n] != 1 || v[c] != 1)
    return Status(batch_depth_code, attrs.label() + ": " + name + " in the batch and depth dimensions must be 1, got " +
                                        list_string(v));
  return Status::OK();
}

}  // namespace

std::vector<int64_t> to_format(const ConvSpec& spec, int64_t n, int64_t h, int64_t w, int64_t c) {
  if (spec.nchw) return {n, c, h, w};
  return {n, h, w, c};
}

Status decode_conv_spec(AttrReader& attrs, ConvOpKind kind, bool has_cudnn_attr, ConvSpec* spec) {
  std::string format;
  GRADRT_RETURN_IF_ERROR(attrs.str("data_format", &format, std::string("NHWC")));
  if (format != "NHWC" && format != "NCHW")
    return attrs.error("data_format must be \"NHWC\" or \"NCHW\", got \"" + format + "\"");
  spec->nchw = format == "NCHW";

  if (has_cudnn_attr) {
    bool unused;
    GRADRT_RETURN_IF_ERROR(attrs.boolean("use_cudnn_on_gpu", &unused, true));
  }

  GRADRT_RETURN_IF_ERROR(attrs.int_list("strides", &spec->strides));
  Code bd = (kind == ConvOpKind::kConv2D || kind == ConvOpKind::kBackpropInput) ? Code::Unimplemented
                                                                                  : Code::InvalidArgument;
  GRADRT_RETURN_IF_ERROR(check_window_attr(attrs, *spec, "strides", spec->strides, bd));
  GRADRT_RETURN_IF_ERROR(attrs.int_list("dilations", &spec->dilations, std::vector<int64_t>{1, 1, 1, 1}));
  GRADRT_RETURN_IF_ERROR(check_window_attr(attrs, *spec, "dilations", spec->dilations, bd));

  // padding: "SAME" | "VALID" | "EXPLICIT", or the Python list form.
  std::vector<int64_t> explicit_pads;
  GRADRT_RETURN_IF_ERROR(attrs.int_list("explicit_paddings", &explicit_pads, std::vector<int64_t>{}));
  const AttrValue* pad = attrs.raw("padding");
  if (!pad) return attrs.error("missing required attribute 'padding'");
  if (pad->kind == AttrValue::Kind::List) {
    if (!explicit_pads.empty())
      return attrs.error("padding given as a list and explicit_paddings given too; give one of them");
    if (pad->list.size() != 4)
      return attrs.error("when padding is a list it must have 4 [before, after] pairs, got " +
                         std::to_string(pad->list.size()));
    for (const AttrValue& pair : pad->list) {
      if (pair.kind != AttrValue::Kind::List || pair.list.size() != 2 ||
          pair.list[0].kind != AttrValue::Kind::Int || pair.list[1].kind != AttrValue::Kind::Int)
        return attrs.error("when padding is a list, each element must be a list of 2 integers");
      explicit_pads.push_back(pair.list[0].i);
      explicit_pads.push_back(pair.list[1].i);
    }
    spec->padding = Padding::kExplicit;
  } else if (pad->kind == AttrValue::Kind::String && pad->s == "SAME") {
    spec->padding = Padding::kSame;
  } else if (pad->kind == AttrValue::Kind::String && pad->s == "VALID") {
    spec->padding = Padding::kValid;
  } else if (pad->kind == AttrValue::Kind::String && pad->s == "EXPLICIT") {
    spec->padding = Padding::kExplicit;
  } else {
    return attrs.error("padding must be \"SAME\", \"VALID\", \"EXPLICIT\" or a list of 4 pairs");
  }

  // ops.md §1.2 CheckValidPadding
  if (spec->padding == Padding::kExplicit) {
    if (explicit_pads.size() != 8)
      return attrs.error("explicit_paddings attribute must contain 8 values, but got: " +
                         std::to_string(explicit_pads.size()));
    for (int64_t v : explicit_pads)
      if (v < 0) return attrs.error("All elements of explicit_paddings must be nonnegative, got " + list_string(explicit_pads));
    int c = spec->c_dim();
    if (explicit_pads[0] || explicit_pads[1] || explicit_pads[2 * c] || explicit_pads[2 * c + 1])
      return attrs.error("Nonzero explicit padding in the batch or depth dimensions is not supported: " +
                         list_string(explicit_pads));
  } else if (!explicit_pads.empty()) {
    return attrs.error("explicit_paddings attribute must be empty if the padding attribute is not EXPLICIT");
  }
  spec->explicit_paddings = explicit_pads;
  return Status::OK();
}

Status windowed_output_size(const std::string& label, int64_t in, int64_t filter, int64_t dilation, int64_t stride,
                            Padding padding, int64_t explicit_before, int64_t explicit_after, int64_t* out,
                            int64_t* pad_before) {
  if (stride <= 0) return Status(Code::InvalidArgument, label + ": Stride must be > 0, but got " + std::to_string(stride));
  if (dilation < 1)
    return Status(Code::InvalidArgument, label + ": Dilation rate must be >= 1, but got " + std::to_string(dilation));
  // Inputs are bounded by the element-count checks (< 2^63 total); the window terms can
  // still overflow when a filter or pad is huge, so every step is checked.
  auto overflow = [&] {
    return Status(Code::InvalidArgument, label + ": window arithmetic overflows int64 (input " + std::to_string(in) +
                                             ", filter " + std::to_string(filter) + ", dilation " +
                                             std::to_string(dilation) + ", stride " + std::to_string(stride) + ")");
  };
  int64_t effective;  // (filter - 1) * dilation + 1
  if (mul_overflows(filter - 1, dilation, &effective) || add_overflows(effective, 1, &effective)) return overflow();
  int64_t o = 0, before = 0;
  switch (padding) {
    case Padding::kValid:
    case Padding::kExplicit: {
      int64_t num = in;
      if (padding == Padding::kExplicit) {
        if (add_overflows(num, explicit_before, &num) || add_overflows(num, explicit_after, &num)) return overflow();
        before = explicit_before;
      }
      if (__builtin_sub_overflow(num, effective, &num) || add_overflows(num, stride, &num)) return overflow();
      o = num / stride;  // truncates toward zero, as TF does
      break;
    }
    case Padding::kSame: {
      int64_t num;
      if (add_overflows(in, stride - 1, &num)) return overflow();
      o = num / stride;
      int64_t need;
      if (mul_overflows(o - 1, stride, &need) || add_overflows(need, effective, &need) ||
          __builtin_sub_overflow(need, in, &need))
        return overflow();
      if (need < 0) need = 0;
      before = need / 2;  // the odd row/column goes to the bottom/right
      break;
    }
  }
  if (o < 0)
    return Status(Code::InvalidArgument, label + ": Computed output size would be negative: " + std::to_string(o) +
                                             " [input_size: " + std::to_string(in) + ", effective_filter_size: " +
                                             std::to_string(effective) + ", stride: " + std::to_string(stride) + "]");
  *out = o;
  *pad_before = before;
  return Status::OK();
}

namespace {

Status check_rank4(const std::string& label, const char* what, const std::vector<int64_t>& shape) {
  if (shape.size() == 4) return Status::OK();
  return Status(Code::InvalidArgument, label + ": " + what + " must be 4-dimensional, got shape " + shape_string(shape));
}

// Spatial sizes of both dims into p (out_h/out_w, pads), checking out_backprop's sizes.
Status resolve_spatial(const std::string& label, const ConvSpec& spec, const std::vector<int64_t>* out_shape,
                       ConvParams* p) {
  struct Dim { int index; int64_t in, filter; int64_t *stride, *dilation, *out, *pad; const char* name; };
  Dim dims[2] = {
      {spec.h_dim(), p->in_h, p->filter_h, &p->stride_h, &p->dilation_h, &p->out_h, &p->pad_top, "rows"},
      {spec.w_dim(), p->in_w, p->filter_w, &p->stride_w, &p->dilation_w, &p->out_w, &p->pad_left, "cols"}};
  for (Dim& d : dims) {
    *d.stride = spec.strides[d.index];
    *d.dilation = spec.dilations[d.index];
    int64_t before = 0, after = 0;
    if (spec.padding == Padding::kExplicit) {
      before = spec.explicit_paddings[2 * d.index];
      after = spec.explicit_paddings[2 * d.index + 1];
    }
    GRADRT_RETURN_IF_ERROR(windowed_output_size(label, d.in, d.filter, *d.dilation, *d.stride, spec.padding, before, after, d.out,
        d.pad));
    if (out_shape && (*out_shape)[d.index] != *d.out)
      return Status(Code::InvalidArgument,
                    label + ": Size of out_backprop doesn't match computed: actual = " +
                        std::to_string((*out_shape)[d.index]) + ", computed = " + std::to_string(*d.out) +
                        " spatial_dim: " + std::to_string(d.index) + " input: " + std::to_string(d.in) +
                        " filter: " + std::to_string(d.filter) + " output: " + std::to_string((*out_shape)[d.index]) +
                        " stride: " + std::to_string(*d.stride) + " dilation: " + std::to_string(*d.dilation));
  }
  return Status::OK();
}

// The rank checks shared by conv and depthwise, then the input's dims into p.
Status read_input_dims(const std::string& label, const ConvSpec& spec, const std::vector<int64_t>& in,
                       const std::vector<int64_t>& filter_shape, const std::vector<int64_t>* out_shape,
                       ConvParams* p) {
  GRADRT_RETURN_IF_ERROR(check_rank4(label, "input", in));
  GRADRT_RETURN_IF_ERROR(check_rank4(label, "filter", filter_shape));
  if (out_shape) GRADRT_RETURN_IF_ERROR(check_rank4(label, "out_backprop", *out_shape));
  p->batch = in[0];
  p->in_h = in[spec.h_dim()];
  p->in_w = in[spec.w_dim()];
  p->in_c = in[spec.c_dim()];
  return Status::OK();
}

}  // namespace

Status resolve_conv(const std::string& label, const ConvSpec& spec, const std::vector<int64_t>& input_shape,
                    const std::vector<int64_t>& filter_shape, const std::vector<int64_t>* out_shape, ConvParams* p,
                    std::vector<int64_t>* forward_out) {
  GRADRT_RETURN_IF_ERROR(read_input_dims(label, spec, input_shape, filter_shape, out_shape, p));
  if (out_shape && (*out_shape)[0] != p->batch)
    return Status(Code::InvalidArgument, label + ": input and out_backprop must have the same batch size. Input batch: " +
                                             std::to_string(p->batch) + ", outbackprop batch: " +
                                             std::to_string((*out_shape)[0]) + ", batch_dim: 0");
  p->filter_h = filter_shape[0];
  p->filter_w = filter_shape[1];
  p->filter_in_c = filter_shape[2];
  p->out_c = filter_shape[3];
  if (p->filter_in_c <= 0)
    return Status(Code::InvalidArgument, label + ": filter depth (filter dim 2) must be > 0, got " +
                                             std::to_string(p->filter_in_c));
  if (p->in_c % p->filter_in_c != 0)
    return Status(Code::InvalidArgument, label + ": input depth must be evenly divisible by filter depth: " +
                                             std::to_string(p->in_c) + " vs " + std::to_string(p->filter_in_c));
  p->groups = p->in_c / p->filter_in_c;
  if (out_shape && (*out_shape)[spec.c_dim()] != p->out_c)
    return Status(Code::InvalidArgument, label + ": filter and out_backprop must have the same out_depth: " +
                                             std::to_string(p->out_c) + " vs " +
                                             std::to_string((*out_shape)[spec.c_dim()]));
  if (p->groups > 1 && p->out_c % p->groups != 0)
    return Status(Code::InvalidArgument, label + ": filter out_depth " + std::to_string(p->out_c) +
                                             " must be divisible by the number of groups " + std::to_string(p->groups));
  GRADRT_RETURN_IF_ERROR(resolve_spatial(label, spec, out_shape, p));
  if (forward_out) *forward_out = to_format(spec, p->batch, p->out_h, p->out_w, p->out_c);
  return Status::OK();
}

Status resolve_depthwise(const std::string& label, const ConvSpec& spec, const std::vector<int64_t>& input_shape,
                         const std::vector<int64_t>& filter_shape, const std::vector<int64_t>* out_shape,
                         ConvParams* p, std::vector<int64_t>* forward_out) {
  GRADRT_RETURN_IF_ERROR(read_input_dims(label, spec, input_shape, filter_shape, out_shape, p));
  if (out_shape && (*out_shape)[0] != p->batch)
    return Status(Code::InvalidArgument, label + ": input and out_backprop must have the same batch size: " +
                                             std::to_string(p->batch) + " vs " + std::to_string((*out_shape)[0]));
  p->filter_h = filter_shape[0];
  p->filter_w = filter_shape[1];
  p->filter_in_c = 1;
  p->depth_multiplier = filter_shape[3];
  if (p->in_c != filter_shape[2])
    return Status(Code::InvalidArgument, label + ": input and filter must have the same in_depth: " +
                                             std::to_string(p->in_c) + " vs " + std::to_string(filter_shape[2]));
  if (mul_overflows(p->in_c, p->depth_multiplier, &p->out_c))
    return Status(Code::InvalidArgument, label + ": depth_multiplier * in_depth overflows int64");
  if (out_shape && (*out_shape)[spec.c_dim()] != p->out_c)
    return Status(Code::InvalidArgument, label + ": depth_multiplier * in_depth not equal to out_depth: " +
                                             std::to_string(p->depth_multiplier) + " * " + std::to_string(p->in_c) +
                                             " != " + std::to_string((*out_shape)[spec.c_dim()]));
  GRADRT_RETURN_IF_ERROR(resolve_spatial(label, spec, out_shape, p));
  if (forward_out) *forward_out = to_format(spec, p->batch, p->out_h, p->out_w, p->out_c);
  return Status::OK();
}

}  // namespace gradrt

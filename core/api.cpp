// The typed C++ calls: each builds the op's Attrs and inputs and goes through run_op,
// so there is one path (validation included) for every API.
#include "gradrt/gradrt.h"
#include "registry.h"
#include "status_macros.h"

namespace gradrt {

namespace {

Attrs conv_attrs(const ConvAttrs& a, bool with_cudnn) {
  Attrs m = {{"strides", AttrValue(a.strides)},
             {"padding", AttrValue(a.padding)},
             {"explicit_paddings", AttrValue(a.explicit_paddings)},
             {"data_format", AttrValue(a.data_format)},
             {"dilations", AttrValue(a.dilations)}};
  if (with_cudnn) m["use_cudnn_on_gpu"] = AttrValue(a.use_cudnn_on_gpu);
  return m;
}

// Runs op on `args`, given in the op's input order (ops.inc names them), and moves its
// outputs, in order, into `targets` (nullptr entries are dropped).
Status run_into(std::string_view op, std::initializer_list<TensorView> args, const Attrs& attrs,
                const RunOptions& options, std::initializer_list<Tensor*> targets) {
  Inputs inputs;
  if (const OpInfo* info = find_op(op)) {
    size_t i = 0;
    for (const TensorView& a : args) inputs[info->inputs.at(i++)] = a;
  }
  Outputs outs;
  GRADRT_RETURN_IF_ERROR(run_op(op, inputs, attrs, &outs, options));
  size_t i = 0;
  for (Tensor* t : targets) {
    if (t && i < outs.size()) *t = std::move(outs[i].second);
    ++i;
  }
  return Status::OK();
}

// The one-output conv family; depthwise ops take no use_cudnn_on_gpu.
Status run_conv(std::string_view op, std::initializer_list<TensorView> args, const ConvAttrs& attrs, Tensor* output,
                const RunOptions& options) {
  return run_into(op, args, conv_attrs(attrs, true), options, {output});
}
Status run_depthwise(std::string_view op, std::initializer_list<TensorView> args, const DepthwiseAttrs& attrs,
                     Tensor* output, const RunOptions& options) {
  return run_into(op, args, conv_attrs(attrs, false), options, {output});
}

}  // namespace

Attrs ConvAttrs::to_attrs() const { return conv_attrs(*this, true); }

Attrs FusedBatchNormAttrs::to_attrs(bool with_factor) const {
  Attrs m = {{"epsilon", AttrValue(epsilon)}, {"data_format", AttrValue(data_format)}, {"is_training", AttrValue(is_training)}};
  if (with_factor) m["exponential_avg_factor"] = AttrValue(exponential_avg_factor);
  return m;
}

Attrs FractionalAvgPoolAttrs::to_attrs() const {
  return {{"pooling_ratio", AttrValue(pooling_ratio)}, {"pseudo_random", AttrValue(pseudo_random)},
          {"overlapping", AttrValue(overlapping)},     {"deterministic", AttrValue(deterministic)},
          {"seed", AttrValue(seed)},                   {"seed2", AttrValue(seed2)}};
}

Status conv2d(const TensorView& input, const TensorView& filter, const ConvAttrs& attrs, Tensor* output,
              const RunOptions& options) {
  return run_conv("Conv2D", {input, filter}, attrs, output, options);
}

Status conv2d_backprop_input(const TensorView& input_sizes, const TensorView& filter, const TensorView& out_backprop,
                             const ConvAttrs& attrs, Tensor* output, const RunOptions& options) {
  return run_conv("Conv2DBackpropInput", {input_sizes, filter, out_backprop}, attrs, output, options);
}

Status conv2d_backprop_filter(const TensorView& input, const TensorView& filter_sizes, const TensorView& out_backprop,
                              const ConvAttrs& attrs, Tensor* output, const RunOptions& options) {
  return run_conv("Conv2DBackpropFilter", {input, filter_sizes, out_backprop}, attrs, output, options);
}

Status depthwise_conv2d_native(const TensorView& input, const TensorView& filter, const DepthwiseAttrs& attrs,
                               Tensor* output, const RunOptions& options) {
  return run_depthwise("DepthwiseConv2dNative", {input, filter}, attrs, output, options);
}

Status depthwise_conv2d_native_backprop_input(const TensorView& input_sizes, const TensorView& filter,
                                              const TensorView& out_backprop, const DepthwiseAttrs& attrs,
                                              Tensor* output, const RunOptions& options) {
  return run_depthwise("DepthwiseConv2dNativeBackpropInput", {input_sizes, filter, out_backprop}, attrs, output,
                       options);
}

Status depthwise_conv2d_native_backprop_filter(const TensorView& input, const TensorView& filter_sizes,
                                               const TensorView& out_backprop, const DepthwiseAttrs& attrs,
                                               Tensor* output, const RunOptions& options) {
  return run_depthwise("DepthwiseConv2dNativeBackpropFilter", {input, filter_sizes, out_backprop}, attrs, output,
                       options);
}

Status relu(const TensorView& features, Tensor* activations, const RunOptions& options) {
  return run_into("Relu", {features}, {}, options, {activations});
}

Status relu6(const TensorView& features, Tensor* activations, const RunOptions& options) {
  return run_into("Relu6", {features}, {}, options, {activations});
}

Status relu_grad(const TensorView& gradients, const TensorView& features, Tensor* backprops, const RunOptions& options) {
  return run_into("ReluGrad", {gradients, features}, {}, options, {backprops});
}

Status relu6_grad(const TensorView& gradients, const TensorView& features, Tensor* backprops,
                  const RunOptions& options) {
  return run_into("Relu6Grad", {gradients, features}, {}, options, {backprops});
}

Status bias_add(const TensorView& value, const TensorView& bias, const std::string& data_format, Tensor* output,
                const RunOptions& options) {
  return run_into("BiasAdd", {value, bias}, {{"data_format", AttrValue(data_format)}}, options, {output});
}

Status bias_add_grad(const TensorView& out_backprop, const std::string& data_format, Tensor* output,
                     const RunOptions& options) {
  return run_into("BiasAddGrad", {out_backprop}, {{"data_format", AttrValue(data_format)}}, options, {output});
}

Status fused_batch_norm(const TensorView& x, const TensorView& scale, const TensorView& offset, const TensorView& mean,
                        const TensorView& variance, const FusedBatchNormAttrs& attrs, FusedBatchNormOutputs* out,
                        const RunOptions& options) {
  return run_into("FusedBatchNormV3", {x, scale, offset, mean, variance}, attrs.to_attrs(true), options,
                  {&out->y, &out->batch_mean, &out->batch_variance, &out->reserve_space_1, &out->reserve_space_2,
                   &out->reserve_space_3});
}

Status fused_batch_norm_grad(const TensorView& y_backprop, const TensorView& x, const TensorView& scale,
                             const TensorView& reserve_space_1, const TensorView& reserve_space_2,
                             const FusedBatchNormAttrs& attrs, FusedBatchNormGradOutputs* out,
                             const RunOptions& options) {
  return run_into("FusedBatchNormGradV2", {y_backprop, x, scale, reserve_space_1, reserve_space_2},
                  attrs.to_attrs(false), options, {&out->x_backprop, &out->scale_backprop, &out->offset_backprop});
}

Status fractional_avg_pool(const TensorView& value, const FractionalAvgPoolAttrs& attrs, FractionalAvgPoolOutputs* out,
                           const RunOptions& options) {
  return run_into("FractionalAvgPool", {value}, attrs.to_attrs(), options,
                  {&out->output, &out->row_pooling_sequence, &out->col_pooling_sequence});
}

Status fractional_avg_pool_grad(const TensorView& orig_input_tensor_shape, const TensorView& out_backprop,
                                const TensorView& row_pooling_sequence, const TensorView& col_pooling_sequence,
                                bool overlapping, Tensor* output, const RunOptions& options) {
  return run_into("FractionalAvgPoolGrad",
                  {orig_input_tensor_shape, out_backprop, row_pooling_sequence, col_pooling_sequence},
                  {{"overlapping", AttrValue(overlapping)}}, options, {output});
}

}  // namespace gradrt

// What MaxPool, AvgPool and their gradients share: TF's pooling attributes (ksize, strides,
// padding, explicit_paddings, data_format), the window geometry (params.h PoolParams) and
// the kernel call with NCHW operands transposed around the NHWC kernel.
#pragma once

#include <vector>

#include "conv_shape.h"
#include "ops.h"

namespace gradrt {

// The conv attributes' layout (strides, padding, explicit_paddings, data_format; dilations stay
// 1) plus the window: all in data_format order.
struct PoolSpec : ConvSpec {
  std::vector<int64_t> ksize;
};

// Reads and checks the attributes. `explicit_allowed`: MaxPool and MaxPoolGrad take
// padding EXPLICIT with explicit_paddings (TF's op defs), the average pools do not.
Status decode_pool_spec(OpContext& ctx, bool explicit_allowed, PoolSpec* spec);

// The geometry of a pool over an input of `in_shape` (data_format order, named `in_name` in
// messages): fills p and the forward output's shape (data_format order).
Status resolve_pool(OpContext& ctx, const PoolSpec& spec, const std::vector<int64_t>& in_shape, const char* in_name,
                    PoolParams* p, std::vector<int64_t>* out_shape);

// `t` must have shape `want` (TF's "Expected grad shape to be [..], but got [..]").
Status expect_shape(OpContext& ctx, const TensorView& t, const char* name, const std::vector<int64_t>& want);

// Which pooling tensor an operand is: x (the input's shape) or y (the output's shape).
enum class PoolRole { kX, kY };

// Runs pooling kernel `which` (max_pool, max_pool_grad, avg_pool or avg_pool_grad) on its
// operands in the compute type: `x` and `dy` as the kernel takes them (nullptr where it takes
// none), the output `out` with its role. Nothing runs when a side is empty (the output is
// then zeros, or empty).
Status run_pool_kernel(OpContext& ctx, Kernel which, const PoolSpec& spec, const PoolParams& p, const TensorView* x,
                       const TensorView* dy, Tensor* out, PoolRole out_role);

// MaxPool / AvgPool (which = max_pool / avg_pool): attributes, the one input, the output (*y).
Status run_pool_forward(OpContext& ctx, Kernel which, Tensor** y);

}  // namespace gradrt

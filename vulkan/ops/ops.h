// The Vulkan kernels, one file per op stem (vulkan/ops/<stem>.cpp, vulkan/shaders/<stem>.comp).
// Same contract as core/backend.h: params already validated, outputs allocated; these upload,
// dispatch and read back, and can fail only with a driver/limit Status. T is float or double
// (double needs shaderFloat64: Unimplemented otherwise); both are instantiated in the op files.
// (uint16_t too for the float16-storage kernels: below.)
#pragma once

#include "../context.h"
#include "kernels.h"

namespace gradrt::vk {

// One function template per kernel of the list (kernels.h), on a Context instead of an Exec.
#define GRADRT_VK_DECLARE(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) \
  template <class T>                                             \
  Status STEM(Context& ctx, const P& p, GRADRT_UNPACK ARGS);
GRADRT_KERNELS(GRADRT_VK_DECLARE, T)
#undef GRADRT_VK_DECLARE
// The float16-storage forms (kernels.h GRADRT_F16_KERNELS) are the same functions on storage
// T = uint16_t (instantiated in their op files; vulkan_backend.cpp's forwarders call them with
// uint16_t pointers), except batch norm's, whose scale/mean/variance/dscale/doffset stay float:
Status fused_batch_norm_grad(Context& ctx, const BatchNormParams& p, const uint16_t* dy, const uint16_t* x,
                             const float* scale, const float* mean, const float* variance, uint16_t* dx,
                             float* dscale, float* doffset);

}  // namespace gradrt::vk

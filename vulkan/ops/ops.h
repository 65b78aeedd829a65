// The Vulkan kernels, one file per op stem (vulkan/ops/<stem>.cpp, vulkan/shaders/<stem>.comp).
// Same contract as core/backend.h: params already validated, outputs allocated; these upload,
// dispatch and read back, and can fail only with a driver/limit Status. T is float or double
// (double needs shaderFloat64: Unimplemented otherwise); both are instantiated in the op files.
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
// The float16-storage forms (kernels.h GRADRT_F16_KERNELS): the same op files, storage uint16_t.
#define GRADRT_VK_DECLARE_F16(STEM, P, ARGS, NAMES) Status STEM##_f16(Context& ctx, const P& p, GRADRT_UNPACK ARGS);
GRADRT_F16_KERNELS(GRADRT_VK_DECLARE_F16)
#undef GRADRT_VK_DECLARE_F16

}  // namespace gradrt::vk

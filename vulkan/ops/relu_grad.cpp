// ReluGrad / Relu6Grad on Vulkan: shaders/relu_grad.comp, one invocation per element.
#include <cstdint>  // before the generated SPIR-V headers, which use uint32_t

#include "common.h"
#include "ops.h"
#include "relu_grad.spv.h"
#include "relu_grad_f64.spv.h"
#include "status_macros.h"

namespace gradrt::vk {

Status relu_launch(Context& ctx, const char* kernel, const ShaderCode& code, const ReluParams& p, const Kernel** k,
                   EltwisePush* push, uint32_t* groups);  // relu.cpp

template <class T>
Status relu_grad(Context& ctx, const ReluParams& p, const T* dy, const T* x, T* dx) {
  if (p.n == 0) return Status::OK();
  const Kernel* k = nullptr;
  EltwisePush push;
  uint32_t groups;
  GRADRT_RETURN_IF_ERROR(
      relu_launch(ctx, "relu_grad", GRADRT_VK_SHADER(T, relu_grad, 3, EltwisePush), p, &k, &push, &groups));
  const size_t bytes = sizeof(T) * p.n;
  return run_one_dispatch(ctx, *k, push, {dy, bytes}, {x, bytes}, {dx, bytes}, groups);
}

template Status relu_grad<float>(Context&, const ReluParams&, const float*, const float*, float*);
template Status relu_grad<double>(Context&, const ReluParams&, const double*, const double*, double*);

}  // namespace gradrt::vk

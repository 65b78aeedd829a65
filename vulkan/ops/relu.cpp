// Relu / Relu6 on Vulkan: shaders/relu.comp, one invocation per element.
#include <cstdint>  // before the generated SPIR-V headers, which use uint32_t

#include "common.h"
#include "ops.h"
#include "relu.spv.h"
#include "relu_f64.spv.h"
#include "status_macros.h"

namespace gradrt::vk {

// What the relu shaders share (here and relu_grad.cpp): the int32 guard, the pipeline of `code`,
// the push block and the group count of p.n elements.
Status relu_launch(Context& ctx, const char* kernel, const ShaderCode& code, const ReluParams& p, const Kernel** k,
                   EltwisePush* push, uint32_t* groups) {
  GRADRT_RETURN_IF_ERROR(check_int32(kernel, {p.n}));
  const uint32_t threads = elementwise_threads(ctx);
  GRADRT_RETURN_IF_ERROR(ctx.kernel(code, {threads}, k));
  *push = EltwisePush{};
  push->n = static_cast<int32_t>(p.n);
  push->six = p.six ? 1 : 0;
  *groups = group_count(ctx, p.n, threads, 0);
  return Status::OK();
}

template <class T>
Status relu(Context& ctx, const ReluParams& p, const T* x, T* y) {
  if (p.n == 0) return Status::OK();
  const Kernel* k = nullptr;
  EltwisePush push;
  uint32_t groups;
  GRADRT_RETURN_IF_ERROR(relu_launch(ctx, "relu", GRADRT_VK_SHADER(T, relu, 2, EltwisePush), p, &k, &push, &groups));
  Job job(ctx);
  int bx, by;
  GRADRT_RETURN_IF_ERROR(job.input(x, sizeof(T) * p.n, &bx));
  GRADRT_RETURN_IF_ERROR(job.output(y, sizeof(T) * p.n, &by));
  GRADRT_RETURN_IF_ERROR(job.dispatch(*k, {bx, by}, push, groups));
  return job.run();
}

template Status relu<float>(Context&, const ReluParams&, const float*, float*);
template Status relu<double>(Context&, const ReluParams&, const double*, double*);

}  // namespace gradrt::vk

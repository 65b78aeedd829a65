// The kernel list: every kernel a backend implements, named once. Generated from it: the
// Kernel enum and kernel_info (the cost model, what `auto` may offload), the Backend
// interface and its Unimplemented defaults (backend.h/.cpp), the declarations and forwarders
// of the reference (reference/), cpu (simd/) and vulkan (vulkan/) backends, the cpu kernel table.
//
// GRADRT_KERNELS(X, T) calls X once per kernel, in this order:
//   X(stem, op, params, ns_per_work, offload, (arguments), (argument names))
// stem: the kernel's snake_case name: Backend::stem, ref::stem, simd's stem<T, Arch>, vk::stem.
// op: the ops.inc stem whose implementation runs the kernel (auto_backend(op) asks about it).
// params: the core/params.h struct it takes after the Exec.
// ns_per_work: one thread's time per unit of the work estimate the op hands run_kernel (conv:
//   multiply-adds; batch norm and pooling: elements), in ns, from bench/gradrt_bench at batch 1,
//   1 thread (Zen 5, avx512; slower machines only make kernels look smaller than they are).
//   Rough: it only keeps tiny kernels off the thread pool (threads_for_work). The relu and bias
//   rows: `gradrt run --repeat` at batch 1, 1 thread (Emerald Rapids, avx512).
// offload: whether `auto` may send it to a real GPU when the work is large. Only the GEMM-like
//   convolutions: tensors live in host memory, and for the bandwidth-bound kernels the copies to
//   and from a discrete GPU alone cost more than a cpu pass (vulkan/vulkan_backend.cpp).
// arguments: the tensors after (exec, params), T the element type (float or double). Math
//   names: x input, w filter, y output, dy out_backprop, dx/dw gradients; NHWC, filters HWIO.
#pragma once

#include "params.h"

#define GRADRT_KERNELS(X, T)                                                                         \
  X(conv2d, conv2d, ConvParams, 0.01, true, (const T* x, const T* w, T* y), (x, w, y))              \
  X(conv2d_backprop_input, conv2d_backprop_input, ConvParams, 0.01, true,                           \
    (const T* w, const T* dy, T* dx), (w, dy, dx))                                                  \
  X(conv2d_backprop_filter, conv2d_backprop_filter, ConvParams, 0.01, true,                         \
    (const T* x, const T* dy, T* dw), (x, dy, dw))                                                  \
  X(depthwise_conv2d_native, depthwise_conv2d_native, ConvParams, 0.02, false,                      \
    (const T* x, const T* w, T* y), (x, w, y))                                                      \
  X(depthwise_conv2d_native_backprop_input, depthwise_conv2d_native_backprop_input, ConvParams,     \
    0.02, false, (const T* w, const T* dy, T* dx), (w, dy, dx))                                     \
  X(depthwise_conv2d_native_backprop_filter, depthwise_conv2d_native_backprop_filter, ConvParams,   \
    0.02, false, (const T* x, const T* dy, T* dw), (x, dy, dw))                                     \
  /* Per-channel batch mean and biased variance (two-pass) of x [rows, channels]. */                \
  X(batch_norm_stats, fused_batch_norm, BatchNormParams, 0.2, false,                                \
    (const T* x, T* mean, T* variance), (x, mean, variance))                                        \
  /* y = (x - mean) * (rsqrt(variance + eps) * scale) + offset */                                   \
  X(batch_norm_apply, fused_batch_norm, BatchNormParams, 0.2, false,                                \
    (const T* x, const T* scale, const T* offset, const T* mean, const T* variance, T* y),          \
    (x, scale, offset, mean, variance, y))                                                          \
  /* TF's FusedBatchNormGrad math (ops.md 6.10), training or inference per params. */              \
  X(fused_batch_norm_grad, fused_batch_norm_grad, BatchNormParams, 0.2, false,                      \
    (const T* dy, const T* x, const T* scale, const T* mean, const T* variance, T* dx, T* dscale,  \
     T* doffset),                                                                                   \
    (dy, x, scale, mean, variance, dx, dscale, doffset))                                            \
  X(fractional_avg_pool, fractional_avg_pool, FracPoolParams, 0.5, false, (const T* x, T* y),      \
    (x, y))                                                                                         \
  X(fractional_avg_pool_grad, fractional_avg_pool_grad, FracPoolParams, 0.5, false,                 \
    (const T* dy, T* dx), (dy, dx))                                                                 \
  /* Relu / Relu6 (p.six): y = max(x, 0) (then min(., 6)), NaN kept. Work: elements. */             \
  X(relu, relu, ReluParams, 0.25, false, (const T* x, T* y), (x, y))                                \
  /* ReluGrad / Relu6Grad: dx = dy * (0 < x (< 6) ? 1 : 0), a product as TF's. */                  \
  X(relu_grad, relu_grad, ReluParams, 0.4, false, (const T* dy, const T* x, T* dx), (dy, x, dx))   \
  /* BiasAdd: y[r, c] = x[r, c] + bias[c] over [rows, channels]. */                                \
  X(bias_add, bias_add, BiasParams, 0.3, false, (const T* x, const T* bias, T* y), (x, bias, y))    \
  /* BiasAddGrad: dbias[c] = sum over rows of dy[r, c] (fixed-order partial sums). */              \
  X(bias_add_grad, bias_add_grad, BiasParams, 0.05, false, (const T* dy, T* dbias), (dy, dbias))  \
  /* Pooling (PoolParams): work = window cells visited. MaxPool: TF's CPU max (NaN never wins). */  \
  X(max_pool, max_pool, PoolParams, 0.3, false, (const T* x, T* y), (x, y))                          \
  /* MaxPoolGrad: each dy to its window's first maximum in x (TF's CPU argmax, params.h). */        \
  X(max_pool_grad, max_pool_grad, PoolParams, 0.3, false, (const T* x, const T* dy, T* dx),         \
    (x, dy, dx))                                                                                    \
  X(avg_pool, avg_pool, PoolParams, 0.3, false, (const T* x, T* y), (x, y))                          \
  X(avg_pool_grad, avg_pool_grad, PoolParams, 0.3, false, (const T* dy, T* dx), (dy, dx))

// Kernels a backend may also run on float16 storage (issue 22 item 3): the op's float16 tensors
// as IEEE binary16 bits (uint16_t), widened on load, computed and accumulated in float32, rounded
// once on store (the contract's half rule; the same rounding as core's widening path). Batch
// norm's float32 operands (TF's U: scale, mean, variance, dscale, doffset) stay float.
// GRADRT_F16_KERNELS(X) calls X(stem, params, (arguments), (argument names)); generated: the
// Backend methods `<stem>_f16` (default Unimplemented) and the vulkan forwarders. Core calls
// one only where Backend::f16_storage(kernel) says the backend runs it (op_context.h run_f16).
#define GRADRT_F16_KERNELS(X)                                                                       \
  X(conv2d_backprop_input, ConvParams, (const uint16_t* w, const uint16_t* dy, uint16_t* dx),       \
    (w, dy, dx))                                                                                    \
  X(conv2d_backprop_filter, ConvParams, (const uint16_t* x, const uint16_t* dy, uint16_t* dw),      \
    (x, dy, dw))                                                                                    \
  X(depthwise_conv2d_native_backprop_input, ConvParams,                                             \
    (const uint16_t* w, const uint16_t* dy, uint16_t* dx), (w, dy, dx))                             \
  X(depthwise_conv2d_native_backprop_filter, ConvParams,                                            \
    (const uint16_t* x, const uint16_t* dy, uint16_t* dw), (x, dy, dw))                             \
  X(fused_batch_norm_grad, BatchNormParams,                                                         \
    (const uint16_t* dy, const uint16_t* x, const float* scale, const float* mean,                  \
     const float* variance, uint16_t* dx, float* dscale, float* doffset),                           \
    (dy, x, scale, mean, variance, dx, dscale, doffset))

// (a, b, c) -> a, b, c: splices a row's parenthesised arguments into a parameter or call list.
#define GRADRT_UNPACK(...) __VA_ARGS__

namespace gradrt {

enum class Kernel {
#define GRADRT_KERNEL_ENUM(STEM, ...) STEM,
  GRADRT_KERNELS(GRADRT_KERNEL_ENUM, void)
#undef GRADRT_KERNEL_ENUM
};

struct KernelInfo {
  const char* stem;
  const char* op;  // ops.inc stem
  double ns_per_work;
  bool offload;
};

inline constexpr KernelInfo kKernelInfo[] = {
#define GRADRT_KERNEL_INFO(STEM, OP, P, NS, OFFLOAD, ARGS, NAMES) {#STEM, #OP, NS, OFFLOAD},
    GRADRT_KERNELS(GRADRT_KERNEL_INFO, void)
#undef GRADRT_KERNEL_INFO
};

inline constexpr int kNumKernels = static_cast<int>(sizeof(kKernelInfo) / sizeof(kKernelInfo[0]));

constexpr const KernelInfo& kernel_info(Kernel k) { return kKernelInfo[static_cast<int>(k)]; }

}  // namespace gradrt

// Helpers shared by the op files: launch geometry from the device limits, the int32 guard,
// the ConvPush fill, and the fixed-order partial-sum reduction.
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "../context.h"
#include "params.h"
#include "push_constants.h"
#include "status_macros.h"

namespace gradrt::vk {

// Shaders index with int32. Counts stay below 2^31 minus a margin so that a tile or a
// grid-stride step past the end cannot wrap.
constexpr int64_t kMaxIndex = (int64_t{1} << 31) - (int64_t{1} << 25);
// Unimplemented naming `kernel` when any count is negative or above kMaxIndex.
Status check_int32(const char* kernel, std::initializer_list<int64_t> counts);

// Implicit-GEMM tile shape (shaders/common/implicit_gemm.glsl), picked from the device limits
// and the size (rows x cols of C) of the problem; spec() is the specialisation-constant vector.
// pad: shared-memory row padding (implicit_gemm.glsl's PAD: other layout, same sums).
// blocked: each invocation owns TM x TN consecutive outputs (implicit_gemm.glsl's BLOCKED).
struct GemmTiles {
  uint32_t bm, bn, bk, tm, tn;
  uint32_t pad = 0, blocked = 0;
  uint32_t threads() const { return (bm / tm) * (bn / tn); }
  std::vector<uint32_t> spec() const { return {threads(), bm, bn, bk, tm, tn, pad, blocked}; }
};
GemmTiles gemm_tiles(const Context& ctx, int64_t rows, int64_t cols, size_t elem_bytes);
// Whether t fits the device: invocations, and shared memory (BK rows of BM + pad and BN + pad
// elements of elem_bytes, plus the BM + BK decoded ivec4 indices).
bool gemm_tiles_fit(const Context& ctx, const GemmTiles& t, size_t elem_bytes);

// Conv2DBackpropInput's GEMM variants (issue 22 item 3: candidates for a GPU run to pick from;
// vulkan/ops/conv2d_backprop_input.cpp says what each does). GRADRT_VULKAN_INPUT=<name> (read
// once per process) or set_input_variant (tests, vulkan_bench --input-variants) select one;
// automatic ("auto") is the default: a rule by shape from the H200 run of session 14 (resolved in
// conv2d_backprop_input.cpp). Every variant but split gives base's bits (same sums, same order).
enum class InputVariant { base, pad, fit, large, big, split, blocked, bigblocked, phase, automatic };
constexpr InputVariant kInputVariants[] = {InputVariant::base,    InputVariant::pad,        InputVariant::fit,
                                           InputVariant::large,   InputVariant::big,        InputVariant::split,
                                           InputVariant::blocked, InputVariant::bigblocked, InputVariant::phase,
                                           InputVariant::automatic};
const char* input_variant_name(InputVariant v);
bool parse_input_variant(const char* name, InputVariant* out);  // false: unknown name
InputVariant input_variant();
void set_input_variant(InputVariant v);
// The filter gradients' tiles in the default shader set (v5, session 11): their C (M x N: taps x
// channels, often small and not a multiple of 64, e.g. 144 x 24) is cut into equal tiles of 4x4
// per invocation that cover it with the least padding (144 x 24: one 144 x 24 tile of 216
// invocations instead of three 64 x 64 tiles that are 72% padding); K is split as before.
// Falls back to gemm_tiles() when no such tile has >= 32 invocations.
GemmTiles filter_gemm_tiles(const Context& ctx, int64_t rows, int64_t cols, size_t elem_bytes);

// float16 storage (kernels.h GRADRT_F16_KERNELS): the tensors' storage type T is float, double
// or uint16_t (binary16 bits); Compute<T> is what the shaders compute and accumulate in (float
// for uint16_t), also the element of every partial-sum buffer.
template <class T>
using Compute = std::conditional_t<std::is_same_v<T, uint16_t>, float, T>;
// Whether the `_f16` kernels run here: the device has storageBuffer16BitAccess, the shader set
// is the default (v5; the v1/v4 sets have no _f16 variants), and GRADRT_VULKAN_F16 is not 0
// (0: float16 tensors are widened on the host as before, for A/B runs). Read once per process.
bool f16_storage(const Context& ctx);

// Workgroup size for the one-invocation-per-element shaders.
uint32_t elementwise_threads(const Context& ctx);
// Shaders that reduce over lanes (shaders/common/lane_reduce.glsl): workgroups of cols x lanes
// invocations, lanes a power of two; spec() = {cols * lanes, cols, lanes}.
struct Lanes {
  uint32_t cols, lanes;
  std::vector<uint32_t> spec() const { return {cols * lanes, cols, lanes}; }
};
Lanes lanes(const Context& ctx);
// The vectorised (`_v4`) depthwise and batch-norm shaders read four channels per
// invocation as one 16-byte (float64: 32-byte) load. vec4_shaders(channels, M): whether they take
// a problem: channels a multiple of 4, depth multiplier 1, and not GRADRT_VULKAN_SHADERS=v1 (the
// scalar session-9 shaders, kept for A/B runs on a GPU; the tests run the sweeps both ways).
bool vec4_shaders(int64_t channels, int64_t depth_multiplier = 1);
// Which shader set GRADRT_VULKAN_SHADERS selects (read once per process): 1 = `v1`, the scalar
// session-9 shaders; 4 = `v4`, session 10's `_v4` ones where vec4_shaders() takes the shape; 5 = the
// default: v4 plus session 11's depthwise filter gradient `_v5` (its nine tap sums in registers) and
// the conv filter gradient's filter_gemm_tiles with shorter K splits (H100: 1.3-2.5x v4 on those
// ops, the same elsewhere; bench/results_gpu_h100.txt).
int shader_set();
// Lanes for `quads` columns of work (channel quads): cols the smallest power of two >= quads
// below 8 quads, else 8, 16 or 32, whichever leaves the fewest columns idle (ties: the wider);
// lanes the rest of the workgroup, so few channels get more row/position lanes.
Lanes quad_lanes(const Context& ctx, int64_t quads);
// The kernel of a shader with a _v4 form (four channels per invocation; the batch-norm statistics
// and normalisation): `v4` where vec4_shaders(channels) takes the count, else `scalar`, in
// workgroups of elementwise_threads() (specialisation {threads}).
struct ChannelKernel {
  const Kernel* k = nullptr;
  bool v4 = false;
  uint32_t threads = 0;
};
Status channel_kernel(Context& ctx, int64_t channels, const ShaderCode& scalar, const ShaderCode& v4,
                      ChannelKernel* out);
// How many splits a reduction of length k gets when `groups_per_split` workgroups of `lanes`
// lanes work on each: ~`target` workgroups in all, each lane summing at least 8 elements.
int64_t lane_splits(int64_t k, int64_t groups_per_split, const Lanes& l, int64_t target = 1024);
// ceil(items / per_group) clamped to [1, maxComputeWorkGroupCount[dim]]; the shaders loop
// (grid stride) over whatever the clamp leaves out.
uint32_t group_count(const Context& ctx, int64_t items, int64_t per_group, int dim);

// Fills the push block; Unimplemented when a size does not fit int32.
Status make_conv_push(const char* kernel, const ConvParams& p, ConvPush* out);

// Records result[i] = scale * sum_s partial[s * n + i] (shaders/sum_partials.comp); for double,
// a divisor > 0 divides the sum instead (exact mean), as the float64 reference does. T is the
// result's storage type: partial holds Compute<T> (uint16_t: float partials, float16 result).
template <class T>
Status sum_partials(Context& ctx, Job& job, int partial, int result, int64_t n, int64_t splits, float scale,
                    int64_t divisor = 0);

// Host memory a job uploads (In) or fills (Out).
struct In {
  const void* data;
  size_t bytes;
};
struct Out {
  void* data;
  size_t bytes;
};
// Records and runs the job most ops are: inputs a and b uploaded, kernel k bound to (a, b, out)
// and dispatched once with `push` on gx x gy x gz groups, out read back.
template <class Push>
Status run_one_dispatch(Context& ctx, const Kernel& k, const Push& push, In a, In b, Out out, uint32_t gx,
                        uint32_t gy = 1, uint32_t gz = 1) {
  Job job(ctx);
  int ba, bb, bout;
  GRADRT_RETURN_IF_ERROR(job.input(a.data, a.bytes, &ba));
  GRADRT_RETURN_IF_ERROR(job.input(b.data, b.bytes, &bb));
  GRADRT_RETURN_IF_ERROR(job.output(out.data, out.bytes, &bout));
  GRADRT_RETURN_IF_ERROR(job.dispatch(k, {ba, bb, bout}, push, gx, gy, gz));
  return job.run();
}

// The conv kernels that are one dispatch: the ConvPush of p (Unimplemented naming `kernel` when
// a size does not fit int32), then code with specialisation `spec` run as run_one_dispatch.
inline Status run_conv_dispatch(Context& ctx, const char* kernel, const ShaderCode& code,
                                const std::vector<uint32_t>& spec, const ConvParams& p, In a, In b, Out out,
                                uint32_t gx, uint32_t gy = 1, uint32_t gz = 1) {
  ConvPush push;
  GRADRT_RETURN_IF_ERROR(make_conv_push(kernel, p, &push));
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(code, spec, &k));
  return run_one_dispatch(ctx, *k, push, a, b, out, gx, gy, gz);
}

// The vec4 depthwise shaders (forward: 4 output columns, input gradient: 2 dx columns of 4
// channels per invocation): one dispatch on a grid of channel quads x positions, a position being
// (n, row, group of `cols` columns) of a `rows` x `width` image (the output's for the forward, dx's
// for the input gradient).
inline Status run_quad_dispatch(Context& ctx, const char* kernel, const ShaderCode& code, const ConvParams& p, In a,
                                In b, Out out, int64_t rows, int64_t width, int64_t cols) {
  const Lanes l = quad_lanes(ctx, p.in_c / 4);
  const int64_t positions = p.batch * rows * ((width + cols - 1) / cols);
  return run_conv_dispatch(ctx, kernel, code, l.spec(), p, a, b, out, group_count(ctx, p.in_c / 4, l.cols, 0),
                           group_count(ctx, positions, l.lanes, 1));
}

// Zeros in `bytes` of out: memset for host memory; a device tensor (resident.h) is filled on
// the device (in a recording sequence: at the start of its command buffer, before any dispatch).
Status zero_output(Context& ctx, void* out, size_t bytes);

// True when an output of n elements needs no dispatch: it is empty, or `empty_sum` (every
// element a sum of nothing) and it has been written as zeros (policy 3); *s says how that went.
template <class T>
bool answered_on_host(Context& ctx, T* out, int64_t n, bool empty_sum, Status* s) {
  *s = n > 0 && empty_sum ? zero_output(ctx, out, sizeof(T) * n) : Status::OK();
  return n == 0 || empty_sum;
}
// The conv GEMM gradients' case of it: out (n_out elements) sums products of two operands of
// n_a and n_b elements, so it is zeros when either is empty (or the params have no groups).
template <class T>
bool empty_conv_sum(Context& ctx, const ConvParams& p, T* out, int64_t n_out, int64_t n_a, int64_t n_b, Status* s) {
  return answered_on_host(ctx, out, n_out, p.groups <= 0 || n_a == 0 || n_b == 0, s);
}
// The same for an output known to be host memory (memset); ops that may get device tensors use
// the form above.
template <class T>
bool answered_on_host(T* out, int64_t n, bool empty_sum) {
  if (n > 0 && empty_sum) std::memset(out, 0, sizeof(T) * n);
  return n == 0 || empty_sum;
}

// How to split a reduction of length k into chunks: chunk is a multiple of `align`.
struct Split {
  int64_t splits, chunk;
};
Split split_reduction(int64_t k, int64_t wanted_splits, int64_t align);

// The filter gradients (conv and depthwise) reduce over k = (n, oy, ox) in chunks, each chunk
// writing its own partial dw. max_filter_splits: the most chunks the partial buffer allows for a
// dw of n_dw elements of elem_bytes each (64 MiB of partials, maxStorageBufferRange, int32 indexing).
int64_t max_filter_splits(const Context& ctx, int64_t n_dw, int64_t elem_bytes);
// Records and runs one filter gradient: x and dy in, dw (n_dw elements) out. Kernel k (bindings
// a, b, partials) runs with `push` on gx x gy x gz groups and writes push.splits partial dw's
// (straight into dw when there is one and T is float/double); sum_partials.comp then adds them in
// chunk order. T = uint16_t: float partials always, sum_partials' _f16 variant rounds them into dw.
// Also the split Conv2DBackpropInput (a = w, b = dy, out = dx).
template <class T>
Status run_split_reduction(Context& ctx, const Kernel& k, In a, In b, T* dw, int64_t n_dw, const ConvPush& push,
                           uint32_t gx, uint32_t gy, uint32_t gz);
// Workgroups of an M x N GEMM in tiles t, per group times groups.
inline int64_t gemm_tile_count(const GemmTiles& t, int64_t M, int64_t N, int64_t groups) {
  return ((M + t.bm - 1) / t.bm) * ((N + t.bn - 1) / t.bn) * groups;
}
// The K split of such a GEMM (`tiles` workgroups): enough chunks for ~1024 workgroups, each at
// least min_steps k-steps of t.bk; bounded by the partial buffer of n_out outputs (bytes each)
// and the z group count (chunks x groups).
Split gemm_k_split(const Context& ctx, const GemmTiles& t, int64_t tiles, int64_t K, int64_t min_steps,
                   int64_t n_out, size_t bytes, int64_t groups);

// The embedded SPIR-V of shaders/<stem>.comp for element type T: <stem>_spv (float32) or
// <stem>_f64_spv (compiled with -DGRADRT_F64; Context::kernel refuses it without shaderFloat64).
#define GRADRT_VK_SHADER(T, stem, bindings, Push)                                                       \
  (std::is_same_v<T, double>                                                                            \
       ? ::gradrt::vk::ShaderCode{#stem "_f64", stem##_f64_spv, sizeof(stem##_f64_spv), bindings,       \
                                  sizeof(Push), true}                                                   \
       : ::gradrt::vk::ShaderCode{#stem, stem##_spv, sizeof(stem##_spv), bindings, sizeof(Push), false})

// The float16-storage variant of shaders/<stem>.comp (<stem>_f16_spv, compiled with -DGRADRT_F16:
// 16-bit tensor buffers, float32 compute; Context::kernel refuses it without 16-bit storage).
#define GRADRT_VK_SHADER_F16(stem, bindings, Push) \
  (::gradrt::vk::ShaderCode{#stem "_f16", stem##_f16_spv, sizeof(stem##_f16_spv), bindings, sizeof(Push), false, true})
// A shader with all three variants, by the tensors' storage type T: float, double, or uint16_t
// (float16 storage: the _f16 variant).
#define GRADRT_VK_SHADER3(T, stem, bindings, Push)                                       \
  (std::is_same_v<T, uint16_t> ? GRADRT_VK_SHADER_F16(stem, bindings, Push)             \
                               : GRADRT_VK_SHADER(T, stem, bindings, Push))

}  // namespace gradrt::vk

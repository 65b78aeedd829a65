#include "common.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sum_partials.spv.h"
#include "sum_partials_f16.spv.h"
#include "sum_partials_f64.spv.h"
#include "status_macros.h"

namespace gradrt::vk {

Status check_int32(const char* kernel, std::initializer_list<int64_t> counts) {
  for (int64_t c : counts)
    if (c < 0 || c > kMaxIndex)
      return Status(Code::Unimplemented, std::string("vulkan: ") + kernel + ": a tensor of " + std::to_string(c) +
                                             " elements exceeds the backend's int32 indexing (use cpu)");
  return Status::OK();
}

// GRADRT_VULKAN_GEMM_TILES=wide|large|big forces that tile where it fits (benchmark A/B, and the
// tests run the large tile on small shapes); anything else: chosen by size.
static const char* forced_gemm_tiles() {
  static const std::string v = [] {
    const char* e = std::getenv("GRADRT_VULKAN_GEMM_TILES");
    return std::string(e ? e : "");
  }();
  return v.c_str();
}

bool gemm_tiles_fit(const Context& ctx, const GemmTiles& t, size_t elem_bytes) {
  const VkPhysicalDeviceLimits& l = ctx.limits();
  const uint32_t invocations = std::min(l.maxComputeWorkGroupInvocations, l.maxComputeWorkGroupSize[0]);
  return t.threads() <= invocations &&
         t.bk * (t.bm + t.bn + 2 * t.pad) * elem_bytes + (t.bm + t.bk) * 16 <= l.maxComputeSharedMemorySize;
}

GemmTiles gemm_tiles(const Context& ctx, int64_t rows, int64_t cols, size_t elem_bytes) {
  auto fits = [&](const GemmTiles& t) { return gemm_tiles_fit(ctx, t, elem_bytes); };
  const GemmTiles narrow{128, 16, 16, 8, 1}, wide{64, 64, 16, 4, 4}, large{128, 64, 16, 8, 4};
  // big: 128x128, 8x8 per invocation (64 multiply-adds per 16 shared loads, 256 invocations,
  // 18.3 KiB shared): a candidate for the batch-32 conv input gradient, forced only until a GPU
  // run shows it ahead of large (bench/gpu_step.sh step 3 runs both).
  const GemmTiles big{128, 128, 16, 8, 8};
  const std::string forced = forced_gemm_tiles();
  if (forced == "big" && fits(big)) return big;
  if (forced == "large" && fits(large)) return large;
  if (forced == "wide" && fits(wide)) return wide;
  if (cols <= 16 && fits(narrow)) return narrow;  // few output channels: tall tiles
  // Large float32 problems (>= 2^22 outputs: hundreds of 128-row tiles even on a big GPU): 8x4
  // outputs per invocation, 32 multiply-adds per 12 shared-memory loads instead of 16 per 8.
  if (elem_bytes == 4 && rows * cols >= (int64_t{1} << 22) && cols >= 48 && fits(large)) return large;
  if (fits(wide)) return wide;
  return {32, 32, 8, 4, 4};  // 64 invocations, < 5 KiB shared: within every device's minimums
}

GemmTiles filter_gemm_tiles(const Context& ctx, int64_t rows, int64_t cols, size_t elem_bytes) {
  // Only small C (the common filter gradients: at most 512 x 512); bigger ones have little padding.
  if (rows > 512 || cols > 512) return gemm_tiles(ctx, rows, cols, elem_bytes);
  const VkPhysicalDeviceLimits& l = ctx.limits();
  const int64_t invocations = std::min<int64_t>({256, l.maxComputeWorkGroupInvocations, l.maxComputeWorkGroupSize[0]});
  constexpr int64_t kT = 4, kBK = 16;  // 4x4 outputs per invocation, k-steps of 16
  auto round4 = [](int64_t v) { return (v + kT - 1) / kT * kT; };
  GemmTiles best{0, 0, 0, 0, 0};
  int64_t best_area = 0, best_tiles = 0;
  // mt x nt equal tiles, sides rounded up to 4 (at most 32 x 32 tilings tried: a few us); a tile
  // of bm x bn has bm*bn/16 invocations. Smallest padded area wins, then the fewest tiles (A
  // and B re-read less), among tiles of 32..`invocations` invocations that fit shared memory.
  for (int64_t mt = 1; mt <= 32; ++mt) {
    const int64_t bm = round4((rows + mt - 1) / mt);
    for (int64_t nt = 1; nt <= 32; ++nt) {
      const int64_t bn = round4((cols + nt - 1) / nt);
      const int64_t threads = (bm / kT) * (bn / kT);
      if (threads > invocations || threads < 32) continue;
      if (kBK * (bm + bn) * int64_t(elem_bytes) + (bm + kBK) * 16 > int64_t{l.maxComputeSharedMemorySize}) continue;
      const int64_t area = mt * bm * nt * bn, tiles = mt * nt;
      if (best.bm == 0 || area < best_area || (area == best_area && tiles < best_tiles)) {
        best = {uint32_t(bm), uint32_t(bn), uint32_t(kBK), uint32_t(kT), uint32_t(kT)};
        best_area = area, best_tiles = tiles;
      }
    }
  }
  return best.bm ? best : gemm_tiles(ctx, rows, cols, elem_bytes);
}

namespace {
constexpr const char* kInputVariantNames[] = {"base", "pad",   "fit",     "large",
                                                   "big",  "split", "blocked", "bigblocked", "phase", "auto"};
std::atomic<int>& input_variant_slot() {  // -1: not read from the environment yet
  static std::atomic<int> slot{-1};
  return slot;
}
}  // namespace

const char* input_variant_name(InputVariant v) { return kInputVariantNames[static_cast<int>(v)]; }

bool parse_input_variant(const char* name, InputVariant* out) {
  for (InputVariant v : kInputVariants)
    if (!std::strcmp(name, input_variant_name(v))) return *out = v, true;
  return false;
}

InputVariant input_variant() {
  std::atomic<int>& slot = input_variant_slot();
  int v = slot.load();
  if (v < 0) {  // unknown or unset GRADRT_VULKAN_INPUT: auto
    const char* e = std::getenv("GRADRT_VULKAN_INPUT");
    InputVariant parsed = InputVariant::automatic;
    if (e) parse_input_variant(e, &parsed);
    int expected = -1;
    slot.compare_exchange_strong(expected, static_cast<int>(parsed));
    v = slot.load();
  }
  return static_cast<InputVariant>(v);
}

void set_input_variant(InputVariant v) { input_variant_slot().store(static_cast<int>(v)); }

uint32_t elementwise_threads(const Context& ctx) {
  const VkPhysicalDeviceLimits& l = ctx.limits();
  return std::min<uint32_t>({256, l.maxComputeWorkGroupInvocations, l.maxComputeWorkGroupSize[0]});
}

Lanes lanes(const Context& ctx) {
  const uint32_t threads = elementwise_threads(ctx);  // >= 128 on every device (Vulkan's minimum)
  Lanes l{32, 1};
  while (l.cols * l.lanes * 2 <= threads) l.lanes *= 2;
  return l;
}

// GRADRT_VULKAN_SHADERS (read once per process): v1 -> 1, v4 -> 4, anything else -> 5.
int shader_set() {
  static const int set = [] {
    const char* e = std::getenv("GRADRT_VULKAN_SHADERS");
    const std::string v = e ? e : "";
    return v == "v1" ? 1 : v == "v4" ? 4 : 5;
  }();
  return set;
}

bool vec4_shaders(int64_t channels, int64_t depth_multiplier) {
  return shader_set() >= 4 && channels > 0 && channels % 4 == 0 && depth_multiplier == 1;
}

Status channel_kernel(Context& ctx, int64_t channels, const ShaderCode& scalar, const ShaderCode& v4,
                      ChannelKernel* out) {
  out->v4 = vec4_shaders(channels);
  out->threads = elementwise_threads(ctx);
  return ctx.kernel(out->v4 ? v4 : scalar, {out->threads}, &out->k);
}

Lanes quad_lanes(const Context& ctx, int64_t quads) {
  const uint32_t threads = elementwise_threads(ctx);  // a power of two in practice; >= 128
  Lanes l{1, 1};
  if (quads < 8) {
    while (l.cols < quads) l.cols *= 2;
  } else {  // 8, 16 or 32 columns: the fewest idle ones (144 channels = 36 quads: 8, not 32)
    auto idle = [&](uint32_t c) { return (quads + c - 1) / c * c - quads; };
    l.cols = 32;
    for (uint32_t c : {16u, 8u})
      if (idle(c) < idle(l.cols)) l.cols = c;
  }
  // lanes also bounded by maxComputeWorkGroupSize[1] (the 2-D shaders' local size y; >= 128)
  while (l.cols * l.lanes * 2 <= threads && l.lanes * 2 <= ctx.limits().maxComputeWorkGroupSize[1]) l.lanes *= 2;
  return l;
}

int64_t lane_splits(int64_t k, int64_t groups_per_split, const Lanes& l, int64_t target) {
  const int64_t by_groups = std::max<int64_t>(1, target / std::max<int64_t>(groups_per_split, 1));
  const int64_t by_length = std::max<int64_t>(1, k / (8 * int64_t{l.lanes}));
  return std::min(by_groups, by_length);
}

uint32_t group_count(const Context& ctx, int64_t items, int64_t per_group, int dim) {
  int64_t g = (items + per_group - 1) / per_group;
  g = std::clamp<int64_t>(g, 1, ctx.limits().maxComputeWorkGroupCount[dim]);
  return static_cast<uint32_t>(g);
}

Status make_conv_push(const char* kernel, const ConvParams& p, ConvPush* out) {
  GRADRT_RETURN_IF_ERROR(check_int32(kernel, {p.x_elements(), p.y_elements(), p.w_elements(), p.dw_w_elements(),
      p.stride_h, p.stride_w, p.dilation_h, p.dilation_w, p.pad_top, p.pad_left,
      p.filter_h * p.dilation_h, p.filter_w * p.dilation_w,
      p.out_h * p.stride_h, p.out_w * p.stride_w}));
  auto i32 = [](int64_t v) { return static_cast<int32_t>(v); };
  *out = ConvPush{i32(p.batch),  i32(p.in_h),        i32(p.in_w),       i32(p.in_c),       i32(p.out_h),
                  i32(p.out_w),  i32(p.out_c),       i32(p.filter_h),   i32(p.filter_w),   i32(p.filter_in_c),
                  i32(p.groups), i32(p.depth_multiplier), i32(p.stride_h), i32(p.stride_w), i32(p.dilation_h),
                  i32(p.dilation_w), i32(p.pad_top), i32(p.pad_left),   0,                 1};
  return Status::OK();
}

template <class T>
Status sum_partials(Context& ctx, Job& job, int partial, int result, int64_t n, int64_t splits, float scale,
                    int64_t divisor) {
  GRADRT_RETURN_IF_ERROR(check_int32("sum_partials", {n * splits, divisor}));
  const Lanes l = lanes(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(GRADRT_VK_SHADER3(T, sum_partials, 2, ReducePush), l.spec(), &k));
  ReducePush push{static_cast<int32_t>(n), static_cast<int32_t>(splits), scale, static_cast<int32_t>(divisor)};
  return job.dispatch(*k, {partial, result}, push, group_count(ctx, n, l.cols, 0));
}

template Status sum_partials<float>(Context&, Job&, int, int, int64_t, int64_t, float, int64_t);
template Status sum_partials<double>(Context&, Job&, int, int, int64_t, int64_t, float, int64_t);
template Status sum_partials<uint16_t>(Context&, Job&, int, int, int64_t, int64_t, float, int64_t);

bool f16_storage(const Context& ctx) {
  static const bool on = [] {
    const char* e = std::getenv("GRADRT_VULKAN_F16");
    return !(e && std::string(e) == "0");
  }();
  return on && shader_set() >= 5 && ctx.info().storage_16bit;
}

Status zero_output(Context& ctx, void* out, size_t bytes) {
  if (!ctx.residents().find(out)) {
    std::memset(out, 0, bytes);
    return Status::OK();
  }
  Job job(ctx);
  int id = 0;
  GRADRT_RETURN_IF_ERROR(job.output(out, bytes, &id));
  GRADRT_RETURN_IF_ERROR(job.zero(id));
  return job.run();
}

int64_t max_filter_splits(const Context& ctx, int64_t n_dw, int64_t elem_bytes) {
  const int64_t max_bytes = std::min<int64_t>(int64_t{64} << 20, ctx.limits().maxStorageBufferRange);
  return std::min(max_bytes / (n_dw * elem_bytes), kMaxIndex / n_dw);
}

template <class T>
Status run_split_reduction(Context& ctx, const Kernel& k, In a, In b, T* dw, int64_t n_dw, const ConvPush& push,
                           uint32_t gx, uint32_t gy, uint32_t gz) {
  const int64_t splits = push.splits;
  Job job(ctx);
  int bx, bdy, bdw, bpartial;
  GRADRT_RETURN_IF_ERROR(job.input(a.data, a.bytes, &bx));
  GRADRT_RETURN_IF_ERROR(job.input(b.data, b.bytes, &bdy));
  GRADRT_RETURN_IF_ERROR(job.output(dw, sizeof(T) * n_dw, &bdw));
  // One split of float/double: the kernel writes dw directly. float16 dw: float partials, rounded
  // into dw by sum_partials (one split: a plain conversion).
  const bool reduce = splits > 1 || std::is_same_v<T, uint16_t>;
  bpartial = bdw;
  if (reduce) GRADRT_RETURN_IF_ERROR(job.scratch(sizeof(Compute<T>) * n_dw * splits, &bpartial));
  GRADRT_RETURN_IF_ERROR(job.dispatch(k, {bx, bdy, bpartial}, push, gx, gy, gz));
  if (reduce) GRADRT_RETURN_IF_ERROR(sum_partials<T>(ctx, job, bpartial, bdw, n_dw, splits, 1.0f));
  return job.run();
}

template Status run_split_reduction<float>(Context&, const Kernel&, In, In, float*, int64_t, const ConvPush&, uint32_t,
                                          uint32_t, uint32_t);
template Status run_split_reduction<double>(Context&, const Kernel&, In, In, double*, int64_t, const ConvPush&,
                                           uint32_t, uint32_t, uint32_t);
template Status run_split_reduction<uint16_t>(Context&, const Kernel&, In, In, uint16_t*, int64_t, const ConvPush&,
                                             uint32_t, uint32_t, uint32_t);

Split gemm_k_split(const Context& ctx, const GemmTiles& t, int64_t tiles, int64_t K, int64_t min_steps,
                   int64_t n_out, size_t bytes, int64_t groups) {
  const int64_t bk = t.bk;
  int64_t wanted = std::min((1024 + tiles - 1) / tiles, (K + min_steps * bk - 1) / (min_steps * bk));
  wanted = std::min({wanted, max_filter_splits(ctx, n_out, static_cast<int64_t>(bytes)),
                     int64_t{ctx.limits().maxComputeWorkGroupCount[2]} / groups});
  return split_reduction(K, std::max<int64_t>(wanted, 1), bk);
}

Split split_reduction(int64_t k, int64_t wanted_splits, int64_t align) {
  if (k <= 0) return {1, align};
  int64_t splits = std::clamp<int64_t>(wanted_splits, 1, k);
  int64_t chunk = (k + splits - 1) / splits;
  chunk = (chunk + align - 1) / align * align;
  splits = (k + chunk - 1) / chunk;
  return {splits, chunk};
}

}  // namespace gradrt::vk

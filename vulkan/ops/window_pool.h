// What the four pooling op files (max_pool, max_pool_grad, avg_pool, avg_pool_grad) share: the
// window geometry of a PoolParams as the int32 table of shaders/common/window_pool.glsl (computed
// here with PoolParams' own int64 methods, so no shader forms window sums a hostile ksize or pad
// would overflow) and one dispatch over (inputs, table) -> out.
#pragma once

#include <initializer_list>
#include <vector>

#include "common.h"

namespace gradrt::vk {

inline std::vector<int32_t> window_geometry(const PoolParams& p) {
  std::vector<int32_t> t;
  t.reserve(2 * (p.out_h + p.out_w + p.in_h + p.in_w));
  for (int64_t oy = 0; oy < p.out_h; ++oy) t.insert(t.end(), {int32_t(p.row_begin(oy)), int32_t(p.row_end(oy))});
  for (int64_t ox = 0; ox < p.out_w; ++ox) t.insert(t.end(), {int32_t(p.col_begin(ox)), int32_t(p.col_end(ox))});
  for (int64_t iy = 0; iy < p.in_h; ++iy) t.insert(t.end(), {int32_t(p.out_row_begin(iy)), int32_t(p.out_row_end(iy))});
  for (int64_t ix = 0; ix < p.in_w; ++ix) t.insert(t.end(), {int32_t(p.out_col_begin(ix)), int32_t(p.out_col_end(ix))});
  return t;
}

// Uploads `inputs` and the geometry table, runs `code` (bindings: the inputs, the table, out) once
// per element of out (n_out elements of T), reads out back. Unimplemented naming `kernel` when a
// count does not fit the shaders' int32 indexing.
template <class T>
Status run_window_pool(Context& ctx, const char* kernel, const ShaderCode& code, const PoolParams& p,
                       std::initializer_list<In> inputs, T* out, int64_t n_out) {
  GRADRT_RETURN_IF_ERROR(check_int32(kernel, {p.x_elements(), p.y_elements(), 2 * (p.out_h + p.out_w + p.in_h + p.in_w)}));
  const std::vector<int32_t> geometry = window_geometry(p);
  const PoolPush push{int32_t(p.batch), int32_t(p.in_h), int32_t(p.in_w), int32_t(p.channels), int32_t(p.out_h),
                      int32_t(p.out_w)};
  const uint32_t threads = elementwise_threads(ctx);
  const Kernel* k = nullptr;
  GRADRT_RETURN_IF_ERROR(ctx.kernel(code, {threads}, &k));
  Job job(ctx);
  int ids[4] = {-1, -1, -1, -1}, n = 0;
  for (const In& in : inputs) GRADRT_RETURN_IF_ERROR(job.input(in.data, in.bytes, &ids[n++]));
  GRADRT_RETURN_IF_ERROR(job.input(geometry.data(), sizeof(int32_t) * geometry.size(), &ids[n++]));
  GRADRT_RETURN_IF_ERROR(job.output(out, sizeof(T) * n_out, &ids[n]));
  const uint32_t groups = group_count(ctx, n_out, threads, 0);
  GRADRT_RETURN_IF_ERROR(n == 2 ? job.dispatch(*k, {ids[0], ids[1], ids[2]}, push, groups)
                                : job.dispatch(*k, {ids[0], ids[1], ids[2], ids[3]}, push, groups));
  return job.run();
}

}  // namespace gradrt::vk

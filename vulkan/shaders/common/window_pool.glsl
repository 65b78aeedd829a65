// The window geometry of the pooling shaders (max_pool, max_pool_grad, avg_pool, avg_pool_grad),
// resolved on the host from core/params.h PoolParams (vulkan/ops/window_pool.h) into an int32 table
// `geo`, so that no shader forms oy * stride - pad + window (which a hostile ksize overflows):
//   [0, 2*out_h)                   real rows [begin, end) of output row oy's windows
//   [2*out_h, +2*out_w)            real columns [begin, end) of output column ox's windows
//   [R0 = 2*out_h + 2*out_w, +2*in_h)   output rows [begin, end) whose windows contain input row iy
//   [R0 + 2*in_h, +2*in_w)         output columns [begin, end) whose windows contain input column ix
// Needs the push block p (common/pool_push.glsl) and `geo` declared before inclusion.
int row_begin(int oy) { return geo[2 * oy]; }
int row_end(int oy) { return geo[2 * oy + 1]; }
int col_begin(int ox) { return geo[2 * p.out_h + 2 * ox]; }
int col_end(int ox) { return geo[2 * p.out_h + 2 * ox + 1]; }
int out_row_begin(int iy) { return geo[2 * p.out_h + 2 * p.out_w + 2 * iy]; }
int out_row_end(int iy) { return geo[2 * p.out_h + 2 * p.out_w + 2 * iy + 1]; }
int out_col_begin(int ix) { return geo[2 * p.out_h + 2 * p.out_w + 2 * p.in_h + 2 * ix]; }
int out_col_end(int ix) { return geo[2 * p.out_h + 2 * p.out_w + 2 * p.in_h + 2 * ix + 1]; }

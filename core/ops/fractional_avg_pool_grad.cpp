// FractionalAvgPoolGrad (ops.md §5.8-5.10 with policy 4: batch/depth of out_backprop must
// match the original, sequences long enough, non-decreasing, within [0, H] / [0, W]).
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

namespace {

Status check_sequence(OpContext& ctx, const std::vector<int64_t>& seq, int64_t out, int64_t size, bool overlapping,
                      const char* name, const char* tf_name, const char* word) {
  if (static_cast<int64_t>(seq.size()) <= out)
    return ctx.error("Given out_backprop shape, " + std::string(tf_name) + " must have at least " +
                     std::to_string(out + 1) + " elements, but got " + std::to_string(seq.size()));
  for (int64_t i = 0; i <= out; ++i) {
    if (seq[i] < 0)
      return ctx.error(std::string(word) + " sequence tensor values must not be negative, got " + std::to_string(seq[i]) +
                       " at " + name + "[" + std::to_string(i) + "]");
    if (seq[i] > size)
      return ctx.error(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(seq[i]) +
                       " is past the input size " + std::to_string(size));
    if (i > 0 && seq[i] < seq[i - 1])
      return ctx.error(std::string(name) + " must be non-decreasing, but " + name + "[" + std::to_string(i) + "] = " +
                       std::to_string(seq[i]) + " < " + std::to_string(seq[i - 1]));
    // A non-overlapping cell ends at seq[i] - 1: TF refuses the end -1 of a cell [0, 0) (its
    // "must not be negative" check runs on the clamped cell ends), where a later empty cell is skipped.
    if (i > 0 && !overlapping && seq[i] == 0)
      return ctx.error(std::string(word) + " sequence tensor values must not be negative: cell " + std::to_string(i - 1) +
                       " ends at " + name + "[" + std::to_string(i) + "] - 1 = -1");
  }
  return Status::OK();
}

}  // namespace

Status run_fractional_avg_pool_grad(OpContext& ctx) {
  bool overlapping;
  GRADRT_RETURN_IF_ERROR(ctx.attrs().boolean("overlapping", &overlapping, false));
  GRADRT_RETURN_IF_ERROR(ctx.attrs().check_unknown());
  const TensorView *shape_t, *dy, *row_t, *col_t;
  GRADRT_RETURN_IF_ERROR(read_inputs(ctx, &shape_t, &dy, &row_t, &col_t));
  GRADRT_RETURN_IF_ERROR(ctx.resolve_dtype(*dy, "out_backprop", {DType::float32, DType::float64, DType::int32, DType::int64}));
  std::vector<int64_t> orig, rows, cols;
  GRADRT_RETURN_IF_ERROR(ctx.int_vector(*shape_t, "orig_input_tensor_shape", &orig));
  if (orig.size() != 4) return ctx.error("original input tensor shape must be 1-dimensional and 4 elements");
  if (dy->shape.size() != 4) return ctx.error("out_backprop must be 4-dimensional, got shape " + shape_string(dy->shape));
  for (int64_t d : dy->shape)
    if (d <= 0) return ctx.error("out_backprop must be positive for all dimension, got: " + shape_string(dy->shape));
  GRADRT_RETURN_IF_ERROR(ctx.int_vector(*row_t, "row_pooling_sequence", &rows));
  GRADRT_RETURN_IF_ERROR(ctx.int_vector(*col_t, "col_pooling_sequence", &cols));
  for (int64_t d : orig)
    if (d < 0) return ctx.error("Expected a non-negative size, got " + std::to_string(d) + " in orig_input_tensor_shape");
  int64_t n;
  GRADRT_RETURN_IF_ERROR(checked_num_elements(orig, ctx.op() + ": orig_input_tensor_shape", &n));
  const char* dim_names[4] = {"Batch", "Rows", "Columns", "Depth"};
  for (int i = 0; i < 4; ++i)
    if (orig[i] == 0) return ctx.error(std::string(dim_names[i]) + " dimension of input must not be 0");
  if (dy->shape[0] != orig[0] || dy->shape[3] != orig[3])
    return ctx.error("out_backprop batch and depth must equal the original input's: out_backprop " +
                     shape_string(dy->shape) + " vs orig_input_tensor_shape " + shape_string(orig));
  if (dy->shape[1] > orig[1] || dy->shape[2] > orig[2])
    return ctx.error("out_backprop rows and cols must not exceed the original input's: " + shape_string(dy->shape) +
                     " vs " + shape_string(orig));
  GRADRT_RETURN_IF_ERROR(check_sequence(ctx, rows, dy->shape[1], orig[1], overlapping, "row_pooling_sequence", "row_seq_tensor", "Row"));
  GRADRT_RETURN_IF_ERROR(check_sequence(ctx, cols, dy->shape[2], orig[2], overlapping, "col_pooling_sequence", "col_seq_tensor", "Column"));

  Tensor* dx;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), orig, &dx));
  FracPoolParams p;
  p.batch = orig[0];
  p.in_h = orig[1];
  p.in_w = orig[2];
  p.channels = orig[3];
  p.out_h = dy->shape[1];
  p.out_w = dy->shape[2];
  p.overlapping = overlapping;
  p.row_seq = rows.data();
  p.col_seq = cols.data();
  const int64_t dy_n = p.batch * p.out_h * p.out_w * p.channels;
  switch (ctx.dtype()) {
    case DType::int32: return run_integer_pool<int32_t>(ctx, p, *dy, dx, true);
    case DType::int64: return run_integer_pool<int64_t>(ctx, p, *dy, dx, true);
    default: break;
  }
  return with_compute_type(ctx, [&](auto t) {
    using T = decltype(t);
    Scratch<T> sdy, sdx;
    const T* g = ctx.load<T>(*dy, dy_n, &sdy);
    T* out = ctx.output_buffer<T>(dx, &sdx);
    Status st = ctx.run_kernel(Kernel::fractional_avg_pool_grad, dx->num_elements(), &p,
                               [&](Backend* be) { return be->fractional_avg_pool_grad(ctx.exec(), p, g, out); });
    if (st.ok()) ctx.store<T>(out, dx);
    return st;
  });
}

}  // namespace gradrt

// FractionalAvgPool (ops.md §5.1-5.7): NHWC, pooling sequences from TF's Philox stream.
#include <cmath>
#include <random>

#include "../philox.h"
#include "ops.h"
#include "status_macros.h"

namespace gradrt {

namespace {

uint64_t random_seed() {
  std::random_device rd;
  return (uint64_t{rd()} << 32) ^ rd();
}

// Pools in T: float types through the backend, integer types with the reference
// templates (TF's integer semantics: sum in T, truncating divide).
template <class T>
Status pool(OpContext& ctx, const FracPoolParams& p, const TensorView& value, Tensor* y) {
  Scratch<T> sx, sy;
  const T* x = ctx.load<T>(value, p.batch * p.in_h * p.in_w * p.channels, &sx);
  T* out = ctx.output_buffer<T>(y, &sy);
  Status s = ctx.run_kernel(Kernel::fractional_avg_pool, y->num_elements(), &p,
                            [&](Backend* be) { return be->fractional_avg_pool(ctx.exec(), p, x, out); });
  if (s.ok()) ctx.store<T>(out, y);
  return s;
}

}  // namespace

Status run_fractional_avg_pool(OpContext& ctx) {
  AttrReader& a = ctx.attrs();
  std::vector<double> ratio;
  bool pseudo_random, overlapping, deterministic;
  int64_t seed, seed2;
  GRADRT_RETURN_IF_ERROR(a.float_list("pooling_ratio", &ratio));
  GRADRT_RETURN_IF_ERROR(a.boolean("pseudo_random", &pseudo_random, false));
  GRADRT_RETURN_IF_ERROR(a.boolean("overlapping", &overlapping, false));
  GRADRT_RETURN_IF_ERROR(a.boolean("deterministic", &deterministic, false));
  GRADRT_RETURN_IF_ERROR(a.integer("seed", &seed, 0));
  GRADRT_RETURN_IF_ERROR(a.integer("seed2", &seed2, 0));
  GRADRT_RETURN_IF_ERROR(a.check_unknown());
  if (ratio.size() != 4) return ctx.error("pooling_ratio field must specify 4 dimensions, got " + std::to_string(ratio.size()));
  for (double r : ratio)
    if (!(r >= 1.0)) return ctx.error("pooling_ratio cannot be smaller than 1, got: " + std::to_string(r));
  if (ratio[0] != 1.0 || ratio[3] != 1.0)
    return ctx.unimplemented("Fractional average pooling is not yet supported on the batch nor channel dimension.");
  if (!deterministic && (seed != 0 || seed2 != 0))
    return ctx.error("Both seed and seed2 should be 0 if deterministic is false.");

  const TensorView* value;
  GRADRT_RETURN_IF_ERROR(ctx.input("value", &value));
  GRADRT_RETURN_IF_ERROR(ctx.resolve_dtype(*value, "value", {DType::float32, DType::float64, DType::int32, DType::int64}));
  if (value->shape.size() != 4) return ctx.error("tensor_in must be 4-dimensional, got shape " + shape_string(value->shape));
  // ops.md §5.2: out = floor(float(in) / float(ratio)), all in single precision as TF does.
  int64_t out_dims[4];
  for (int i = 0; i < 4; ++i) {
    const float in = static_cast<float>(value->shape[i]), r = static_cast<float>(ratio[i]);
    if (in < r)
      return ctx.error("Pooling ratio is higher than input dimension size for dimension " + std::to_string(i) +
                       ". Input dim size: " + std::to_string(value->shape[i]) + " pooling ratio: " + std::to_string(ratio[i]));
    out_dims[i] = static_cast<int64_t>(std::floor(in / r));
  }
  out_dims[0] = value->shape[0];  // ratio 1: exact, whatever float rounding would say
  out_dims[3] = value->shape[3];

  // Rows first, then columns, from one generator (ops.md §5.4). deterministic with zero
  // seeds (TF: drawn once per kernel instance) and non-deterministic draw fresh seeds.
  if (seed == 0 && seed2 == 0) {
    seed = static_cast<int64_t>(random_seed());
    seed2 = static_cast<int64_t>(random_seed());
  }
  Philox gen(static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2));
  std::vector<int64_t> rows = pooling_sequence(value->shape[1], out_dims[1], &gen, pseudo_random);
  std::vector<int64_t> cols = pooling_sequence(value->shape[2], out_dims[2], &gen, pseudo_random);

  Tensor *y, *row_t, *col_t;
  GRADRT_RETURN_IF_ERROR(ctx.add_output("output", ctx.dtype(), {out_dims[0], out_dims[1], out_dims[2], out_dims[3]}, &y));
  GRADRT_RETURN_IF_ERROR(ctx.add_output("row_pooling_sequence", DType::int64, {out_dims[1] + 1}, &row_t));
  GRADRT_RETURN_IF_ERROR(ctx.add_output("col_pooling_sequence", DType::int64, {out_dims[2] + 1}, &col_t));
  // A plan runs the whole op each time: fresh random sequences per run, as TF's kernel.
  int64_t* row_out = ctx.output_data<int64_t>(row_t);
  int64_t* col_out = ctx.output_data<int64_t>(col_t);
  GRADRT_RETURN_IF_ERROR(ctx.refused());  // (preparing: no data; the plan runs the whole op)
  std::copy(rows.begin(), rows.end(), row_out);
  std::copy(cols.begin(), cols.end(), col_out);

  FracPoolParams p;
  p.batch = value->shape[0];
  p.in_h = value->shape[1];
  p.in_w = value->shape[2];
  p.channels = value->shape[3];
  p.out_h = out_dims[1];
  p.out_w = out_dims[2];
  p.overlapping = overlapping;
  p.row_seq = rows.data();
  p.col_seq = cols.data();
  switch (ctx.dtype()) {
    case DType::int32: return run_integer_pool<int32_t>(ctx, p, *value, y, false);
    case DType::int64: return run_integer_pool<int64_t>(ctx, p, *value, y, false);
    case DType::float64: return pool<double>(ctx, p, *value, y);
    default: return pool<float>(ctx, p, *value, y);
  }
}

}  // namespace gradrt

#include "ops.h"

namespace gradrt {

Status read_sizes(OpContext& ctx, const TensorView& t, const char* name, std::vector<int64_t>* out) {
  Status s = ctx.int_vector(t, name, out);
  if (!s.ok()) return s;
  for (size_t i = 0; i < out->size(); ++i)
    if ((*out)[i] < 0)
      return ctx.error("Dimension " + std::to_string(i) + " of " + name + " must be >= 0, got " +
                       std::to_string((*out)[i]));
  int64_t n;
  return checked_num_elements(*out, ctx.op() + ": " + name, &n);
}

}  // namespace gradrt

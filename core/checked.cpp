#include "checked.h"

namespace gradrt {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Status checked_num_elements(const std::vector<int64_t>& shape, const std::string& what, int64_t* out) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0)
      return Status(Code::InvalidArgument, what + ": dimension " + std::to_string(i) + " must be >= 0, got " +
                                               std::to_string(shape[i]) + " in shape " + shape_string(shape));
    if (mul_overflows(n, shape[i], &n))
      return Status(Code::InvalidArgument,
                    what + ": number of elements of shape " + shape_string(shape) + " overflows int64");
  }
  // A zero dim makes the product 0 even if later dims would overflow: still refuse those.
  if (n == 0) {
    int64_t m = 1;
    for (int64_t d : shape) {
      if (d == 0) continue;
      if (mul_overflows(m, d, &m))
        return Status(Code::InvalidArgument,
                      what + ": number of elements of shape " + shape_string(shape) + " overflows int64");
    }
  }
  *out = n;
  return Status::OK();
}

}  // namespace gradrt

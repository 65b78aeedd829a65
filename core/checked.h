// Checked 64-bit size arithmetic: every size gradrt computes from user input goes through
// these before anything is allocated or indexed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"

namespace gradrt {

inline bool mul_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }
inline bool add_overflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }

std::string shape_string(const std::vector<int64_t>& shape);  // "[1, 2, 3]"

// Product of dims; InvalidArgument naming `what` for a negative dim or int64 overflow.
Status checked_num_elements(const std::vector<int64_t>& shape, const std::string& what, int64_t* out);

}  // namespace gradrt

// The op table's lookup by TF name, for run_op and the typed C++ calls (api.cpp).
#pragma once

#include <string_view>

#include "gradrt/gradrt.h"

namespace gradrt {

// The op's entry of ops(), or nullptr for an unknown name.
const OpInfo* find_op(std::string_view name);

}  // namespace gradrt

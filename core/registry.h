// The op table's lookup by TF name, for run_op and the typed C++ calls (api.cpp).
#pragma once

#include <string_view>

#include "gradrt/gradrt.h"

namespace gradrt {

class OpContext;
using OpFn = Status (*)(OpContext&);

// The op's entry of ops(), or nullptr for an unknown name.
const OpInfo* find_op(std::string_view name);
// The implementation (core/ops/<stem>.cpp) of an op that find_op gave.
OpFn op_function(const OpInfo& info);
// InvalidArgument for an input name the op does not have.
Status check_input_names(const OpInfo& info, const Inputs& inputs);

}  // namespace gradrt

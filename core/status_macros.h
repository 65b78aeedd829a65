// Core-internal status helpers (not part of the public header).
#pragma once

#include "gradrt/gradrt.h"

// Evaluates `expr` (a Status) once and returns it from the enclosing function unless OK.
#define GRADRT_RETURN_IF_ERROR(expr)                    \
  do {                                                  \
    ::gradrt::Status gradrt_status_ = (expr);           \
    if (!gradrt_status_.ok()) return gradrt_status_;    \
  } while (0)

// Which backend runs a kernel: the one rule behind backend=auto (OpContext::run_kernel and
// the `auto_backend` query share it) and the checks on a backend named by the caller.
#pragma once

#include <cstdint>
#include <string>

#include "backend.h"

namespace gradrt {

// backend=auto: the first available device backend that prefers this kernel at this size
// (work: run_kernel's estimate), else cpu.
Backend* auto_backend_for(const char* stem, int64_t work);

// The backend for the name in RunOptions::backend ("auto" applies auto_backend_for):
// NotFound for an unknown name, Unavailable when it cannot run here.
Status backend_for(const std::string& name, const char* stem, int64_t work, Backend** out);

}  // namespace gradrt

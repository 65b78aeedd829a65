// Which backend runs a kernel: backend=auto (auto_backend_for in backend.h, the one rule the
// `auto_backend` query shares) or a backend named by the caller, with its checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "backend.h"

namespace gradrt {

// The backend for the name in RunOptions::backend. "auto": auto_backend_for(kernel, work),
// cpu when no kernel runs (an empty result). NotFound for an unknown name, Unavailable when
// the backend cannot run here.
Status backend_for(const std::string& name, std::optional<Kernel> kernel, int64_t work, Backend** out);

}  // namespace gradrt

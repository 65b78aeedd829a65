#include "gradrt/gradrt.h"

namespace gradrt {

#ifndef GRADRT_VERSION
#define GRADRT_VERSION "0.0.0"
#endif

const char* version() { return GRADRT_VERSION; }

const char* code_name(Code code) {
  switch (code) {
    case Code::OK: return "OK";
    case Code::InvalidArgument: return "InvalidArgument";
    case Code::ResourceExhausted: return "ResourceExhausted";
    case Code::Unimplemented: return "Unimplemented";
    case Code::NotFound: return "NotFound";
    case Code::Unavailable: return "Unavailable";
    case Code::Internal: return "Internal";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return std::string(code_name(code_)) + ": " + message_;
}

}  // namespace gradrt

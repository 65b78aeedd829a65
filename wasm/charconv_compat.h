// Force-included into core for the Emscripten build only (wasm/CMakeLists.txt).
// Emscripten 3.1.6 ships libc++ 13, which has no floating-point std::from_chars /
// std::to_chars (a double argument then binds to the deleted bool overloads). These
// exact-match overloads fill the gap with strtod / shortest round-trip "%.*g".
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 14000
namespace std {

inline from_chars_result from_chars(const char* first, const char* last, double& value,
                                    chars_format = chars_format::general) {
  char buf[128];
  size_t n = static_cast<size_t>(last - first);
  // from_chars takes no leading space, '+', hex, inf or nan; strtod would.
  if (n == 0 || n >= sizeof(buf) || !(first[0] == '-' || (first[0] >= '0' && first[0] <= '9')))
    return {first, errc::invalid_argument};
  for (size_t i = 0; i < n; ++i) {
    char c = first[i];
    if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E')) {
      n = i;
      break;
    }
  }
  memcpy(buf, first, n);
  buf[n] = '\0';
  errno = 0;
  char* end = nullptr;
  double d = strtod(buf, &end);
  if (end == buf) return {first, errc::invalid_argument};
  const char* ptr = first + (end - buf);
  if (errno == ERANGE && (d == 0 || d > 1e308 || d < -1e308)) return {ptr, errc::result_out_of_range};
  value = d;
  return {ptr, errc{}};
}

inline to_chars_result to_chars(char* first, char* last, double value) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (strtod(buf, nullptr) == value) break;
  }
  size_t n = strlen(buf);
  if (n > static_cast<size_t>(last - first)) return {last, errc::value_too_large};
  memcpy(first, buf, n);
  return {first + n, errc{}};
}

}  // namespace std
#endif

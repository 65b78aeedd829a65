// dlopen + dlsym of LiteRT's C API (see litert_c.h).
#include "litert_c.h"

#include <dlfcn.h>

#include <map>
#include <memory>
#include <mutex>

namespace gradrt::litert {

#define GRADRT_LITERT_NAME(name, ret, params) #name,
const char* const kApiNames[] = {GRADRT_LITERT_API_FUNCTIONS(GRADRT_LITERT_NAME)};
#undef GRADRT_LITERT_NAME
const size_t kNumApiNames = sizeof(kApiNames) / sizeof(kApiNames[0]);

Status load_api(const char* library, const Api** out) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<Api>> loaded;  // never unloaded: kernels may outlive users
  const std::string path = (library && *library) ? library : "libLiteRt.so";
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) {
    *out = it->second.get();
    return Status::OK();
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return Status(Code::Unavailable, "LiteRT library '" + path + "' cannot be opened: " + (why ? why : "unknown"));
  }
  auto api = std::make_unique<Api>();
  std::string missing;
#define GRADRT_LITERT_RESOLVE(name, ret, params)                                 \
  api->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));            \
  if (!api->name) missing += std::string(missing.empty() ? "" : ", ") + #name;
  GRADRT_LITERT_API_FUNCTIONS(GRADRT_LITERT_RESOLVE)
#undef GRADRT_LITERT_RESOLVE
  if (!missing.empty()) {
    dlclose(handle);
    return Status(Code::Unavailable, "LiteRT library '" + path + "' does not export " + missing +
                                         " (gradrt is built for ai-edge-litert==2.3.0)");
  }
  *out = api.get();
  loaded[path] = std::move(api);
  return Status::OK();
}

}  // namespace gradrt::litert

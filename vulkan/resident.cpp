#include "resident.h"

#include <memory>
#include <string>

namespace gradrt::vk {

Residents::~Residents() {
  for (const void* key : live_) {
    Resident* r = static_cast<Resident*>(const_cast<void*>(key));
    pool_.release(&r->buffer);
    delete r;
  }
}

Status Residents::create(size_t bytes, void** key) {
  auto r = std::make_unique<Resident>();
  r->bytes = bytes;
  Status s = pool_.acquire(bytes, false, &r->buffer);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(mutex_);
  *key = r.get();
  live_.insert(r.release());
  return Status::OK();
}

void Residents::destroy(void* key) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!live_.erase(key)) return;
  }
  Resident* r = static_cast<Resident*>(key);
  pool_.release(&r->buffer);
  delete r;
}

const Resident* Residents::find(const void* key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.count(key) ? static_cast<const Resident*>(key) : nullptr;
}

}  // namespace gradrt::vk

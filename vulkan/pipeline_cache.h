// The pipeline cache and its file on disk: the driver's blob behind our header. A file whose
// header does not match this device and driver, or whose checksum fails, is ignored (drivers
// are not robust to corrupt blobs); a cache that cannot be read or written is never an error.
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "device.h"

namespace gradrt::vk {

class PipelineCache : NoCopy {
 public:
  // cache_dir: "" -> $XDG_CACHE_HOME/gradrt or $HOME/.cache/gradrt; "-" none (memory only).
  // Reads the file when there is a valid one.
  PipelineCache(Device& device, const std::string& cache_dir);
  ~PipelineCache();

  VkPipelineCache handle() const { return cache_; }  // may be null: pipelines work without
  const std::string& path() const { return path_; }  // "" when none
  // A new pipeline went into the cache: the next save() writes the file.
  void mark_dirty() { dirty_ = true; }
  // Writes the file if new pipelines were made (atomic: temp file + rename).
  void save();

 private:
  void load();

  Device& device_;
  std::string path_;
  VkPipelineCache cache_ = VK_NULL_HANDLE;
  std::atomic<bool> dirty_{false};
  std::mutex save_mutex_;
};

}  // namespace gradrt::vk

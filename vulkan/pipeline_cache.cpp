#include "pipeline_cache.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <unistd.h>

namespace gradrt::vk {
namespace {

// The file: this header, then data_size bytes of vkGetPipelineCacheData.
struct CacheHeader {
  char magic[8];
  uint32_t header_version;
  uint32_t vendor_id;
  uint32_t device_id;
  uint32_t driver_version;
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE];
  uint8_t device_uuid[VK_UUID_SIZE];
  uint64_t data_size;
  uint64_t checksum;  // FNV-1a 64 of the data
};
constexpr char kCacheMagic[8] = {'G', 'R', 'D', 'V', 'K', 'P', 'C', '1'};

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

CacheHeader make_header(const DeviceInfo& d, uint64_t size, uint64_t checksum) {
  CacheHeader h{};
  std::memcpy(h.magic, kCacheMagic, sizeof(kCacheMagic));
  h.header_version = 1;
  h.vendor_id = d.props.vendorID;
  h.device_id = d.props.deviceID;
  h.driver_version = d.props.driverVersion;
  std::memcpy(h.pipeline_cache_uuid, d.props.pipelineCacheUUID, VK_UUID_SIZE);
  std::memcpy(h.device_uuid, d.device_uuid, VK_UUID_SIZE);
  h.data_size = size;
  h.checksum = checksum;
  return h;
}

}  // namespace

PipelineCache::PipelineCache(Device& device, const std::string& cache_dir) : device_(device) {
  std::string dir = cache_dir;
  if (dir.empty()) {
    if (!env("XDG_CACHE_HOME").empty()) dir = env("XDG_CACHE_HOME") + "/gradrt";
    else if (!env("HOME").empty()) dir = env("HOME") + "/.cache/gradrt";
  }
  if (!dir.empty() && dir != "-") {
    const VkPhysicalDeviceProperties& props = device_.info().props;
    char name[96];
    std::snprintf(name, sizeof(name), "/vulkan_pipelines_%04x_%04x.bin", props.vendorID, props.deviceID);
    path_ = dir + name;
  }
  load();
}

PipelineCache::~PipelineCache() {
  if (cache_) device_.fns().vkDestroyPipelineCache(device_.handle(), cache_, nullptr);
}

void PipelineCache::load() {
  std::vector<uint8_t> blob;
  if (!path_.empty()) {
    std::ifstream in(path_, std::ios::binary);
    CacheHeader h{};
    if (in && in.read(reinterpret_cast<char*>(&h), sizeof(h))) {
      CacheHeader want = make_header(device_.info(), h.data_size, h.checksum);
      bool match = std::memcmp(&h, &want, sizeof(h)) == 0 && h.data_size < (1ull << 30);
      if (match) {
        blob.resize(h.data_size);
        if (!in.read(reinterpret_cast<char*>(blob.data()), static_cast<std::streamsize>(blob.size())) ||
            fnv1a(blob.data(), blob.size()) != h.checksum)
          blob.clear();  // truncated or corrupt: start empty
      }
    }
  }
  const Fns& f = device_.fns();
  VkPipelineCacheCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  pci.initialDataSize = blob.size();
  pci.pInitialData = blob.empty() ? nullptr : blob.data();
  if (f.vkCreatePipelineCache(device_.handle(), &pci, nullptr, &cache_) != VK_SUCCESS) {
    pci.initialDataSize = 0;
    pci.pInitialData = nullptr;
    if (f.vkCreatePipelineCache(device_.handle(), &pci, nullptr, &cache_) != VK_SUCCESS)
      cache_ = VK_NULL_HANDLE;  // work without one
  }
}

void PipelineCache::save() {
  if (!dirty_ || path_.empty() || cache_ == VK_NULL_HANDLE) return;
  std::lock_guard<std::mutex> lock(save_mutex_);
  if (!dirty_.exchange(false)) return;  // another thread just wrote it
  const Fns& f = device_.fns();
  size_t size = 0;
  if (f.vkGetPipelineCacheData(device_.handle(), cache_, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::vector<uint8_t> blob(size);
  if (f.vkGetPipelineCacheData(device_.handle(), cache_, &size, blob.data()) != VK_SUCCESS) return;
  blob.resize(size);
  std::error_code ec;
  std::filesystem::path path(path_);
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec) return;
  // Write a private temp file, then rename over the old one: readers see old or new, never half.
  // (Threads of one process take turns through save_mutex_; the pid keeps processes apart.)
  std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    CacheHeader h = make_header(device_.info(), blob.size(), fnv1a(blob.data(), blob.size()));
    out.write(reinterpret_cast<const char*>(&h), sizeof(h));
    out.write(reinterpret_cast<const char*>(blob.data()), static_cast<std::streamsize>(blob.size()));
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return;
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace gradrt::vk

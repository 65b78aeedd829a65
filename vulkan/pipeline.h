// Compute pipelines: a shader (SPIR-V embedded at build time) specialised with constant_id 0 =
// local_size_x and constant_id 1.. = the shader's own constants (tile sizes), made once per
// (shader, constants) and kept for the life of the context. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device.h"
#include "pipeline_cache.h"

namespace gradrt::vk {

// SPIR-V embedded at build time (generated header per shader) plus its interface.
struct ShaderCode {
  const char* name;
  const uint32_t* words;
  size_t bytes;
  uint32_t bindings;    // storage buffers at set 0, bindings 0..n-1
  uint32_t push_size;   // bytes of the push-constant block (sizeof its C++ struct)
  bool f64;             // the float64 variant: needs shaderFloat64
  bool f16 = false;     // the float16-storage variant: needs storageBuffer16BitAccess
};

struct Kernel {
  std::string key;
  uint32_t bindings = 0;
  uint32_t push_size = 0;
  uint32_t local_size = 0;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

class Pipelines : NoCopy {
 public:
  Pipelines(Device& device, PipelineCache& cache) : device_(device), cache_(cache) {}
  ~Pipelines();

  // Creates (or returns the one made before) the pipeline for code + specialisation constants.
  // spec[0] is the workgroup size (local_size_x_id = 0); checked against the device limits.
  // *out lives as long as this object.
  Status get(const ShaderCode& code, const std::vector<uint32_t>& spec, const Kernel** out);

 private:
  Status create(const ShaderCode& code, const std::vector<uint32_t>& spec, Kernel* k);
  void destroy(Kernel* k);

  Device& device_;
  PipelineCache& cache_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace gradrt::vk

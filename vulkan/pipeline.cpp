#include "pipeline.h"

namespace gradrt::vk {

Pipelines::~Pipelines() {
  for (auto& [key, k] : kernels_) destroy(k.get());
}

void Pipelines::destroy(Kernel* k) {
  const Fns& f = device_.fns();
  VkDevice dev = device_.handle();
  if (k->pipeline) f.vkDestroyPipeline(dev, k->pipeline, nullptr);
  if (k->layout) f.vkDestroyPipelineLayout(dev, k->layout, nullptr);
  if (k->set_layout) f.vkDestroyDescriptorSetLayout(dev, k->set_layout, nullptr);
  k->pipeline = VK_NULL_HANDLE;
  k->layout = VK_NULL_HANDLE;
  k->set_layout = VK_NULL_HANDLE;
}

Status Pipelines::get(const ShaderCode& code, const std::vector<uint32_t>& spec, const Kernel** out) {
  std::string key = code.name;
  for (uint32_t v : spec) key += "," + std::to_string(v);
  // Held while creating too: two threads asking for the same new pipeline make it once.
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = kernels_.find(key);
  if (it != kernels_.end()) {
    *out = it->second.get();
    return Status::OK();
  }
  const VkPhysicalDeviceLimits& l = device_.limits();
  if (spec.empty() || spec[0] == 0 || spec[0] > l.maxComputeWorkGroupSize[0] ||
      spec[0] > l.maxComputeWorkGroupInvocations)
    return Status(Code::Unimplemented, "vulkan: workgroup size " + std::to_string(spec.empty() ? 0 : spec[0]) +
                                           " of " + code.name + " exceeds the device limits");
  if (code.push_size > 128 || code.push_size > l.maxPushConstantsSize || code.push_size % 4)
    return Status(Code::Internal, std::string("vulkan: push constants of ") + code.name + " too large");
  if (code.f64 && !device_.info().features.shaderFloat64)
    return Status(Code::Unimplemented, std::string("vulkan: ") + device_.info().props.deviceName +
                                           " has no shaderFloat64; float64 kernels need it (use cpu)");
  if (code.f16 && !device_.info().storage_16bit)
    return Status(Code::Unimplemented, std::string("vulkan: ") + device_.info().props.deviceName +
                                           " has no storageBuffer16BitAccess; float16-storage kernels need it");
  auto k = std::make_unique<Kernel>();
  k->key = key;
  k->bindings = code.bindings;
  k->push_size = code.push_size;
  k->local_size = spec[0];
  Status s = create(code, spec, k.get());
  if (!s.ok()) {
    destroy(k.get());
    return s;
  }
  cache_.mark_dirty();
  *out = k.get();
  kernels_.emplace(key, std::move(k));
  return Status::OK();
}

Status Pipelines::create(const ShaderCode& code, const std::vector<uint32_t>& spec, Kernel* k) {
  const Fns& f = device_.fns();
  VkDevice dev = device_.handle();
  std::vector<VkDescriptorSetLayoutBinding> binds(code.bindings);
  for (uint32_t i = 0; i < code.bindings; ++i) {
    binds[i] = {};
    binds[i].binding = i;
    binds[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    binds[i].descriptorCount = 1;
    binds[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo dli{};
  dli.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  dli.bindingCount = code.bindings;
  dli.pBindings = binds.data();
  Status s = device_.check(f.vkCreateDescriptorSetLayout(dev, &dli, nullptr, &k->set_layout),
                           "vkCreateDescriptorSetLayout");
  if (!s.ok()) return s;
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, code.push_size};
  VkPipelineLayoutCreateInfo pli{};
  pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &k->set_layout;
  pli.pushConstantRangeCount = code.push_size ? 1 : 0;
  pli.pPushConstantRanges = &range;
  s = device_.check(f.vkCreatePipelineLayout(dev, &pli, nullptr, &k->layout), "vkCreatePipelineLayout");
  if (!s.ok()) return s;

  VkShaderModuleCreateInfo smi{};
  smi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  smi.codeSize = code.bytes;
  smi.pCode = code.words;
  VkShaderModule module = VK_NULL_HANDLE;
  s = device_.check(f.vkCreateShaderModule(dev, &smi, nullptr, &module), "vkCreateShaderModule");
  if (!s.ok()) return s;
  std::vector<VkSpecializationMapEntry> entries(spec.size());
  for (size_t i = 0; i < spec.size(); ++i) entries[i] = {static_cast<uint32_t>(i), static_cast<uint32_t>(4 * i), 4};
  VkSpecializationInfo si{};
  si.mapEntryCount = static_cast<uint32_t>(entries.size());
  si.pMapEntries = entries.data();
  si.dataSize = spec.size() * 4;
  si.pData = spec.data();
  VkComputePipelineCreateInfo cpi{};
  cpi.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cpi.stage.module = module;
  cpi.stage.pName = "main";
  cpi.stage.pSpecializationInfo = &si;
  cpi.layout = k->layout;
  VkResult r = f.vkCreateComputePipelines(dev, cache_.handle(), 1, &cpi, nullptr, &k->pipeline);
  f.vkDestroyShaderModule(dev, module, nullptr);
  return device_.check(r, "vkCreateComputePipelines");
}

}  // namespace gradrt::vk

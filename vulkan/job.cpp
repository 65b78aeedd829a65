#include "job.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "context.h"
#include "status_macros.h"

namespace gradrt::vk {

namespace {
// The sequence recording on this thread, and its context (sequence.h).
thread_local const Context* t_recording_ctx = nullptr;
thread_local Job* t_recording_job = nullptr;
}  // namespace

Job* Job::recording(const Context& ctx) { return t_recording_ctx == &ctx ? t_recording_job : nullptr; }

void Job::set_recording(Context* ctx, Job* job) {
  t_recording_ctx = ctx;
  t_recording_job = job;
}

Job::~Job() {
  if (kept_) ctx_.submissions().release(std::move(kept_));  // its last run's fence signalled
  for (Slot& s : slots_) {
    if (s.owned) ctx_.buffers().release(&s.device);
    ctx_.buffers().release(&s.staging);
  }
}

Status Job::add(size_t bytes, bool staging, int* id) {
  Status s = ctx_.device().usable();
  if (!s.ok()) return s;
  if (bytes > ctx_.limits().maxStorageBufferRange)
    return Status(Code::ResourceExhausted, "vulkan: a tensor of " + std::to_string(bytes) +
                                               " bytes exceeds this device's maxStorageBufferRange (" +
                                               std::to_string(ctx_.limits().maxStorageBufferRange) + ")");
  Slot slot;
  slot.bytes = bytes;
  s = ctx_.buffers().acquire(bytes, false, &slot.device);
  if (s.ok() && staging) s = ctx_.buffers().acquire(bytes, true, &slot.staging);
  if (!s.ok()) {
    ctx_.buffers().release(&slot.device);
    return s;
  }
  slots_.push_back(slot);
  *id = static_cast<int>(slots_.size() - 1);
  return Status::OK();
}

Status Job::add_resident(const void* ptr, size_t bytes, bool staging, int* id, bool* found) {
  const Resident* r = ctx_.residents().find(ptr);
  *found = r != nullptr;
  if (!r) return Status::OK();
  if (bytes > r->bytes)
    return Status(Code::InvalidArgument, "vulkan: " + std::to_string(bytes) + " bytes of a device tensor of " +
                                             std::to_string(r->bytes) + " bytes");
  Slot slot;
  slot.device = r->buffer;
  slot.owned = false;
  slot.bytes = bytes;
  if (staging) GRADRT_RETURN_IF_ERROR(ctx_.buffers().acquire(bytes, true, &slot.staging));
  slots_.push_back(slot);
  *id = static_cast<int>(slots_.size() - 1);
  return Status::OK();
}

// Inside a sequence (keep_) only device tensors: a host pointer would be a copy in every step.
static Status host_in_sequence() {
  return Status(Code::InvalidArgument,
                "vulkan: a host tensor inside a Sequence; upload it to the device first (sequences copy nothing)");
}

Status Job::add_tensor(const void* data, size_t bytes, int* id, bool* staged) {
  bool found = false;
  *staged = false;
  GRADRT_RETURN_IF_ERROR(add_resident(data, bytes, false, id, &found));
  if (found) return Status::OK();
  if (keep_) return host_in_sequence();
  GRADRT_RETURN_IF_ERROR(add(bytes, true, id));
  *staged = true;
  return Status::OK();
}

Status Job::input(const void* data, size_t bytes, int* id) {
  if (into_) return into_->input(data, bytes, id);
  bool staged = false;
  GRADRT_RETURN_IF_ERROR(add_tensor(data, bytes, id, &staged));
  if (staged && bytes) std::memcpy(slots_[*id].staging.mapped, data, bytes);
  return Status::OK();
}

Status Job::output(void* data, size_t bytes, int* id) {
  if (into_) return into_->output(data, bytes, id);
  bool staged = false;
  GRADRT_RETURN_IF_ERROR(add_tensor(data, bytes, id, &staged));
  if (staged) slots_[*id].host_out = data;
  return Status::OK();
}

Status Job::scratch(size_t bytes, int* id) { return into_ ? into_->scratch(bytes, id) : add(bytes, false, id); }

Status Job::upload(void* key, const void* data, size_t bytes) {
  if (into_ || keep_) return Status(Code::InvalidArgument, "vulkan: an upload inside a Sequence (upload before it)");
  int id = 0;
  bool found = false;
  GRADRT_RETURN_IF_ERROR(add_resident(key, bytes, true, &id, &found));
  if (!found) return Status(Code::InvalidArgument, "vulkan: upload: not a device tensor of this context");
  if (bytes) std::memcpy(slots_[id].staging.mapped, data, bytes);
  return Status::OK();
}

Status Job::download(const void* key, void* data, size_t bytes) {
  if (into_ || keep_) return Status(Code::InvalidArgument, "vulkan: a download inside a Sequence (download after it)");
  int id = 0;
  bool found = false;
  GRADRT_RETURN_IF_ERROR(add_resident(key, bytes, true, &id, &found));
  if (!found) return Status(Code::InvalidArgument, "vulkan: download: not a device tensor of this context");
  slots_[id].host_out = data;
  return Status::OK();
}

Status Job::zero(int id) {
  if (into_) return into_->zero(id);
  if (id < 0 || static_cast<size_t>(id) >= slots_.size())
    return Status(Code::Internal, "vulkan: zero: unknown buffer id");
  slots_[id].zero = true;
  return Status::OK();
}

Status Job::dispatch(const Kernel& kernel, std::initializer_list<int> buffers, const void* push,
                     size_t push_size, uint32_t gx, uint32_t gy, uint32_t gz) {
  if (into_) return into_->dispatch(kernel, buffers, push, push_size, gx, gy, gz);
  const VkPhysicalDeviceLimits& l = ctx_.limits();
  if (buffers.size() != kernel.bindings)
    return Status(Code::Internal, "vulkan: " + kernel.key + " takes " + std::to_string(kernel.bindings) +
                                      " buffers, given " + std::to_string(buffers.size()));
  if (push_size != kernel.push_size || push_size > 128 || push_size > l.maxPushConstantsSize)
    return Status(Code::Internal, "vulkan: " + kernel.key + " push constants: " + std::to_string(push_size) +
                                      " bytes given, " + std::to_string(kernel.push_size) + " expected (max 128)");
  const uint32_t g[3] = {gx, gy, gz};
  for (int i = 0; i < 3; ++i)
    if (g[i] > l.maxComputeWorkGroupCount[i])
      return Status(Code::ResourceExhausted,
                    "vulkan: " + kernel.key + " needs " + std::to_string(g[i]) + " workgroups in dimension " +
                        std::to_string(i) + ", the device allows " + std::to_string(l.maxComputeWorkGroupCount[i]));
  for (int b : buffers)
    if (b < 0 || static_cast<size_t>(b) >= slots_.size())
      return Status(Code::Internal, "vulkan: " + kernel.key + ": unknown buffer id");
  if (gx == 0 || gy == 0 || gz == 0) return Status::OK();
  Dispatch d{&kernel, std::vector<int>(buffers), {}, {gx, gy, gz}};
  d.push.assign(static_cast<const uint8_t*>(push), static_cast<const uint8_t*>(push) + push_size);
  dispatches_.push_back(std::move(d));
  return Status::OK();
}

// One descriptor set per dispatch, from the submission's (reset) pool.
Status Job::bind(const Submission& sub, std::vector<VkDescriptorSet>* sets) {
  const Fns& f = ctx_.device().fns();
  VkDevice dev = ctx_.device().handle();
  sets->resize(dispatches_.size());
  for (size_t i = 0; i < dispatches_.size(); ++i) {
    const Dispatch& d = dispatches_[i];
    VkDescriptorSetAllocateInfo dai{};
    dai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    dai.descriptorPool = sub.descriptors;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &d.kernel->set_layout;
    Status s = ctx_.device().check(f.vkAllocateDescriptorSets(dev, &dai, &(*sets)[i]), "vkAllocateDescriptorSets");
    if (!s.ok()) return s;
    std::vector<VkDescriptorBufferInfo> infos(d.buffers.size());
    std::vector<VkWriteDescriptorSet> writes(d.buffers.size());
    for (size_t b = 0; b < d.buffers.size(); ++b) {
      // The tensor's bytes, not the pooled buffer's (possibly larger) size.
      const Slot& slot = slots_[d.buffers[b]];
      infos[b] = {slot.device.buffer, 0, std::max<VkDeviceSize>(slot.bytes, 16)};
      writes[b] = {};
      writes[b].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[b].dstSet = (*sets)[i];
      writes[b].dstBinding = static_cast<uint32_t>(b);
      writes[b].descriptorCount = 1;
      writes[b].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[b].pBufferInfo = &infos[b];
    }
    f.vkUpdateDescriptorSets(dev, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  }
  return Status::OK();
}

Status Job::record(const Submission& sub) {
  std::vector<VkDescriptorSet> sets;
  Status s = bind(sub, &sets);
  if (!s.ok()) return s;
  const Fns& f = ctx_.device().fns();
  VkCommandBuffer cmd = sub.cmd;
  VkQueryPool queries = ctx_.timing() ? sub.queries : VK_NULL_HANDLE;
  timed_ = queries != VK_NULL_HANDLE;
  VkCommandBufferBeginInfo cbi{};
  cbi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  cbi.flags = keep_ ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;  // kept: submitted again
  s = ctx_.device().check(f.vkBeginCommandBuffer(cmd, &cbi), "vkBeginCommandBuffer");
  if (!s.ok()) return s;
  if (queries) f.vkCmdResetQueryPool(cmd, queries, 0, 2);

  auto barrier = [&](VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
                     VkAccessFlags dst_access) {
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = src_access;
    mb.dstAccessMask = dst_access;
    f.vkCmdPipelineBarrier(cmd, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
  };
  // 1. staging -> device for inputs; zero fills.
  for (Slot& slot : slots_) {
    if (slot.staging.buffer && !slot.host_out && slot.bytes) {
      VkBufferCopy c{0, 0, slot.bytes};
      f.vkCmdCopyBuffer(cmd, slot.staging.buffer, slot.device.buffer, 1, &c);
    }
    if (slot.zero) f.vkCmdFillBuffer(cmd, slot.device.buffer, 0, VK_WHOLE_SIZE, 0);
  }
  barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  // BOTTOM_OF_PIPE: written once the uploads have completed (TOP_OF_PIPE would be written
  // as soon as they started, and the GPU time would include the host-to-device copies).
  if (queries) f.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 0);
  // 2. the dispatches, each one seeing the writes of the previous ones.
  for (size_t i = 0; i < dispatches_.size(); ++i) {
    const Dispatch& d = dispatches_[i];
    if (i) barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    f.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.kernel->pipeline);
    f.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, d.kernel->layout, 0, 1, &sets[i], 0, nullptr);
    if (!d.push.empty())
      f.vkCmdPushConstants(cmd, d.kernel->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(d.push.size()), d.push.data());
    f.vkCmdDispatch(cmd, d.groups[0], d.groups[1], d.groups[2]);
  }
  if (queries) f.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries, 1);
  // 3. device -> staging for outputs, then make them visible to the host.
  barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT);
  for (Slot& slot : slots_)
    if (slot.host_out && slot.bytes) {
      VkBufferCopy c{0, 0, slot.bytes};
      f.vkCmdCopyBuffer(cmd, slot.device.buffer, slot.staging.buffer, 1, &c);
    }
  barrier(VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
          VK_ACCESS_HOST_READ_BIT);
  return ctx_.device().check(f.vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
}

void Job::read_timestamps(const Submission& sub) {
  if (!timed_) return;  // recorded without timestamps
  uint64_t t[2] = {0, 0};
  if (ctx_.device().fns().vkGetQueryPoolResults(ctx_.device().handle(), sub.queries, 0, 2, sizeof(t), t,
                                                sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) !=
      VK_SUCCESS)
    return;
  const uint32_t bits = ctx_.info().timestamp_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const uint64_t ticks = ((t[1] & mask) - (t[0] & mask)) & mask;
  ctx_.set_last_gpu_ms(double(ticks) * ctx_.limits().timestampPeriod * 1e-6);
}

// GRADRT_VULKAN_TIMEOUT_S, default 600: a number of seconds in [1, 1e9] (more would overflow
// the nanoseconds of vkWaitForFences); anything else (empty, "10s", "-1") keeps the default
// rather than becoming a 0- or 1-second limit that disables the backend on the first run.
uint64_t Job::wait_limit_s() {
  const char* t = std::getenv("GRADRT_VULKAN_TIMEOUT_S");
  if (!t || *t < '0' || *t > '9') return 600;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(t, &end, 10);
  if (*end || v < 1) return 600;
  return std::min<unsigned long long>(v, 1000000000ull);
}

void Job::abandon(std::unique_ptr<Submission> sub) {
  std::vector<Buffer> buffers;  // a resident tensor's buffer stays with its tensor
  for (Slot& s : slots_) buffers.insert(buffers.end(), {s.owned ? s.device : Buffer{}, s.staging});
  slots_.clear();
  ctx_.submissions().abandon(std::move(sub), std::move(buffers));
}

Status Job::submit_and_wait(std::unique_ptr<Submission>& sub) {
  Device& device = ctx_.device();
  Status s = device.submit(sub->cmd, sub->fence);
  if (!s.ok()) return s;
  uint64_t to_device = 0, to_host = 0;
  for (const Slot& slot : slots_)
    if (slot.staging.buffer) (slot.host_out ? to_host : to_device) += slot.bytes;
  ctx_.count(1, to_device, to_host);
  // A bounded wait: a hung device becomes a status, not a hung caller.
  const uint64_t timeout_s = wait_limit_s();
  const VkResult r = ctx_.submissions().wait(sub.get(), timeout_s * 1000000000ull);
  if (r != VK_SUCCESS) {
    abandon(std::move(sub));
    if (r != VK_TIMEOUT) return device.check(r, "vkWaitForFences");
    device.check(VK_ERROR_DEVICE_LOST, "vkWaitForFences");  // marks the device unusable
    return Status(Code::Unavailable, "vulkan: the device did not finish within " + std::to_string(timeout_s) +
                                         " s (GRADRT_VULKAN_TIMEOUT_S); the backend is disabled");
  }
  for (Slot& slot : slots_)
    if (slot.host_out && slot.bytes) std::memcpy(slot.host_out, slot.staging.mapped, slot.bytes);
  read_timestamps(*sub);
  return Status::OK();
}

Status Job::run() {
  if (into_) return Status::OK();  // recorded into the sequence's job, which runs it
  Device& device = ctx_.device();
  Status s = device.usable();
  if (!s.ok()) return s;
  if (kept_) {  // a sequence's later runs: the same command buffer again
    s = device.check(device.fns().vkResetFences(device.handle(), 1, &kept_->fence), "vkResetFences");
    return s.ok() ? submit_and_wait(kept_) : s;
  }
  uint32_t descriptors = 0;
  for (const Dispatch& d : dispatches_) descriptors += d.kernel->bindings;
  std::unique_ptr<Submission> sub;
  s = ctx_.submissions().acquire(static_cast<uint32_t>(dispatches_.size()), descriptors, ctx_.timing(), &sub);
  if (!s.ok()) return s;
  s = record(*sub);
  if (s.ok()) s = submit_and_wait(sub);
  if (!sub) return s;  // abandoned
  if (s.ok() && keep_) kept_ = std::move(sub);
  else ctx_.submissions().release(std::move(sub));  // done, or never submitted: reusable
  return s;
}

}  // namespace gradrt::vk

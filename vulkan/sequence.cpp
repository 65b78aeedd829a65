#include "sequence.h"

#include "context.h"

namespace gradrt::vk {

Status Sequence::begin() {
  if (Job::recording(ctx_) || recording_)
    return Status(Code::InvalidArgument, "vulkan: this thread is already recording a Sequence");
  Job::set_recording(&ctx_, &job_);
  recording_ = true;
  return Status::OK();
}

void Sequence::end() {
  if (!recording_) return;
  Job::set_recording(nullptr, nullptr);
  recording_ = false;
}

Status Sequence::run() {
  if (recording_) return Status(Code::InvalidArgument, "vulkan: Sequence::run while it is still recording");
  return job_.run();
}

}  // namespace gradrt::vk

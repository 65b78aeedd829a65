#include "context.h"

namespace gradrt::vk {

Status Context::create(const Options& options, std::unique_ptr<Context>* out) {
  std::unique_ptr<Context> ctx(new Context());
  Status s = Device::create(options, &ctx->device_);
  if (!s.ok()) return s;
  ctx->cache_ = std::make_unique<PipelineCache>(*ctx->device_, options.cache_dir);
  ctx->buffers_ = std::make_unique<BufferPool>(*ctx->device_);
  ctx->pipelines_ = std::make_unique<Pipelines>(*ctx->device_, *ctx->cache_);
  ctx->submissions_ = std::make_unique<Submissions>(*ctx->device_, *ctx->buffers_);
  ctx->residents_ = std::make_unique<Residents>(*ctx->buffers_);
  *out = std::move(ctx);
  return Status::OK();
}

Context::~Context() {
  if (!device_) return;  // create() failed: Device cleaned up after itself
  device_->wait_idle();
  // A run whose wait failed left its submission behind; one more second for it (after a device
  // loss the wait returns at once). Still running: leak everything rather than free under it.
  if (!submissions_->settle(1000000000ull)) {
    (void)residents_.release();
    (void)submissions_.release();
    (void)pipelines_.release();
    (void)buffers_.release();
    (void)cache_.release();
    device_->leak();
    return;
  }
  submissions_.reset();
  residents_.reset();
  buffers_.reset();
  cache_->save();
  pipelines_.reset();
  cache_.reset();
  device_.reset();  // the device, then the instance
}

std::string Context::describe() const {
  return device_->describe() + "; pipeline cache: " + (cache_->path().empty() ? std::string("none") : cache_->path());
}

}  // namespace gradrt::vk

// Sequence: several kernels recorded once into one command buffer and submitted as one, as
// often as wanted (Kompute's Sequence; ncnn's VkCompute). Between begin() and end(), every
// vulkan kernel called on this thread on this context records into the sequence's Job instead
// of running (Job forwards to it): its dispatches in call order, a barrier between each two,
// its scratch buffers from the pool, kept until the sequence dies. Every tensor must be
// resident (resident.h): a host pointer is InvalidArgument, so a run copies nothing. run()
// submits the command buffer and waits on its one fence: Context::counters() grows by one
// submission and zero bytes. Sequences on different threads are independent; one thread
// records one sequence at a time.
#pragma once

#include "job.h"

namespace gradrt::vk {

class Sequence : NoCopy {
 public:
  explicit Sequence(Context& ctx) : ctx_(ctx), job_(ctx, false) { job_.keep(); }
  ~Sequence() { end(); }

  // Starts recording on this thread; InvalidArgument when this thread already records one.
  Status begin();
  // Stops recording (idempotent).
  void end();
  // Submits what was recorded and waits; the first run records the command buffer, later
  // runs submit the same one. InvalidArgument while still recording.
  Status run();
  size_t dispatches() const { return job_.dispatch_count(); }

 private:
  Context& ctx_;
  Job job_;
  bool recording_ = false;
};

}  // namespace gradrt::vk

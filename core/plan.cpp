// Plans (contract: "Plans, device tensors, sequences"). prepare() runs an op's function up to
// its data phase (OpContext::Mode::kPrepare: every check, the output shapes, the backend and
// kernel choice, the workspace size) and keeps what it resolved; Plan::run checks the run's
// inputs against the specs and calls the kept data phase (the op's deferred tail) on them, or,
// for an op without one, the whole op function. run_op is prepare + run behind a small
// per-thread cache of plans, so both give the same bits by construction.
#include <algorithm>
#include <cstdlib>
#include <new>

#include "backend_choice.h"
#include "checked.h"
#include "op_context.h"
#include "registry.h"
#include "status_macros.h"

namespace gradrt {

namespace {

// Runs body() (an op function or a plan's tail, then ctx.finish()), turning an allocation
// failure or another exception into a status.
template <class F>
Status guarded(OpContext& ctx, F body) {
  try {
    Status s = body();
    return s.ok() ? ctx.finish() : s;
  } catch (const std::bad_alloc&) {
    return Status(Code::ResourceExhausted, ctx.op() + ": out of memory");
  } catch (const std::exception& e) {
    return Status(Code::Internal, ctx.op() + ": " + e.what());
  }
}

struct InputSpec {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  bool has_values = false;      // shape values the op read at prepare: run() must give the same
  std::vector<int64_t> values;
};

// Values of an int32/int64 rank-1 tensor equal `want` (false when it has no data).
bool same_values(const TensorView& t, const std::vector<int64_t>& want) {
  if (t.shape.size() != 1 || t.shape[0] != int64_t(want.size())) return false;
  if (!want.empty() && t.data == nullptr) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t v = t.dtype == DType::int64 ? static_cast<const int64_t*>(t.data)[i]
                                              : int64_t{static_cast<const int32_t*>(t.data)[i]};
    if (v != want[i]) return false;
  }
  return true;
}

bool same_attr(const AttrValue& a, const AttrValue& b) {
  if (a.kind != b.kind || a.b != b.b || a.i != b.i || a.s != b.s || a.list.size() != b.list.size()) return false;
  if (!(a.f == b.f)) return false;  // (NaN never matches: such a call is prepared again)
  for (size_t i = 0; i < a.list.size(); ++i)
    if (!same_attr(a.list[i], b.list[i])) return false;
  return true;
}

bool same_attrs(const Attrs& a, const Attrs& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
    if (ia->first != ib->first || !same_attr(ia->second, ib->second)) return false;
  return true;
}

std::string spec_string(DType dtype, const std::vector<int64_t>& shape) {
  return std::string(dtype_name(dtype)) + " " + shape_string(shape);
}

}  // namespace

struct Plan::Impl {
  const OpInfo* op = nullptr;
  OpFn fn = nullptr;
  Attrs attrs;
  RunOptions options;             // backend and threads (output_memory comes with each run)
  std::vector<InputSpec> inputs;  // the inputs given at prepare, in the op's order
  OpContext::Tail tail;           // the op's data phase; empty: run() runs the whole op
  PreparedKernel kernel;
  DType dtype = DType::float32;   // the op context's dtype state at the tail
  bool round_bf16 = false;
  PlanWorkspace workspace;  // the kernels' scratch (Exec::workspace), kept between runs
  std::unique_ptr<KernelState> state;    // the backend kernel's (Exec::state)
  std::unique_ptr<KernelState> weights;  // core's converted weights (OpContext::load_weights)
  PlanInfo info;

  // OK when `in` has exactly the prepared inputs (dtype, shape, shape values); else why not.
  Status check(const Inputs& in) const {
    if (in.size() == inputs.size()) {
      bool same = true;
      for (const InputSpec& s : inputs) {
        auto it = in.find(s.name);
        if (it == in.end() || it->second.dtype != s.dtype || it->second.shape != s.shape ||
            (s.has_values && !same_values(it->second, s.values))) {
          same = false;
          break;
        }
      }
      if (same) return Status::OK();
    }
    return mismatch(in);
  }

  Status mismatch(const Inputs& in) const {
    const std::string& name = op->name;
    GRADRT_RETURN_IF_ERROR(check_input_names(*op, in));
    for (const InputSpec& s : inputs) {
      auto it = in.find(s.name);
      if (it == in.end()) return Status(Code::InvalidArgument, name + ": missing input '" + s.name + "'");
      const TensorView& t = it->second;
      if (t.dtype != s.dtype || t.shape != s.shape)
        return Status(Code::InvalidArgument, name + ": input '" + s.name + "' is " + spec_string(t.dtype, t.shape) +
                                                 "; the plan was prepared for " + spec_string(s.dtype, s.shape));
      if (s.has_values && !same_values(t, s.values))
        return Status(Code::InvalidArgument, name + ": input '" + s.name +
                                                 "' has other values than the plan was prepared with " +
                                                 shape_string(s.values));
    }
    for (const auto& [n, t] : in) {
      bool prepared = false;
      for (const InputSpec& s : inputs) prepared = prepared || s.name == n;
      if (!prepared) return Status(Code::InvalidArgument, name + ": input '" + n + "' was not given at prepare");
    }
    return Status::OK();
  }
};

Plan::Plan() = default;
Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

const PlanInfo& Plan::info() const { return impl_->info; }

namespace {

Status prepare_impl(std::string_view op, const Inputs& specs, const Attrs& attrs, const RunOptions& options,
                    bool specs_only, std::unique_ptr<Plan::Impl>* out) {
  const OpInfo* info = find_op(op);
  if (!info) return Status(Code::NotFound, "unknown op '" + std::string(op) + "' (gradrt ops lists them)");
  GRADRT_RETURN_IF_ERROR(check_input_names(*info, specs));
  auto impl = std::make_unique<Plan::Impl>();
  impl->op = info;
  impl->fn = op_function(*info);
  Outputs recorded;  // empty tensors (the shapes are in ctx.output_specs())
  OpContext ctx(*info, specs, attrs, options, &recorded, OpContext::Mode::kPrepare, specs_only);
  // An op without a deferred tail stops at its first data access (refused: there is no data).
  GRADRT_RETURN_IF_ERROR(guarded(ctx, [&] { return ctx.end_prepare(impl->fn(ctx)); }));

  impl->attrs = attrs;
  impl->options.backend = options.backend;
  impl->options.threads = options.threads;
  for (const std::string& name : info->inputs) {
    auto it = specs.find(name);
    if (it == specs.end()) continue;
    InputSpec s{name, it->second.dtype, it->second.shape};
    for (const auto& [read, values] : ctx.values_read())
      if (read == name) s.has_values = true, s.values = values;
    impl->inputs.push_back(std::move(s));
  }
  impl->tail = ctx.take_tail();
  impl->kernel = ctx.prepared();
  impl->dtype = ctx.round_state(&impl->round_bf16);

  PlanInfo& pi = impl->info;
  pi.op = info->name;
  pi.fast = static_cast<bool>(impl->tail);
  if (impl->kernel.kernel) {
    pi.backend = impl->kernel.backend->name();
    pi.kernel = kernel_info(*impl->kernel.kernel).stem;
    pi.isa = impl->kernel.isa;
    pi.tiles = impl->kernel.tiles;
  } else {  // the whole op runs each time: the backend a named or `auto` request resolves to
    Backend* b = nullptr;
    GRADRT_RETURN_IF_ERROR(backend_for(options.backend, std::nullopt, 0, &b));
    pi.backend = b->name();
  }
  // A deferred kernel's scratch is allocated now; an op without a tail grows it at its first run.
  const size_t ws = impl->kernel.workspace_bytes;
  if (ws > 0) {
    Status s = impl->workspace.reserve(ws);
    if (!s.ok()) return Status(s.code(), info->name + ": " + s.message());
    pi.workspace_bytes = ws;
  }
  pi.outputs = ctx.output_specs();
  *out = std::move(impl);
  return Status::OK();
}

}  // namespace

struct PlanAccess {
  static std::unique_ptr<Plan::Impl>& impl(Plan& p) { return p.impl_; }
};

Status prepare(std::string_view op, const Inputs& specs, const Attrs& attrs, Plan* plan, const RunOptions& options) {
  if (!plan) return Status(Code::InvalidArgument, "prepare: plan must not be null");
  PlanAccess::impl(*plan).reset();
  return prepare_impl(op, specs, attrs, options, true, &PlanAccess::impl(*plan));
}

Status Plan::run(const Inputs& inputs, Outputs* outputs, const PlanRunOptions& options, RunInfo* run_info) {
  if (!outputs) return Status(Code::InvalidArgument, "Plan::run: outputs must not be null");
  outputs->clear();
  if (!impl_) return Status(Code::InvalidArgument, "Plan::run: the plan was not prepared (or prepare failed)");
  Impl& p = *impl_;
  GRADRT_RETURN_IF_ERROR(p.check(inputs));
  RunOptions ro;
  ro.backend = p.options.backend;
  ro.threads = p.options.threads;
  ro.output_memory = options.output_memory;
  ro.parallel = options.parallel;
  Status s;
  std::string ran_on;
  if (p.tail) {
    OpContext ctx(*p.op, inputs, p.attrs, ro, outputs, OpContext::Mode::kResume);
    Exec e;
    e.state = &p.state;
    e.weights_version = options.weights_version;
    ctx.resume(p.kernel, p.dtype, p.round_bf16, e, &p.weights);
    ctx.use_workspace(&p.workspace);
    s = guarded(ctx, [&] {
      for (const auto& [name, spec] : p.info.outputs) {
        Tensor* t;
        GRADRT_RETURN_IF_ERROR(ctx.add_output(name.c_str(), spec.dtype, spec.shape, &t));
      }
      return p.tail(ctx);
    });
    ran_on = ctx.ran_on();
  } else {
    OpContext ctx(*p.op, inputs, p.attrs, ro, outputs);
    ctx.use_workspace(&p.workspace);
    s = guarded(ctx, [&] { return p.fn(ctx); });
    ran_on = ctx.ran_on();
  }
  if (!s.ok()) {
    outputs->clear();
    return s;
  }
  if (run_info) run_info->backend = std::move(ran_on);
  return s;
}

// ---------------------------------------------------------------- run_op: a plan cache

namespace {

// One thread's recently used plans, most recent first: a training loop calls the same few
// ops with the same shapes over and over. Keyed by everything prepare() read.
struct CacheEntry {
  std::string op, backend;
  int threads;
  int64_t max_elements;
  Plan plan;
};
constexpr size_t kCacheSize = 16;

bool hit(const CacheEntry& e, std::string_view op, const Inputs& inputs, const Attrs& attrs,
         const RunOptions& options, const Plan::Impl& p) {
  return e.op == op && e.backend == options.backend && e.threads == options.threads &&
         e.max_elements == max_tensor_elements() && same_attrs(p.attrs, attrs) && p.check(inputs).ok();
}

}  // namespace

namespace {

// The cached plan for this call, prepared (with the inputs' data: no specs-only rule) on a miss.
Plan* find_or_prepare(std::string_view op, const Inputs& inputs, const Attrs& attrs,
                      const RunOptions& options, Status* status) {
  thread_local std::vector<std::unique_ptr<CacheEntry>> cache;
  for (size_t i = 0; i < cache.size(); ++i) {
    if (!hit(*cache[i], op, inputs, attrs, options, *PlanAccess::impl(cache[i]->plan))) continue;
    std::rotate(cache.begin(), cache.begin() + i, cache.begin() + i + 1);
    return &cache.front()->plan;
  }
  auto e = std::make_unique<CacheEntry>();
  *status = prepare_impl(op, inputs, attrs, options, false, &PlanAccess::impl(e->plan));
  if (!status->ok()) return nullptr;
  e->op = std::string(op);
  e->backend = options.backend;
  e->threads = options.threads;
  e->max_elements = max_tensor_elements();
  if (cache.size() == kCacheSize) cache.pop_back();
  cache.insert(cache.begin(), std::move(e));
  return &cache.front()->plan;
}

}  // namespace

Status run_op(std::string_view op, const Inputs& inputs, const Attrs& attrs, Outputs* outputs,
              const RunOptions& options, RunInfo* info) {
  if (!outputs) return Status(Code::InvalidArgument, "run_op: outputs must not be null");
  outputs->clear();
  Status s;
  Plan* plan = find_or_prepare(op, inputs, attrs, options, &s);
  if (!plan) return s;
  PlanRunOptions ro;
  ro.output_memory = options.output_memory;
  ro.parallel = options.parallel;
  return plan->run(inputs, outputs, ro, info);
}

}  // namespace gradrt

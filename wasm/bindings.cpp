// The C ABI of the WebAssembly build: marshalling only, no op knowledge.
// web/src/runtime.js is its one caller; arguments are decoded by abi.cpp.
//
//   gradrt_alloc(bytes) / gradrt_dealloc(p)     heap buffers for inputs and strings (128-byte aligned)
//   gradrt_info_json()                          version, dtype and status codes, ops(), backends()
//   gradrt_run(op, attrs_json, table, table_len, backend)  -> status code (0 = OK)
//   gradrt_error_message()                      message of the last failed call
//   gradrt_outputs_json()                       outputs of the last successful run:
//                                               [[name, dtype, [dims], addr, bytes], ...]
//   gradrt_release_outputs()                    frees them
//   gradrt_hold_output(i)                       keeps output i of the last run alive past
//                                               gradrt_release_outputs (zero-copy heap
//                                               tensors; 0 if there is none with data)
//   gradrt_free_held(addr)                      frees a held output by its data address
//   gradrt_set_threads(n)                       threads for later runs (1 unless built with
//                                               -pthread); returns the count now in effect
//   gradrt_prepare(op, attrs_json, table, table_len, backend) -> plan id (> 0), or -code;
//                                               the table as gradrt_run's, a record with data
//                                               address 0 is a spec without data
//   gradrt_plan_info_json(id)                   once per plan: {"inputs":[[name, dtype, [dims]], ...]
//                                               (the order of gradrt_plan_run's words),
//                                               "outputs":[[name, dtype, [dims], bytes], ...],
//                                               "backend", "kernel", "isa", "tiles"}
//   gradrt_plan_run(id, args)                   -> status code; args: u32 words (abi.h
//                                               decode_plan_args); on success each output's word
//                                               holds its data address, valid until the plan's
//                                               next run or gradrt_plan_free
//   gradrt_plan_hold_output(id, j)              as gradrt_hold_output, for output j of the last run
//   gradrt_plan_release(id)                     frees the last run's outputs (after they were read)
//   gradrt_plan_free(id)
// Strings are UTF-8, NUL-terminated; attrs_json and backend may be 0 ("{}", "auto").
#include <emscripten/emscripten.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <memory>
#include <unordered_map>
#include <utility>

#include "abi.h"
#include "gradrt/gradrt.h"
#include "parallel.h"

namespace {

using gradrt::AttrValue;
using gradrt::Code;
using gradrt::Status;
using gradrt::wasm::Heap;

// A prepared plan and what its runs reuse: the input views (specs; each run sets the data
// pointers), the output destinations and the last run's outputs.
struct PlanSlot {
  gradrt::Plan plan;
  gradrt::Inputs inputs;
  std::vector<size_t> out_bytes;
  std::vector<void*> dest;
  gradrt::Outputs outputs;
  std::string info_json;
};

struct State {
  int threads = 1;
  std::unordered_map<uint32_t, std::unique_ptr<PlanSlot>> plans;
  uint32_t next_plan = 1;
  Status last;
  gradrt::Outputs outputs;
  std::string outputs_json;
  std::string info_json;
  std::string message;
  std::unordered_map<uintptr_t, gradrt::Tensor> held;  // by data address
};

State& state() {
  static State s;
  return s;
}

Heap heap() { return Heap{0, __builtin_wasm_memory_size(0) * 65536}; }

std::string json_string(std::string_view s) { return AttrValue(std::string(s)).to_json(); }

template <class List, class F>
std::string json_list(const List& list, F item) {
  std::string j = "[";
  for (const auto& x : list) j += (j.size() > 1 ? "," : "") + item(x);
  return j + "]";
}

std::string describe_outputs(const gradrt::Outputs& outputs) {
  return json_list(outputs, [](const auto& named) {
    const gradrt::Tensor& t = named.second;
    return "[" + json_string(named.first) + "," + std::to_string(static_cast<int>(t.dtype())) + "," +
           json_list(t.shape(), [](int64_t d) { return std::to_string(d); }) + "," +
           std::to_string(reinterpret_cast<uintptr_t>(t.data())) + "," + std::to_string(t.num_bytes()) + "]";
  });
}

int fail(Status s) {
  state().last = std::move(s);
  return static_cast<int>(state().last.code());
}

}  // namespace

extern "C" {

// 128-byte aligned, as the core's tensors (see core/tensor.cpp); 0 when the heap cannot hold
// it (JS reports ResourceExhausted). Emscripten's malloc aligns to 8 bytes only, and a
// tensor at 8 mod 16 splits every fourth 16-byte load of the kernels across two cache lines
// (the 56x56x144 stride-2 depthwise filter gradient: 64 us aligned, 74 us at 8 mod 16).
EMSCRIPTEN_KEEPALIVE void* gradrt_alloc(double bytes) {
  if (!(bytes >= 0 && bytes <= 2147483647.0)) return nullptr;
  const size_t n = bytes < 1 ? 1 : static_cast<size_t>(bytes);
  return std::aligned_alloc(128, (n + 127) & ~size_t{127});  // n < 2^31: no overflow
}

EMSCRIPTEN_KEEPALIVE void gradrt_dealloc(void* p) { std::free(p); }

EMSCRIPTEN_KEEPALIVE const char* gradrt_info_json() {
  std::string& j = state().info_json;
  if (!j.empty()) return j.c_str();
  std::vector<int> dtypes, codes;
  for (int d = 0; d <= static_cast<int>(gradrt::DType::int64); ++d) dtypes.push_back(d);
  for (int c = 0; c <= static_cast<int>(Code::Internal); ++c) codes.push_back(c);
  auto strings = [](const std::vector<std::string>& v) { return json_list(v, json_string); };
  j = "{\"version\":" + json_string(gradrt::version()) +
      ",\"dtypes\":" + json_list(dtypes, [](int d) { return json_string(gradrt::dtype_name(static_cast<gradrt::DType>(d))); }) +
      ",\"codes\":" + json_list(codes, [](int c) { return json_string(gradrt::code_name(static_cast<Code>(c))); }) +
      ",\"ops\":" + json_list(gradrt::ops(), [&](const gradrt::OpInfo& op) {
        return "{\"name\":" + json_string(op.name) + ",\"inputs\":" + strings(op.inputs) + ",\"outputs\":" + strings(op.outputs) + "}";
      }) +
      ",\"backends\":" + json_list(gradrt::backends(), [](const gradrt::BackendInfo& b) {
        return "{\"name\":" + json_string(b.name) + ",\"available\":" + (b.available ? "true" : "false") +
               ",\"detail\":" + json_string(b.detail) + "}";
      }) + "}";
  return j.c_str();
}

EMSCRIPTEN_KEEPALIVE int gradrt_run(uintptr_t op_addr, uintptr_t attrs_addr, uintptr_t table_addr, uint32_t table_len,
                                    uintptr_t backend_addr) {
  using namespace gradrt::wasm;
  State& st = state();
  st.outputs.clear();
  st.outputs_json.clear();
  const Heap h = heap();
  std::string_view op, attrs_text = "{}", backend = "auto";
  Status s = read_string(h, op_addr, kMaxNameBytes, "op name", &op);
  if (s.ok() && attrs_addr != 0) s = read_string(h, attrs_addr, kMaxAttrsBytes, "attrs", &attrs_text);
  if (s.ok() && backend_addr != 0) s = read_string(h, backend_addr, kMaxNameBytes, "backend", &backend);
  gradrt::Inputs inputs;
  if (s.ok()) s = decode_inputs(h, table_addr, table_len, &inputs);
  gradrt::Attrs attrs;
  if (s.ok()) s = decode_attrs(attrs_text, &attrs);
  if (!s.ok()) return fail(std::move(s));
  gradrt::RunOptions options;
  options.backend = std::string(backend);
  options.threads = st.threads;  // > 1 only in the -pthread build, at most its worker pool + 1
  st.outputs.reserve(8);  // room for every op's outputs: core keeps pointers into this vector while it adds them
  s = gradrt::run_op(op, inputs, attrs, &st.outputs, options);
  if (!s.ok()) {
    st.outputs.clear();
    return fail(std::move(s));
  }
  st.last = Status::OK();  // outputs_json is built on demand (gradrt_outputs_json)
  return 0;
}

EMSCRIPTEN_KEEPALIVE const char* gradrt_error_message() {
  State& st = state();
  st.message = st.last.message();
  return st.message.c_str();
}

EMSCRIPTEN_KEEPALIVE const char* gradrt_outputs_json() {
  State& st = state();
  // Built on the first request after a run: callers that keep the outputs in the heap (and
  // the benchmarks) need no JSON, and building it cost about a tenth of a small op's call.
  if (st.outputs_json.empty() && !st.outputs.empty()) st.outputs_json = describe_outputs(st.outputs);
  return st.outputs_json.empty() ? "[]" : st.outputs_json.c_str();
}

// The pthread build's workers are preloaded (PTHREAD_POOL_SIZE, chosen by web/src/loader.js
// as threads - 1): core's pool must never ask for more, since a thread cannot start while
// the calling (main) thread blocks.
EMSCRIPTEN_KEEPALIVE int gradrt_set_threads(int n) {
#ifdef __EMSCRIPTEN_PTHREADS__
  state().threads = n < 1 ? 1 : n;
#else
  (void)n;
  state().threads = 1;
#endif
  return state().threads;
}

// core's minimum estimated work per extra thread (core/parallel.h; 200 us by default here,
// about twice a pthread job start): smaller ops run on one thread. 0: every op uses them all.
EMSCRIPTEN_KEEPALIVE double gradrt_set_min_thread_work_ns(double ns) {
  gradrt::set_min_thread_work_ns(static_cast<int64_t>(ns));
  return static_cast<double>(gradrt::min_thread_work_ns());
}

EMSCRIPTEN_KEEPALIVE int gradrt_hold_output(uint32_t index) {
  State& st = state();
  if (index >= st.outputs.size() || st.outputs[index].second.data() == nullptr) return 0;
  gradrt::Tensor& t = st.outputs[index].second;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(t.data());
  st.held.emplace(addr, std::move(t));  // the moved-from tensor in outputs owns nothing
  return 1;
}

EMSCRIPTEN_KEEPALIVE void gradrt_free_held(uintptr_t addr) { state().held.erase(addr); }

EMSCRIPTEN_KEEPALIVE int gradrt_prepare(uintptr_t op_addr, uintptr_t attrs_addr, uintptr_t table_addr,
                                             uint32_t table_len, uintptr_t backend_addr) {
  using namespace gradrt::wasm;
  State& st = state();
  const Heap h = heap();
  std::string_view op, attrs_text = "{}", backend = "auto";
  Status s = read_string(h, op_addr, kMaxNameBytes, "op name", &op);
  if (s.ok() && attrs_addr != 0) s = read_string(h, attrs_addr, kMaxAttrsBytes, "attrs", &attrs_text);
  if (s.ok() && backend_addr != 0) s = read_string(h, backend_addr, kMaxNameBytes, "backend", &backend);
  auto slot = std::make_unique<PlanSlot>();
  if (s.ok()) s = decode_inputs(h, table_addr, table_len, &slot->inputs, true);
  gradrt::Attrs attrs;
  if (s.ok()) s = decode_attrs(attrs_text, &attrs);
  gradrt::RunOptions options;
  options.backend = std::string(backend);
  options.threads = st.threads;
  if (s.ok()) s = gradrt::prepare(op, slot->inputs, attrs, &slot->plan, options);
  if (!s.ok()) return -fail(std::move(s));
  const gradrt::PlanInfo& info = slot->plan.info();
  auto dims = [](const std::vector<int64_t>& shape) { return json_list(shape, [](int64_t d) { return std::to_string(d); }); };
  std::string in = json_list(slot->inputs, [&](const auto& named) {
    return "[" + json_string(named.first) + "," + std::to_string(static_cast<int>(named.second.dtype)) + "," +
           dims(named.second.shape) + "]";
  });
  std::string out = json_list(info.outputs, [&](const auto& named) {
    const gradrt::TensorSpec& t = named.second;
    int64_t n = 1;
    for (int64_t d : t.shape) n *= d;  // checked at prepare
    slot->out_bytes.push_back(static_cast<size_t>(n) * gradrt::dtype_size(t.dtype));
    return "[" + json_string(named.first) + "," + std::to_string(static_cast<int>(t.dtype)) + "," + dims(t.shape) +
           "," + std::to_string(slot->out_bytes.back()) + "]";
  });
  slot->info_json = "{\"inputs\":" + in + ",\"outputs\":" + out + ",\"backend\":" + json_string(info.backend) +
                    ",\"kernel\":" + json_string(info.kernel) + ",\"isa\":" + json_string(info.isa) +
                    ",\"tiles\":" + json_string(info.tiles) + "}";
  const uint32_t id = st.next_plan++ & 0x7fffffff;
  st.plans.emplace(id, std::move(slot));
  st.last = Status::OK();
  return id;
}

EMSCRIPTEN_KEEPALIVE const char* gradrt_plan_info_json(uint32_t id) {
  auto it = state().plans.find(id);
  return it == state().plans.end() ? "null" : it->second->info_json.c_str();
}

EMSCRIPTEN_KEEPALIVE int gradrt_plan_run(uint32_t id, uintptr_t args_addr) {
  State& st = state();
  auto it = st.plans.find(id);
  if (it == st.plans.end()) return fail(Status(Code::InvalidArgument, "plan " + std::to_string(id) + " does not exist (freed?)"));
  PlanSlot& p = *it->second;
  p.outputs.clear();  // the last run's: their memory goes back before this run allocates
  Status s = gradrt::wasm::decode_plan_args(heap(), args_addr, &p.inputs, p.out_bytes, &p.dest);
  if (!s.ok()) return fail(std::move(s));
  gradrt::PlanRunOptions options;
  size_t k = 0;  // outputs are asked for in the op's order
  options.output_memory = [&](std::string_view, gradrt::DType, const std::vector<int64_t>&) -> void* {
    return k < p.dest.size() ? p.dest[k++] : nullptr;
  };
  s = p.plan.run(p.inputs, &p.outputs, options);
  if (!s.ok()) return fail(std::move(s));
  uint32_t* words = reinterpret_cast<uint32_t*>(args_addr) + 2 * p.inputs.size();
  for (size_t j = 0; j < p.outputs.size(); ++j) words[j] = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p.outputs[j].second.data()));
  st.last = Status::OK();
  return 0;
}

EMSCRIPTEN_KEEPALIVE int gradrt_plan_hold_output(uint32_t id, uint32_t index) {
  State& st = state();
  auto it = st.plans.find(id);
  if (it == st.plans.end() || index >= it->second->outputs.size()) return 0;
  gradrt::Tensor& t = it->second->outputs[index].second;
  if (t.data() == nullptr) return 0;
  st.held.emplace(reinterpret_cast<uintptr_t>(t.data()), std::move(t));
  return 1;
}

EMSCRIPTEN_KEEPALIVE void gradrt_plan_release(uint32_t id) {
  auto it = state().plans.find(id);
  if (it != state().plans.end()) it->second->outputs.clear();
}

EMSCRIPTEN_KEEPALIVE void gradrt_plan_free(uint32_t id) { state().plans.erase(id); }

EMSCRIPTEN_KEEPALIVE void gradrt_release_outputs() {
  State& st = state();
  gradrt::Outputs().swap(st.outputs);
  std::string().swap(st.outputs_json);
}

}  // extern "C"

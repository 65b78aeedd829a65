// gradrt_step: one training step's backward pass of a network block, as one Sequence of
// kernels on device-resident tensors, against the same chain run op by op.
//   gradrt_step --backend vulkan|cpu --model mobilenet_block|resnet_block --batch N
//               [--steps S] [--json]
// Models (NHWC, float32, 56x56 activations; the forward activations that the gradients read
// are random tensors uploaded once, as a training step would find them saved):
//   mobilenet_block  MobileNetV2 inverted residual, 24 -> 144 -> 24 channels: 1x1 expand conv,
//                    BN, depthwise 3x3, BN, 1x1 project conv, BN. Backward: 3 FusedBatchNormGrad,
//                    2 x Conv2DBackprop{Filter,Input} (1x1), DepthwiseConv2dNativeBackprop{Filter,Input}.
//   resnet_block     ResNet basic block, 64 channels: 3x3 conv, BN, 3x3 conv, BN, identity shortcut.
//                    Backward: 2 FusedBatchNormGrad, 2 x Conv2DBackprop{Filter,Input} (3x3).
// The relu/relu6 gradients and the shortcut's add are not gradrt kernels: the chain passes each
// gradient straight on (same shapes, same kernels as with them).
// vulkan: the op-by-op run is each kernel as its own submission on host tensors (upload,
// dispatch, read back); the sequence run records the chain once into one command buffer on
// resident tensors and submits it `steps` times. cpu: the chain in order on host memory (no
// copies, no submissions), run twice. The JSON line has the contract's fields (docs in README).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend.h"
#include "parallel.h"
#include "bench/conv_shapes.h"
#include "status_macros.h"
#include "vulkan/context.h"
#include "vulkan/sequence.h"

namespace {

using gradrt::BatchNormParams;
using gradrt::Code;
using gradrt::ConvParams;
using gradrt::Status;

enum class Kind { conv_input, conv_filter, dw_input, dw_filter, bn_grad };

const char* op_name(Kind k) {
  switch (k) {
    case Kind::conv_input: return "Conv2DBackpropInput";
    case Kind::conv_filter: return "Conv2DBackpropFilter";
    case Kind::dw_input: return "DepthwiseConv2dNativeBackpropInput";
    case Kind::dw_filter: return "DepthwiseConv2dNativeBackpropFilter";
    case Kind::bn_grad: return "FusedBatchNormGrad";
  }
  return "?";
}

// One kernel of the chain: its params and its tensors by name, inputs then outputs in the
// order of the kernel's arguments (core/kernels.h).
struct Op {
  Kind kind;
  ConvParams conv;
  BatchNormParams bn;
  std::vector<std::string> args;
};

struct Model {
  std::map<std::string, int64_t> sizes;  // every tensor, elements
  std::vector<std::string> inputs;       // uploaded once (saved activations, weights, dy)
  std::vector<Op> ops;
};

BatchNormParams bn(int64_t rows, int64_t channels) {
  BatchNormParams p;
  p.rows = rows;
  p.channels = channels;
  p.epsilon = 0.001f;
  p.is_training = true;
  return p;
}

// Adds a conv layer's two gradients: x its (saved) input, w its filter, dy the gradient of its
// output -> dw, and dx the gradient of its input.
void add_conv(Model& m, const ConvParams& p, bool depthwise, const std::string& x, const std::string& w,
              const std::string& dy, const std::string& dw, const std::string& dx) {
  const int64_t w_elems = depthwise ? p.dw_w_elements() : p.w_elements();
  m.sizes[x] = p.x_elements();
  m.sizes[w] = w_elems;
  m.sizes[dw] = w_elems;
  m.sizes[dx] = p.x_elements();
  m.inputs.push_back(x);
  m.inputs.push_back(w);
  m.ops.push_back({depthwise ? Kind::dw_filter : Kind::conv_filter, p, {}, {x, dy, dw}});
  m.ops.push_back({depthwise ? Kind::dw_input : Kind::conv_input, p, {}, {w, dy, dx}});
}

// Adds FusedBatchNormGrad of a BN layer `l` whose input was `a_l`: dy -> da_l.
void add_bn(Model& m, int64_t rows, int64_t c, const std::string& l, const std::string& dy) {
  for (const char* t : {"a", "scale", "mean", "var"}) {
    m.sizes[t + l] = std::string(t) == "a" ? rows * c : c;
    m.inputs.push_back(t + l);
  }
  m.sizes["da" + l] = rows * c;
  m.sizes["dscale" + l] = m.sizes["doffset" + l] = c;
  m.ops.push_back({Kind::bn_grad, {}, bn(rows, c), {dy, "a" + l, "scale" + l, "mean" + l, "var" + l, "da" + l,
                                                       "dscale" + l, "doffset" + l}});
}

// A block's layers in forward order: a conv (`k` x `k`, ci -> co channels), a depthwise conv
// (co = ci), or a batch norm over co channels; all at stride 1 on 56x56.
struct Layer {
  enum { conv, depthwise, batch_norm } kind;
  int64_t ci, co, k;
};

// The backward chain: the layers in reverse, each turning the gradient of its output into the
// gradient of its input (layer i's saved input is x<i> / a<i>, its input gradient dx<i> / da<i>).
Status make_model(const std::string& name, int64_t n, Model* m) {
  std::vector<Layer> layers;
  if (name == "mobilenet_block")  // MobileNetV2's 56x56 block: 24 -> 144 (expansion 6) -> 24
    layers = {{Layer::conv, 24, 144, 1}, {Layer::batch_norm, 144, 144, 0}, {Layer::depthwise, 144, 144, 3},
              {Layer::batch_norm, 144, 144, 0}, {Layer::conv, 144, 24, 1}, {Layer::batch_norm, 24, 24, 0}};
  else if (name == "resnet_block")  // ResNet's basic block at 56x56x64
    layers = {{Layer::conv, 64, 64, 3}, {Layer::batch_norm, 64, 64, 0}, {Layer::conv, 64, 64, 3},
              {Layer::batch_norm, 64, 64, 0}};
  else
    return Status(Code::InvalidArgument, "--model must be mobilenet_block or resnet_block, got " + name);
  const int64_t hw = 56, rows = n * hw * hw;
  std::string g = "dy";
  m->sizes[g] = rows * layers.back().co;
  m->inputs.push_back(g);
  for (size_t i = layers.size(); i-- > 0;) {
    const Layer& l = layers[i];
    const std::string id = std::to_string(i);
    if (l.kind == Layer::batch_norm) {
      add_bn(*m, rows, l.co, id, g);
      g = "da" + id;
    } else {
      const bool dw = l.kind == Layer::depthwise;
      add_conv(*m, gradrt::bench::same_conv(n, hw, l.ci, l.co, l.k, 1, dw), dw, "x" + id, "w" + id, g, "dw" + id,
               "dx" + id);
      g = "dx" + id;
    }
  }
  return Status::OK();
}

// The kernel call of op `o` on backend `b`, its tensors found by `ptr`.
template <class Ptr>
Status call(gradrt::Backend* b, const Op& o, Ptr ptr) {
  const gradrt::Exec exec{gradrt::default_threads()};  // resolved, as core does (0 is not a count)
  const auto& a = o.args;
  switch (o.kind) {
    case Kind::conv_input: return b->conv2d_backprop_input(exec, o.conv, ptr(a[0]), ptr(a[1]), ptr(a[2]));
    case Kind::conv_filter: return b->conv2d_backprop_filter(exec, o.conv, ptr(a[0]), ptr(a[1]), ptr(a[2]));
    case Kind::dw_input:
      return b->depthwise_conv2d_native_backprop_input(exec, o.conv, ptr(a[0]), ptr(a[1]), ptr(a[2]));
    case Kind::dw_filter:
      return b->depthwise_conv2d_native_backprop_filter(exec, o.conv, ptr(a[0]), ptr(a[1]), ptr(a[2]));
    case Kind::bn_grad:
      return b->fused_batch_norm_grad(exec, o.bn, ptr(a[0]), ptr(a[1]), ptr(a[2]), ptr(a[3]), ptr(a[4]), ptr(a[5]),
                                      ptr(a[6]), ptr(a[7]));
  }
  return Status(Code::Internal, "unknown kind");
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Bytes an op must move at least (each operand read or written once) and its multiply-adds x 2.
void op_cost(const Model& m, const Op& o, double* bytes, double* flops) {
  *bytes = 0;
  for (const std::string& t : o.args) *bytes += 4.0 * m.sizes.at(t);
  const ConvParams& p = o.conv;
  switch (o.kind) {
    case Kind::conv_input:
    case Kind::conv_filter: *flops = 2.0 * p.y_elements() * p.filter_h * p.filter_w * p.filter_in_c; break;
    case Kind::dw_input:
    case Kind::dw_filter: *flops = 2.0 * p.y_elements() * p.filter_h * p.filter_w; break;
    case Kind::bn_grad: *flops = 10.0 * o.bn.rows * o.bn.channels; break;
  }
}

std::string op_shape(const Op& o) {
  char s[128];
  const ConvParams& p = o.conv;
  if (o.kind == Kind::bn_grad)
    std::snprintf(s, sizeof s, "%lldx%lld", (long long)o.bn.rows, (long long)o.bn.channels);
  else
    std::snprintf(s, sizeof s, "%lldx%lldx%lldx%lld f%lld s%lld -> %lld", (long long)p.batch, (long long)p.in_h,
                  (long long)p.in_w, (long long)p.in_c, (long long)p.filter_h, (long long)p.stride_h,
                  (long long)p.out_c);
  return s;
}

struct Result {
  std::vector<double> op_gpu_ms;  // vulkan op by op: each kernel's GPU time (median over steps)
  double op_by_op_wall_ms = 0, op_by_op_gpu_ms = 0;
  double wall_ms = 0, gpu_ms = 0;
  double submissions = 0, to_device = 0, to_host = 0;  // per sequence step
  double max_abs_diff = 0;
  size_t dispatches = 0;
};

using Host = std::map<std::string, std::vector<float>>;

float max_abs_diff(const Host& a, const Host& b) {
  float d = 0;
  for (const auto& [name, v] : a) {
    const std::vector<float>& w = b.at(name);
    for (size_t i = 0; i < v.size(); ++i) {
      const float e = std::fabs(v[i] - w[i]);
      d = std::max(d, std::isnan(e) ? INFINITY : e);
    }
  }
  return d;
}

// The chain op by op on host tensors `t`; per-op GPU times when `ctx` (vulkan) has timing on.
Status run_op_by_op(gradrt::Backend* b, gradrt::vk::Context* ctx, const Model& m, Host& t, std::vector<double>* gpu) {
  gpu->assign(m.ops.size(), 0);
  for (size_t i = 0; i < m.ops.size(); ++i) {
    Status s = call(b, m.ops[i], [&](const std::string& name) { return t.at(name).data(); });
    if (!s.ok()) return s;
    if (ctx) (*gpu)[i] = ctx->last_gpu_ms();
  }
  return Status::OK();
}

Status run(const std::string& backend, const Model& m, int steps, Result* r, Host* outputs) {
  Host host;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1, 1);
  for (const auto& [name, n] : m.sizes) {
    std::vector<float>& v = host[name];
    v.resize(static_cast<size_t>(n));
    for (float& e : v) e = d(rng);
    if (name.rfind("var", 0) == 0)
      for (float& e : v) e = 0.5f + std::fabs(e);
  }
  const bool vulkan = backend == "vulkan";
  gradrt::Backend* b = vulkan ? gradrt::vulkan_backend() : gradrt::cpu_backend();
  if (!b) return Status(Code::Unavailable, "gradrt was built without the vulkan backend");
  gradrt::vk::Context* ctx = nullptr;
  if (vulkan) {
    Status s;
    ctx = gradrt::vk::backend_context(&s);
    if (!ctx) return s;
    ctx->set_timing(true);
  }

  // Op by op (vulkan: one submission per kernel, copies both ways), `steps` + 1 warm-up times.
  std::vector<double> wall, gpu_total;
  std::vector<std::vector<double>> per_op(m.ops.size());
  Host op_by_op = host;
  for (int i = 0; i <= steps; ++i) {
    std::vector<double> g;
    const double t0 = now_ms();
    GRADRT_RETURN_IF_ERROR(run_op_by_op(b, ctx, m, op_by_op, &g));
    if (i == 0) continue;
    wall.push_back(now_ms() - t0);
    double sum = 0;
    for (size_t k = 0; k < g.size(); ++k) per_op[k].push_back(g[k]), sum += g[k];
    gpu_total.push_back(sum);
  }
  r->op_by_op_wall_ms = median(wall);
  r->op_by_op_gpu_ms = median(gpu_total);
  for (auto& v : per_op) r->op_gpu_ms.push_back(median(v));

  // The sequence: cpu runs the chain in order again on its own tensors (nothing to record).
  Host seq = host;
  wall.clear();
  std::vector<double> gpu;
  if (!vulkan) {
    for (int i = 0; i <= steps; ++i) {
      std::vector<double> g;
      const double t0 = now_ms();
      GRADRT_RETURN_IF_ERROR(run_op_by_op(b, nullptr, m, seq, &g));
      if (i) wall.push_back(now_ms() - t0);
    }
    r->dispatches = m.ops.size();
  } else {
    // Resident tensors: every tensor of the chain, the inputs uploaded once.
    gradrt::vk::Residents& res = ctx->residents();
    std::map<std::string, void*> key;
    auto free_all = [&] {
      for (auto& [name, k] : key) res.destroy(k);
    };
    for (const auto& [name, n] : m.sizes) {
      Status s = res.create(4 * static_cast<size_t>(n), &key[name]);
      if (!s.ok()) return free_all(), s;
    }
    {
      gradrt::vk::Job up(*ctx, false);
      for (const std::string& name : m.inputs)
        if (Status s = up.upload(key[name], host[name].data(), 4 * host[name].size()); !s.ok()) return free_all(), s;
      if (Status s = up.run(); !s.ok()) return free_all(), s;
    }
    gradrt::vk::Sequence sequence(*ctx);
    Status s = sequence.begin();
    for (size_t i = 0; s.ok() && i < m.ops.size(); ++i)
      s = call(b, m.ops[i], [&](const std::string& name) { return static_cast<float*>(key[name]); });
    sequence.end();
    r->dispatches = sequence.dispatches();
    const gradrt::vk::Context::Counters c0 = ctx->counters();
    for (int i = 0; s.ok() && i <= steps; ++i) {
      const double t0 = now_ms();
      s = sequence.run();
      if (i) wall.push_back(now_ms() - t0), gpu.push_back(ctx->last_gpu_ms());
    }
    const gradrt::vk::Context::Counters c1 = ctx->counters();
    r->submissions = double(c1.submissions - c0.submissions) / (steps + 1);
    r->to_device = double(c1.bytes_to_device - c0.bytes_to_device) / (steps + 1);
    r->to_host = double(c1.bytes_to_host - c0.bytes_to_host) / (steps + 1);
    // Download every tensor the chain wrote.
    if (s.ok()) {
      gradrt::vk::Job down(*ctx, false);
      for (const auto& [name, v] : seq)
        if (s.ok() && std::find(m.inputs.begin(), m.inputs.end(), name) == m.inputs.end())
          s = down.download(key[name], seq[name].data(), 4 * v.size());
      if (s.ok()) s = down.run();
    }
    free_all();
    GRADRT_RETURN_IF_ERROR(s);
  }
  r->wall_ms = median(wall);
  r->gpu_ms = median(gpu);
  for (const std::string& name : m.inputs) op_by_op.erase(name), seq.erase(name);
  r->max_abs_diff = max_abs_diff(op_by_op, seq);
  *outputs = std::move(seq);
  return Status::OK();
}

// The host CPU's model name (/proc/cpuinfo), for the cpu rows and the wall times.
std::string cpu_model() {
  std::FILE* f = std::fopen("/proc/cpuinfo", "r");
  char line[512];
  std::string name = "unknown CPU";
  while (f && std::fgets(line, sizeof line, f))
    if (!std::strncmp(line, "model name", 10) && std::strchr(line, ':')) {
      name = std::strchr(line, ':') + 2;
      name.erase(name.find_last_not_of("\n ") + 1);
      break;
    }
  if (f) std::fclose(f);
  return name;
}

int usage() {
  std::fprintf(stderr,
               "usage: gradrt_step --backend vulkan|cpu --model mobilenet_block|resnet_block --batch N "
               "[--steps S] [--json]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "vulkan", model = "mobilenet_block";
  int64_t batch = 8;
  int steps = 10;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--backend" && more) backend = argv[++i];
    else if (a == "--model" && more) model = argv[++i];
    else if (a == "--batch" && more) batch = std::atoll(argv[++i]);
    else if (a == "--steps" && more) steps = std::atoi(argv[++i]);
    else if (a == "--json") json = true;
    else return usage();
  }
  if ((backend != "vulkan" && backend != "cpu") || batch < 1 || batch > 4096 || steps < 1) return usage();
  Model m;
  Status s = make_model(model, batch, &m);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return 2;
  }
  Result r;
  Host outputs;
  s = run(backend, m, steps, &r, &outputs);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.to_string().c_str());
    return s.code() == Code::Unavailable ? 3 : 1;
  }
  std::string device = gradrt::cpu_backend()->detail(), cpu = cpu_model();
  if (backend == "vulkan") {
    Status ignored;
    device = gradrt::vk::backend_context(&ignored)->info().props.deviceName;
  }
  device = device.substr(0, device.find('\n'));
  for (std::string* text : {&device, &cpu})
    for (char& c : *text)
      if (c == '"' || c == '\\') c = '\'';

  std::string ops = "[";
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const Op& o = m.ops[i];
    double bytes = 0, flops = 0;
    op_cost(m, o, &bytes, &flops);
    const ConvParams& p = o.conv;
    char row[512];
    std::snprintf(row, sizeof row,
                  "%s{\"op\":\"%s\",\"shape\":\"%s\",\"n\":%lld,\"h\":%lld,\"w\":%lld,\"ci\":%lld,\"co\":%lld,"
                  "\"k\":%lld,\"stride\":%lld,\"rows\":%lld,\"channels\":%lld,\"bytes\":%.0f,\"flops\":%.0f,"
                  "\"gpu_ms\":%.4f}",
                  i ? "," : "", op_name(o.kind), op_shape(o).c_str(), (long long)p.batch, (long long)p.in_h,
                  (long long)p.in_w, (long long)p.in_c, (long long)p.out_c, (long long)p.filter_h,
                  (long long)p.stride_h, (long long)o.bn.rows, (long long)o.bn.channels, bytes, flops,
                  backend == "vulkan" ? r.op_gpu_ms[i] : 0.0);
    ops += row;
  }
  ops += "]";
  // GRADRT_VULKAN_SHADERS: v1 (scalar session-9 shaders), v4 (session 10's) or v5 (the default);
  // GRADRT_VULKAN_WAIT=spin|block (default: spin on a real GPU, block on a CPU device). bench/shader_ab.py labels its
  // columns with these two fields.
  const std::string env_shaders = std::getenv("GRADRT_VULKAN_SHADERS") ? std::getenv("GRADRT_VULKAN_SHADERS") : "";
  const std::string env_wait = std::getenv("GRADRT_VULKAN_WAIT") ? std::getenv("GRADRT_VULKAN_WAIT") : "";
  const char* shaders = backend != "vulkan" ? "-" : env_shaders == "v1" ? "v1" : env_shaders == "v4" ? "v4" : "v5";
  const char* wait = backend != "vulkan" ? "-" : env_wait == "spin" ? "spin" : env_wait == "block" ? "block" : "default";
  if (json) {
    std::printf(
        "{\"backend\":\"%s\",\"shaders\":\"%s\",\"wait\":\"%s\",\"model\":\"%s\",\"batch\":%lld,\"device\":\"%s\",\"cpu\":\"%s\",\"steps\":%d,\"kernels\":%zu,"
        "\"dispatches_per_step\":%zu,\"submissions_per_step\":%g,\"bytes_to_device_per_step\":%.0f,"
        "\"bytes_to_host_per_step\":%.0f,\"max_abs_diff_vs_op_by_op\":%g,\"gpu_ms\":%.4f,\"wall_ms\":%.4f,"
        "\"op_by_op_gpu_ms\":%.4f,\"op_by_op_wall_ms\":%.4f,\"ops\":%s}\n",
        backend.c_str(), shaders, wait, model.c_str(), (long long)batch, device.c_str(), cpu.c_str(), steps, m.ops.size(), r.dispatches,
        r.submissions, r.to_device, r.to_host, r.max_abs_diff, r.gpu_ms, r.wall_ms, r.op_by_op_gpu_ms,
        r.op_by_op_wall_ms, ops.c_str());
    return 0;
  }
  std::printf("%s %s batch %lld on %s (host %s): %zu kernels, %zu dispatches per step\n", model.c_str(),
              backend.c_str(), (long long)batch, device.c_str(), cpu.c_str(), m.ops.size(), r.dispatches);
  std::printf("  sequence:  wall %.3f ms, gpu %.3f ms, %g submissions, %.0f B to device, %.0f B to host per step\n",
              r.wall_ms, r.gpu_ms, r.submissions, r.to_device, r.to_host);
  std::printf("  op by op:  wall %.3f ms, gpu %.3f ms (sum of kernels)\n", r.op_by_op_wall_ms, r.op_by_op_gpu_ms);
  std::printf("  max |sequence - op by op| = %g\n", r.max_abs_diff);
  return 0;
}

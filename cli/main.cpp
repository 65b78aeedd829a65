// gradrt: the command-line tool (shared/spec/contract.md, "Command line").
//
//   gradrt run OP [--attr NAME=VALUE]... [--input NAME=FILE.npy]... --out DIR
//              [--backend reference|cpu|vulkan|auto] [--threads N] [--repeat N]
//   gradrt ops | devices | --version
//
// Exit 0 on success, 1 with the `Code: message` status line on stderr for a bad input,
// 2 with the usage for bad command-line usage. A failed run writes no file into DIR:
// outputs are written only after the op (and every --repeat run) succeeded.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "gradrt/gradrt.h"
#include "npy.h"
#include "parallel.h"

namespace {

using gradrt::Code;
using gradrt::Status;

constexpr int kExitOk = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitUsage = 2;

constexpr const char* kUsage =
    "usage:\n"
    "  gradrt run OP [--attr NAME=VALUE]... [--input NAME=FILE.npy]... --out DIR\n"
    "             [--backend reference|cpu|vulkan|auto] [--threads N] [--repeat N]\n"
    "  gradrt ops                 every op, with the backends that implement it\n"
    "  gradrt devices             the backends, whether they can run here, and what they use\n"
    "  gradrt show FILE.npy       a tensor's shape, dtype, statistics and first values\n"
    "  gradrt --version\n"
    "VALUE is JSON ([1,2,2,1], \"SAME\", 0.001, true); a bare word that is not JSON is a string.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "gradrt: %s\n%s", message.c_str(), kUsage);
  return kExitUsage;
}

int status_error(const Status& s) {
  std::fprintf(stderr, "%s\n", s.to_string().c_str());
  return kExitBadInput;
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : ",") + item;
  return s;
}

// ---------------------------------------------------------------- gradrt run: arguments

using NamedValues = std::vector<std::pair<std::string, std::string>>;  // NAME=VALUE, in order

struct RunArgs {
  std::string op;
  NamedValues attrs;   // attribute name, JSON (or bare word) text
  NamedValues inputs;  // input name, .npy path
  std::string out_dir;
  gradrt::RunOptions options;
  int repeat = 0;
};

// "NAME=VALUE" -> (NAME, VALUE), refusing an empty or repeated NAME. "" on success.
std::string add_named(const std::string& option, const std::string& text, NamedValues* out) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return option + " expects NAME=VALUE, got '" + text + "'";
  std::string name = text.substr(0, eq);
  for (const auto& [seen, value] : *out)
    if (seen == name) return option + " " + name + " given twice";
  out->emplace_back(std::move(name), text.substr(eq + 1));
  return "";
}

std::string parse_count(const std::string& option, const std::string& text, int max, int* out) {
  int v = -1;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || v < 0 || v > max)
    return option + " expects an integer in [0, " + std::to_string(max) + "], got '" + text + "'";
  *out = v;
  return "";
}

// Applies one option with its value. "" on success, else the usage error.
std::string apply_option(const std::string& option, const std::string& value, RunArgs* args) {
  if (option == "--attr") return add_named(option, value, &args->attrs);
  if (option == "--input") return add_named(option, value, &args->inputs);
  if (option == "--out") {
    if (value.empty()) return "--out expects a directory";
    args->out_dir = value;
    return "";
  }
  if (option == "--backend") {
    args->options.backend = value;  // an unknown name is core's NotFound, not a usage error
    return "";
  }
  if (option == "--threads") return parse_count(option, value, 4096, &args->options.threads);
  if (option == "--repeat") return parse_count(option, value, 1000000, &args->repeat);
  return "unknown option '" + option + "'";
}

// Accepts both `--opt value` and `--opt=value`. "" on success, else the usage error.
std::string parse_run_args(const std::vector<std::string>& argv, RunArgs* args) {
  for (size_t k = 0; k < argv.size(); ++k) {
    const std::string& a = argv[k];
    if (a.size() < 2 || a.compare(0, 2, "--") != 0) {
      if (!args->op.empty()) return "unexpected argument '" + a + "' (the op is '" + args->op + "')";
      args->op = a;
      continue;
    }
    std::string option = a, value;
    const size_t eq = a.find('=');
    if (eq != std::string::npos) {
      option = a.substr(0, eq);
      value = a.substr(eq + 1);
    } else {
      if (k + 1 >= argv.size()) return option + " needs a value";
      value = argv[++k];
    }
    std::string error = apply_option(option, value, args);
    if (!error.empty()) return error;
  }
  if (args->op.empty()) return "run needs an OP";
  if (args->out_dir.empty()) return "run needs --out DIR";
  return "";
}

// ---------------------------------------------------------------- gradrt run: inputs and attributes

// VALUE is JSON; a bare word that is not JSON (SAME, bfloat16) is a string. Text that was
// evidently meant as JSON but is malformed ("[1,2", "{...}") is an error, not a string.
Status parse_attr_value(const std::string& name, const std::string& text, gradrt::AttrValue* out) {
  Status s = gradrt::AttrValue::parse_json(text, out);
  if (s.ok()) return s;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && std::string_view("[{\"-0123456789").find(text[first]) != std::string_view::npos)
    return Status(Code::InvalidArgument, "--attr " + name + ": " + s.message());
  *out = gradrt::AttrValue(text);
  return Status::OK();
}

Status parse_attrs(const NamedValues& attrs, gradrt::Attrs* out) {
  for (const auto& [name, text] : attrs) {
    gradrt::AttrValue v;
    Status s = parse_attr_value(name, text, &v);
    if (!s.ok()) return s;
    (*out)[name] = std::move(v);
  }
  return Status::OK();
}

// Reads every --input file into `storage`; `views` point into it.
Status load_inputs(const NamedValues& inputs, std::vector<gradrt::Tensor>* storage, gradrt::Inputs* views) {
  storage->reserve(inputs.size());
  for (const auto& [name, path] : inputs) {
    gradrt::Tensor t;
    Status s = gradrt::npy::read_file(path, &t);
    if (!s.ok()) return Status(s.code(), "input '" + name + "' (" + path + "): " + s.message());
    storage->push_back(std::move(t));
    (*views)[name] = storage->back().view();
  }
  return Status::OK();
}

// ---------------------------------------------------------------- gradrt run: running and writing

struct Timing {
  std::vector<double> ms;  // one per --repeat run
};

// The first run, whose outputs are kept, then `repeat` timed runs whose outputs are dropped.
Status run_op(const RunArgs& args, const gradrt::Inputs& inputs, const gradrt::Attrs& attrs,
              gradrt::Outputs* outputs, gradrt::RunInfo* info, Timing* timing) {
  Status s = gradrt::run_op(args.op, inputs, attrs, outputs, args.options, info);
  for (int r = 0; s.ok() && r < args.repeat; ++r) {
    gradrt::Outputs scratch;
    const auto t0 = std::chrono::steady_clock::now();
    s = gradrt::run_op(args.op, inputs, attrs, &scratch, args.options, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    timing->ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void print_timing(const RunArgs& args, const gradrt::RunInfo& info, const Timing& timing) {
  const int threads = args.options.threads > 0 ? args.options.threads : gradrt::default_threads();
  const double min_ms = *std::min_element(timing.ms.begin(), timing.ms.end());
  std::printf("{\"op\":%s,\"backend\":%s,\"threads\":%d,\"runs\":%zu,\"median_ms\":%.4f,\"min_ms\":%.4f}\n",
              gradrt::AttrValue(args.op).to_json().c_str(), gradrt::AttrValue(info.backend).to_json().c_str(),
              threads, timing.ms.size(), median(timing.ms), min_ms);
}

// DIR/<output name>.npy for each output. If one write fails, the ones already written are
// removed again: a failed run leaves no files.
Status write_outputs(const std::string& dir, const gradrt::Outputs& outputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    return Status(Code::InvalidArgument, "--out " + dir + ": cannot create the directory" +
                                             (ec ? ": " + ec.message() : std::string()));
  std::vector<fs::path> written;
  for (const auto& [name, tensor] : outputs) {
    const fs::path path = fs::path(dir) / (name + ".npy");
    Status s = gradrt::npy::write_file(path.string(), tensor.view());
    if (!s.ok()) {
      for (const fs::path& p : written) fs::remove(p, ec);
      return s;
    }
    written.push_back(path);
  }
  return Status::OK();
}

int cmd_run(const std::vector<std::string>& argv) {
  RunArgs args;
  std::string error = parse_run_args(argv, &args);
  if (!error.empty()) return usage_error(error);

  gradrt::Attrs attrs;
  Status s = parse_attrs(args.attrs, &attrs);
  if (!s.ok()) return status_error(s);
  std::vector<gradrt::Tensor> storage;
  gradrt::Inputs inputs;
  s = load_inputs(args.inputs, &storage, &inputs);
  if (!s.ok()) return status_error(s);

  gradrt::Outputs outputs;
  gradrt::RunInfo info;
  Timing timing;
  s = run_op(args, inputs, attrs, &outputs, &info, &timing);
  if (!s.ok()) return status_error(s);
  s = write_outputs(args.out_dir, outputs);
  if (!s.ok()) return status_error(s);
  if (args.repeat > 0) print_timing(args, info, timing);
  return kExitOk;
}

// ---------------------------------------------------------------- gradrt ops | devices | --version

// The backends built into this gradrt: each implements every op (a kernel a device backend
// lacks falls back to cpu under --backend auto).
std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const gradrt::BackendInfo& b : gradrt::backends()) names.push_back(b.name);
  return names;
}

int cmd_ops() {
  size_t width = 0;
  for (const gradrt::OpInfo& op : gradrt::ops()) width = std::max(width, op.name.size());
  const std::string backends = join(backend_names());
  for (const gradrt::OpInfo& op : gradrt::ops())
    std::printf("%-*s  inputs: %s  outputs: %s  backends: %s\n", static_cast<int>(width), op.name.c_str(),
                join(op.inputs).c_str(), join(op.outputs).c_str(), backends.c_str());
  return kExitOk;
}

// gradrt show FILE.npy: shape, dtype, statistics and the first values of a tensor.
int cmd_show(const std::string& path) {
  gradrt::Tensor t;
  Status s = gradrt::npy::read_file(path, &t);
  if (!s.ok()) return status_error(s);
  double sum = 0, sum_abs = 0, lo = 0, hi = 0;
  const int64_t n = t.num_elements();
  auto value = [&](int64_t i) {
    switch (t.dtype()) {
      case gradrt::DType::float16: return static_cast<double>(gradrt::half_to_float(t.data_as<uint16_t>()[i]));
      case gradrt::DType::bfloat16: return static_cast<double>(gradrt::bfloat16_to_float(t.data_as<uint16_t>()[i]));
      case gradrt::DType::float32: return static_cast<double>(t.data_as<float>()[i]);
      case gradrt::DType::float64: return t.data_as<double>()[i];
      case gradrt::DType::int32: return static_cast<double>(t.data_as<int32_t>()[i]);
      case gradrt::DType::int64: return static_cast<double>(t.data_as<int64_t>()[i]);
    }
    return 0.0;
  };
  for (int64_t i = 0; i < n; ++i) {
    const double v = value(i);
    sum += v;
    sum_abs += std::fabs(v);
    lo = i == 0 ? v : std::min(lo, v);
    hi = i == 0 ? v : std::max(hi, v);
  }
  std::string shape;
  for (int64_t d : t.shape()) shape += (shape.empty() ? "" : ",") + std::to_string(d);
  std::printf("%s: %s [%s]  sum %.6g  mean|x| %.6g  min %.6g  max %.6g  first:", path.c_str(),
              gradrt::dtype_name(t.dtype()), shape.c_str(), sum, n ? sum_abs / n : 0.0, lo, hi);
  for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i) std::printf(" %.6g", value(i));
  std::printf("\n");
  return kExitOk;
}

int cmd_devices() {
  for (const gradrt::BackendInfo& b : gradrt::backends())
    std::printf("%-10s %-12s %s\n", b.name.c_str(), b.available ? "available" : "unavailable", b.detail.c_str());
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("missing command");
  const std::string& command = args[0];
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "--help" || command == "-h" || command == "help") {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  if (command == "run") return cmd_run(rest);
  if (command == "show") {
    if (rest.size() != 1) return usage_error("show takes one .npy file");
    return cmd_show(rest[0]);
  }
  if (!rest.empty()) return usage_error("'" + command + "' takes no arguments");
  if (command == "--version") {
    std::printf("gradrt %s\n", gradrt::version());
    return kExitOk;
  }
  if (command == "ops") return cmd_ops();
  if (command == "devices") return cmd_devices();
  return usage_error("unknown command '" + command + "'");
}

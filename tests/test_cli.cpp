// The gradrt command-line tool, run as a separate process (contract.md, "Command line").
// tests/CMakeLists.txt gives the binary's path as GRADRT_CLI_PATH (and, when cross-compiling,
// the emulator that runs it as GRADRT_CLI_EMULATOR).
#include <doctest/doctest.h>

#ifdef GRADRT_CLI_PATH

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"
#include "npy.h"

namespace {

namespace fs = std::filesystem;
using gradrt::DType;
using gradrt::TensorView;

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("gradrt_test_cli_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs `gradrt ARGS...` with stdout and stderr captured in files under `dir`.
CliResult run_cli(const std::vector<std::string>& args, const fs::path& dir) {
  std::string command;
#ifdef GRADRT_CLI_EMULATOR
  command = std::string(GRADRT_CLI_EMULATOR) + " ";
#endif
  command += quote(GRADRT_CLI_PATH);
  for (const std::string& a : args) command += " " + quote(a);
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  command += " >" + quote(out.string()) + " 2>" + quote(err.string());
  const int status = std::system(command.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

int count_entries(const fs::path& dir) {
  if (!fs::exists(dir)) return 0;
  int n = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++n;
  return n;
}

// ops.md 2.5 (TF's conv_ops_test): input_sizes [1,2,3,1], filter [2,2,1,1] = 1..4,
// out_backprop [1,1,2,1] = 1..2, VALID, stride 1 -> output 1,4,4,3,10,8.
struct ConvCase {
  fs::path dir, input_sizes, filter, out_backprop, out;
};

ConvCase write_conv_case(const std::string& name) {
  ConvCase c;
  c.dir = fresh_dir(name);
  c.input_sizes = c.dir / "input_sizes.npy";
  c.filter = c.dir / "filter.npy";
  c.out_backprop = c.dir / "out_backprop.npy";
  c.out = c.dir / "out";
  const std::vector<int32_t> sizes = {1, 2, 3, 1};
  const std::vector<float> w = {1, 2, 3, 4}, dy = {1, 2};
  REQUIRE(gradrt::npy::write_file(c.input_sizes.string(), TensorView{DType::int32, {4}, sizes.data()}).ok());
  REQUIRE(gradrt::npy::write_file(c.filter.string(), TensorView{DType::float32, {2, 2, 1, 1}, w.data()}).ok());
  REQUIRE(gradrt::npy::write_file(c.out_backprop.string(), TensorView{DType::float32, {1, 1, 2, 1}, dy.data()}).ok());
  return c;
}

// The command line for c, with one input file or attribute value swapped where a test asks.
struct ConvArgs {
  std::string filter = "";  // "" = the case's own filter file
  std::string strides = "[1,1,1,1]";
  std::string padding = "VALID";
};

std::vector<std::string> conv_args(const ConvCase& c, ConvArgs a = {}) {
  if (a.filter.empty()) a.filter = c.filter.string();
  return {"run", "Conv2DBackpropInput",
          "--input", "input_sizes=" + c.input_sizes.string(),
          "--input", "filter=" + a.filter,
          "--input", "out_backprop=" + c.out_backprop.string(),
          "--attr", "strides=" + a.strides,
          "--attr", "padding=" + a.padding,
          "--out", c.out.string()};
}

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("cli: --version, ops and devices") {
  const fs::path dir = fresh_dir("info");
  CliResult r = run_cli({"--version"}, dir);
  CHECK(r.exit_code == 0);
  CHECK(starts_with(r.out, "gradrt "));

  r = run_cli({"ops"}, dir);
  CHECK(r.exit_code == 0);
  const char* expected_ops[] = {
      "Conv2DBackpropInput", "Conv2DBackpropInputV2", "Conv2DBackpropFilter", "Conv2DBackpropFilterV2",
      "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter", "FractionalAvgPoolGrad",
      "FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3", "Conv2D", "DepthwiseConv2dNative",
      "FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3", "FractionalAvgPool"};
  for (const char* op : expected_ops) {
    CAPTURE(op);
    CHECK((starts_with(r.out, std::string(op) + " ") || contains(r.out, "\n" + std::string(op) + " ")));
  }
  CHECK(contains(r.out, "inputs: input_sizes,filter,out_backprop  outputs: output  backends: reference,cpu"));
  CHECK(contains(r.out, "outputs: x_backprop,scale_backprop,offset_backprop,reserve_space_4,reserve_space_5"));

  r = run_cli({"devices"}, dir);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "reference"));
  CHECK(contains(r.out, "cpu"));
  fs::remove_all(dir);
}

TEST_CASE("cli: Conv2DBackpropInput round trip with TensorFlow's numbers") {
  const ConvCase c = write_conv_case("conv");
  // padding as a bare word and as a JSON string; every backend that can run here.
  for (const std::string padding : {"VALID", "\"VALID\""}) {
    for (const std::string backend : {"reference", "auto"}) {
      CAPTURE(padding);
      CAPTURE(backend);
      fs::remove_all(c.out);
      const CliResult r = run_cli(with(conv_args(c, {.padding = padding}), {"--backend", backend}), c.dir);
      CAPTURE(r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.out.empty());
      CHECK(count_entries(c.out) == 1);
      gradrt::Tensor dx;
      REQUIRE(gradrt::npy::read_file((c.out / "output.npy").string(), &dx).ok());
      CHECK(dx.dtype() == DType::float32);
      CHECK(dx.shape() == std::vector<int64_t>{1, 2, 3, 1});
      const float* p = dx.data_as<float>();
      CHECK(std::vector<float>(p, p + dx.num_elements()) == std::vector<float>{1, 4, 4, 3, 10, 8});
    }
  }
  fs::remove_all(c.dir);
}

TEST_CASE("cli: --attr T=bfloat16 passes through; outputs stay float32") {
  const ConvCase c = write_conv_case("bf16");
  // 1..4 and 1..2 are exact in bfloat16, and so are the sums: the same numbers come back.
  const CliResult r = run_cli(with(conv_args(c), {"--attr", "T=bfloat16", "--backend", "reference"}), c.dir);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  gradrt::Tensor dx;
  REQUIRE(gradrt::npy::read_file((c.out / "output.npy").string(), &dx).ok());
  CHECK(dx.dtype() == DType::float32);
  const float* p = dx.data_as<float>();
  CHECK(std::vector<float>(p, p + dx.num_elements()) == std::vector<float>{1, 4, 4, 3, 10, 8});
  fs::remove_all(c.dir);
}

TEST_CASE("cli: an op with several outputs writes each as DIR/<name>.npy") {
  // FusedBatchNormGrad, training, x = 1..4 in one channel with its batch mean 2.5 and variance
  // 1.25, dy = 1: offset_backprop = sum(dy) = 4; scale_backprop = sum(dy * x_hat) = 0 and
  // x_backprop = 0 because dy is constant.
  const fs::path dir = fresh_dir("bn");
  const std::vector<float> dy = {1, 1, 1, 1}, x = {1, 2, 3, 4}, scale = {2}, mean = {2.5f}, var = {1.25f};
  const auto put = [&](const char* name, std::vector<int64_t> shape, const std::vector<float>& v) {
    const std::string path = (dir / (std::string(name) + ".npy")).string();
    REQUIRE(gradrt::npy::write_file(path, TensorView{DType::float32, std::move(shape), v.data()}).ok());
    return std::string(name) + "=" + path;
  };
  const CliResult r = run_cli({"run", "FusedBatchNormGrad", "--backend", "reference",
                               "--input", put("y_backprop", {1, 2, 2, 1}, dy), "--input", put("x", {1, 2, 2, 1}, x),
                               "--input", put("scale", {1}, scale), "--input", put("reserve_space_1", {1}, mean),
                               "--input", put("reserve_space_2", {1}, var), "--attr", "epsilon=0.001",
                               "--out", (dir / "out").string()},
                              dir);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_entries(dir / "out") == 5);
  for (const char* name : {"x_backprop", "scale_backprop", "offset_backprop", "reserve_space_3", "reserve_space_4"}) {
    CAPTURE(name);
    gradrt::Tensor t;
    REQUIRE(gradrt::npy::read_file((dir / "out" / (std::string(name) + ".npy")).string(), &t).ok());
    CHECK(t.dtype() == DType::float32);
    const float* p = t.data_as<float>();
    if (std::string(name) == "x_backprop") {
      CHECK(t.shape() == std::vector<int64_t>{1, 2, 2, 1});
      for (int64_t i = 0; i < t.num_elements(); ++i) CHECK(p[i] == doctest::Approx(0).epsilon(1e-5));
    } else if (std::string(name) == "scale_backprop") {
      CHECK(t.shape() == std::vector<int64_t>{1});
      CHECK(p[0] == doctest::Approx(0).epsilon(1e-5));
    } else if (std::string(name) == "offset_backprop") {
      CHECK(t.shape() == std::vector<int64_t>{1});
      CHECK(p[0] == 4.0f);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("cli: --repeat prints one JSON line") {
  const ConvCase c = write_conv_case("repeat");
  const CliResult r = run_cli(with(conv_args(c), {"--backend=reference", "--repeat", "3", "--threads", "2"}), c.dir);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(starts_with(r.out, R"({"op":"Conv2DBackpropInput","backend":"reference","threads":2,"runs":3,"median_ms":)"));
  CHECK(contains(r.out, ",\"min_ms\":"));
  CHECK(r.out.size() > 2);
  CHECK(r.out.substr(r.out.size() - 2) == "}\n");
  CHECK(r.out.find('\n') == r.out.size() - 1);
  CHECK(fs::exists(c.out / "output.npy"));
  fs::remove_all(c.dir);
}

TEST_CASE("cli: bad inputs exit 1 with a status line and write no files") {
  const ConvCase c = write_conv_case("bad");
  struct Case {
    const char* what;
    std::vector<std::string> args;
    const char* status_prefix;
  };
  const fs::path truncated = c.dir / "truncated.npy";
  {
    const std::string image = slurp(c.filter);
    std::ofstream(truncated, std::ios::binary) << image.substr(0, image.size() - 3);
  }
  const std::vector<Case> cases = {
      {"unknown op", {"run", "NoSuchOp", "--out", c.out.string()}, "NotFound: "},
      {"truncated npy", conv_args(c, {.filter = truncated.string()}), "InvalidArgument: "},
      {"missing file", conv_args(c, {.filter = (c.dir / "nope.npy").string()}), "NotFound: "},
      {"zero stride", conv_args(c, {.strides = "[1,0,1,1]"}), "InvalidArgument: "},
      {"malformed JSON", conv_args(c, {.strides = "[1,1,1"}), "InvalidArgument: "},
      {"JSON object", conv_args(c, {.strides = "{}"}), "InvalidArgument: "},
      {"bad padding", conv_args(c, {.padding = "FULL"}), "InvalidArgument: "},
      {"unknown backend", with(conv_args(c), {"--backend", "tpu"}), "NotFound: "},
  };
  for (const Case& k : cases) {
    CAPTURE(k.what);
    // Both with DIR absent and with DIR already there: it gets no files either way.
    for (bool precreate : {false, true}) {
      fs::remove_all(c.out);
      if (precreate) fs::create_directories(c.out);
      const CliResult r = run_cli(k.args, c.dir);
      CAPTURE(r.err);
      CHECK(r.exit_code == 1);
      CHECK(starts_with(r.err, k.status_prefix));
      CHECK(r.out.empty());
      CHECK(count_entries(c.out) == 0);
    }
  }
  fs::remove_all(c.dir);
}

TEST_CASE("cli: bad usage exits 2 with the usage") {
  const ConvCase c = write_conv_case("usage");
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"frobnicate"},
      {"ops", "extra"},
      {"run"},
      {"run", "Conv2DBackpropInput"},                                    // no --out
      {"run", "--out", c.out.string()},                                  // no op
      {"run", "Conv2DBackpropInput", "Conv2D", "--out", c.out.string()},  // two ops
      with(conv_args(c), {"--threads", "abc"}),
      with(conv_args(c), {"--threads", "-1"}),
      with(conv_args(c), {"--repeat", "1.5"}),
      with(conv_args(c), {"--attr", "novalue"}),
      with(conv_args(c), {"--attr", "=1"}),
      with(conv_args(c), {"--attr", "padding=SAME"}),  // given twice
      with(conv_args(c), {"--bogus", "1"}),
      with(conv_args(c), {"--input"}),
  };
  for (const auto& args : cases) {
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    CAPTURE(joined);
    fs::remove_all(c.out);
    const CliResult r = run_cli(args, c.dir);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "usage:"));
    CHECK_FALSE(fs::exists(c.out));
  }
  fs::remove_all(c.dir);
}

TEST_CASE("cli: show prints a tensor's shape, dtype and statistics") {
  const fs::path dir = fresh_dir("show");
  const std::vector<float> v = {1, -2, 3, 4.5f, 0, 6};
  const std::string path = (dir / "t.npy").string();
  REQUIRE(gradrt::npy::write_file(path, TensorView{DType::float32, {2, 3}, v.data()}).ok());
  CliResult r = run_cli({"show", path}, dir);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("float32 [2,3]  sum 12.5") != std::string::npos);
  CHECK(r.out.find("min -2  max 6") != std::string::npos);
  CHECK(run_cli({"show", (dir / "missing.npy").string()}, dir).exit_code == 1);
  CHECK(run_cli({"show"}, dir).exit_code == 2);
}

#endif  // GRADRT_CLI_PATH

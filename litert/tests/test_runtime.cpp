// With ai-edge-litert 2.3.0's libLiteRt.so (GRADRT_LITERT_LIBRARY): every declared symbol is
// exported, and the smoke CNN trains on stock LiteRT with gradrt's kernels, matching TF's own
// training of the same module (litert/tests/data/smoke_cnn_losses.txt, written by TF).
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>

#include "gradrt/litert.h"
#include "litert_c.h"
#include "util.h"

using namespace gradrt::litert;
using litert_test::litert_library;
using litert_test::smoke_model;

namespace {

#define SKIP_WITHOUT_LITERT()                                                          \
  if (litert_library().empty()) {                                                      \
    MESSAGE("GRADRT_LITERT_LIBRARY is not set: LiteRT runtime test skipped");          \
    return;                                                                            \
  }

struct Prepared {
  void* data = nullptr;
  size_t size = 0;
  explicit Prepared(std::vector<uint8_t> model) {
    REQUIRE(gradrt_litert_prepare(model.data(), model.size(), &data, &size) == 0);
  }
  ~Prepared() { gradrt_litert_free(data); }
};

// The inputs of make_smoke_model.py's smoke_inputs(), computed as NumPy does (double, then float32).
void smoke_inputs(std::vector<float>* x, std::vector<float>* y) {
  x->resize(2 * 9 * 9 * 2);
  y->resize(6);
  for (size_t i = 0; i < x->size(); ++i) (*x)[i] = static_cast<float>(static_cast<double>((i * 37) % 11) / 11.0 - 0.5);
  for (size_t i = 0; i < y->size(); ++i) (*y)[i] = static_cast<float>(static_cast<double>(i) / 6.0);
}

// Runs `steps` train steps and checks each loss against TF's (<name>_losses.txt, relative 1e-5).
void check_losses(gradrt_litert_model* m, const std::string& name, const char* signature, size_t n, const char* const* names,
                  const void* const* data, const size_t* bytes, int steps) {
  const std::vector<uint8_t> text = litert_test::read_file(std::string(GRADRT_LITERT_DATA) + "/" + name + "_losses.txt");
  std::istringstream expected(std::string(text.begin(), text.end()));
  for (int step = 0; step < steps; ++step) {
    REQUIRE_MESSAGE(gradrt_litert_run(m, signature, n, names, data, bytes) == 0, std::string(gradrt_litert_last_error()));
    const void* out;
    size_t out_bytes;
    REQUIRE(gradrt_litert_output(m, signature, "loss", &out, &out_bytes) == 0);
    REQUIRE(out_bytes == 4);
    float loss, tf_loss = 0;
    std::memcpy(&loss, out, 4);
    REQUIRE(static_cast<bool>(expected >> tf_loss));
    CHECK_MESSAGE(std::fabs(loss - tf_loss) <= 1e-5f * std::fabs(tf_loss), name << " step " << step << ": " << loss
                                                                              << " vs TF " << tf_loss);
  }
}

std::string calls() {
  std::string s(gradrt_litert_kernel_calls(nullptr, 0) + 1, '\0');
  gradrt_litert_kernel_calls(s.data(), s.size());
  s.pop_back();
  return s;
}

}  // namespace

TEST_CASE("litert: libLiteRt.so exports every function gradrt declares") {
  SKIP_WITHOUT_LITERT();
  void* h = dlopen(litert_library().c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(h, dlerror());
  for (size_t i = 0; i < kNumApiNames; ++i) CHECK_MESSAGE(dlsym(h, kApiNames[i]) != nullptr, kApiNames[i]);
  const Api* api;
  CHECK(load_api(litert_library().c_str(), &api).ok());
  gradrt::Status s = load_api("/nonexistent/libLiteRt.so", &api);
  CHECK(s.code() == gradrt::Code::Unavailable);
  CHECK(s.message().find("/nonexistent/libLiteRt.so") != std::string::npos);
}

TEST_CASE("litert: the smoke CNN trains on stock LiteRT with gradrt's kernels, as TF trains it") {
  SKIP_WITHOUT_LITERT();
  Prepared p(smoke_model());
  gradrt_litert_model* m = nullptr;
  REQUIRE_MESSAGE(gradrt_litert_model_create(p.data, p.size, litert_library().c_str(), 0, &m) == 0, std::string(gradrt_litert_last_error()));
  REQUIRE(gradrt_litert_num_signatures(m) == 2);
  size_t n;
  REQUIRE(gradrt_litert_num_io(m, "train", 0, &n) == 0);
  CHECK(n == 2);
  gradrt_litert_tensor_info info;
  REQUIRE(gradrt_litert_io_info(m, "train", 1, 0, &info) == 0);
  CHECK(std::string(info.name) == "loss");
  CHECK(std::string(info.dtype) == "float32");
  CHECK(info.rank == 0);

  std::vector<float> x, y;
  smoke_inputs(&x, &y);
  const char* names[] = {"x", "y"};  // the Python signature's order; LiteRT's is [y, x]: bound by name
  const void* data[] = {x.data(), y.data()};
  const size_t bytes[] = {x.size() * 4, y.size() * 4};
  gradrt_litert_reset_kernel_calls();
  check_losses(m, "smoke_cnn", "train", 2, names, data, bytes, 3);
  CHECK(calls() ==
        "Conv2DBackpropFilter 3\nDepthwiseConv2dNativeBackpropInput 3\nDepthwiseConv2dNativeBackpropFilter 3\n"
        "FusedBatchNormGradV3 3\nFusedBatchNormV3 3\n");  // gradrt's op order
  const char* infer_names[] = {"x"};
  REQUIRE(gradrt_litert_run(m, "infer", 1, infer_names, data, bytes) == 0);

  // Inputs bound by name: unknown, missing, twice, wrong size; an unknown signature.
  const char* bad_names[] = {"x", "z"};
  CHECK(gradrt_litert_run(m, "train", 2, bad_names, data, bytes) == GRADRT_LITERT_INVALID_ARGUMENT);
  CHECK(std::string(gradrt_litert_last_error()).find("no input 'z'") != std::string::npos);
  CHECK(gradrt_litert_run(m, "train", 1, names, data, bytes) == GRADRT_LITERT_INVALID_ARGUMENT);
  const char* twice[] = {"x", "x"};
  CHECK(gradrt_litert_run(m, "train", 2, twice, data, bytes) == GRADRT_LITERT_INVALID_ARGUMENT);
  const size_t short_bytes[] = {x.size() * 4 - 4, y.size() * 4};
  CHECK(gradrt_litert_run(m, "train", 2, names, data, short_bytes) == GRADRT_LITERT_INVALID_ARGUMENT);
  CHECK(gradrt_litert_run(m, "fit", 2, names, data, bytes) == GRADRT_LITERT_NOT_FOUND);
  gradrt_litert_model_destroy(m);
}

TEST_CASE("litert: a kernel's failure inside a LiteRT run comes back with gradrt's status") {
  SKIP_WITHOUT_LITERT();
  std::vector<uint8_t> model = smoke_model();
  // Conv2DBackpropFilter's NodeDef says padding "VALID": make it "VALIX" (the only "VALID").
  REQUIRE(litert_test::patch(&model, "VALID", "VALIX"));
  Prepared p(model);
  gradrt_litert_model* m = nullptr;
  REQUIRE(gradrt_litert_model_create(p.data, p.size, litert_library().c_str(), 1, &m) == 0);
  std::vector<float> x, y;
  smoke_inputs(&x, &y);
  const char* names[] = {"x", "y"};
  const void* data[] = {x.data(), y.data()};
  const size_t bytes[] = {x.size() * 4, y.size() * 4};
  CHECK(gradrt_litert_run(m, "train", 2, names, data, bytes) == GRADRT_LITERT_INVALID_ARGUMENT);
  const std::string err = gradrt_litert_last_error();
  CHECK(err.rfind("InvalidArgument: Conv2DBackpropFilter: ", 0) == 0);
  CHECK_MESSAGE(err.find("padding") != std::string::npos, err);
  CHECK(err.find("(LiteRT node FlexConv2DBackpropFilter#1.") != std::string::npos);
  gradrt_litert_model_destroy(m);
}

TEST_CASE("litert: an unprepared model is refused by the runner") {
  SKIP_WITHOUT_LITERT();
  const std::vector<uint8_t> model = smoke_model();
  gradrt_litert_model* m = nullptr;
  CHECK(gradrt_litert_model_create(model.data(), model.size(), litert_library().c_str(), 0, &m) ==
        GRADRT_LITERT_INVALID_ARGUMENT);
  CHECK(m == nullptr);
  CHECK(std::string(gradrt_litert_last_error()).find("not prepared") != std::string::npos);
  CHECK(gradrt_litert_model_create(model.data(), model.size(), "/nonexistent/libLiteRt.so", 0, &m) ==
        GRADRT_LITERT_UNAVAILABLE);
}

TEST_CASE("litert: FractionalAvgPool(Grad), plain custom ops no TFLite runs, train as TF trains them") {
  SKIP_WITHOUT_LITERT();
  Prepared p(litert_test::read_file(std::string(GRADRT_LITERT_DATA) + "/fractional_avg_pool.tflite"));
  gradrt_litert_model* m = nullptr;
  REQUIRE_MESSAGE(gradrt_litert_model_create(p.data, p.size, litert_library().c_str(), 2, &m) == 0, std::string(gradrt_litert_last_error()));
  std::vector<float> x, y;
  smoke_inputs(&x, &y);
  const char* names[] = {"x"};
  const void* data[] = {x.data()};  // its first 50 values
  const size_t bytes[] = {50 * 4};
  gradrt_litert_reset_kernel_calls();
  // One converted function: the converter names its signature "serving_default".
  check_losses(m, "fractional_avg_pool", "serving_default", 1, names, data, bytes, 3);
  CHECK(calls() == "FractionalAvgPoolGrad 3\nFractionalAvgPool 3\n");  // gradrt's op order
  gradrt_litert_model_destroy(m);
}

TEST_CASE("litert: gradrt_litert_register_kernels on the caller's own LiteRtOptions") {
  SKIP_WITHOUT_LITERT();
  const Api* api;
  REQUIRE(load_api(litert_library().c_str(), &api).ok());
  LiteRtOptions options = nullptr;
  REQUIRE(api->LiteRtCreateOptions(&options) == kLiteRtStatusOk);
  Prepared p(smoke_model());
  gradrt_litert_kernels* k = nullptr;
  REQUIRE(gradrt_litert_register_kernels(options, p.data, p.size, litert_library().c_str(), 0, &k) == 0);
  CHECK(gradrt_litert_kernels_take_error(k) == 0);
  gradrt_litert_kernels_destroy(k);
  const std::vector<uint8_t> raw = smoke_model();
  CHECK(gradrt_litert_register_kernels(options, raw.data(), raw.size(), litert_library().c_str(), 0, &k) ==
        GRADRT_LITERT_INVALID_ARGUMENT);
  CHECK(k == nullptr);
  CHECK(gradrt_litert_register_kernels(nullptr, p.data, p.size, nullptr, 0, &k) == GRADRT_LITERT_INVALID_ARGUMENT);
  api->LiteRtDestroyOptions(options);
}

// gradrt_litert_prepare on TF 2.21's conversion of the smoke CNN, and on hostile bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "gradrt/litert.h"
#include "prepare.h"
#include "util.h"

using namespace gradrt;
using namespace gradrt::litert;
using litert_test::patch;
using litert_test::smoke_model;

namespace {
std::vector<uint8_t> prepare(const std::vector<uint8_t>& in, int* rc) {
  void* out = nullptr;
  size_t size = 0;
  *rc = gradrt_litert_prepare(in.data(), in.size(), &out, &size);
  std::vector<uint8_t> v(static_cast<uint8_t*>(out), static_cast<uint8_t*>(out) + size);
  gradrt_litert_free(out);
  return v;
}
// Whether `after` (the prepared bytes read back) holds the model `before`: same tensors, operators
// (gradrt's nodes renamed "<code>#<subgraph>.<index>"), buffer bytes and signatures. Empty: same.
std::string differences(const Model& before, const Model& after) {
  if (after.subgraphs.size() != before.subgraphs.size() || after.buffers.size() != before.buffers.size() ||
      after.signatures.size() != before.signatures.size())
    return "counts";
  for (size_t i = 0; i < before.buffers.size(); ++i) {
    const ModelBuffer &x = before.buffers[i], &y = after.buffers[i];
    if (x.size != y.size || (x.size && std::memcmp(before.bytes.data + x.data, after.bytes.data + y.data, x.size)))
      return "buffer " + std::to_string(i);
  }
  for (size_t s = 0; s < before.subgraphs.size(); ++s) {
    const ModelSubgraph &gx = before.subgraphs[s], &gy = after.subgraphs[s];
    if (gx.tensors.size() != gy.tensors.size() || gx.operators.size() != gy.operators.size()) return "subgraph";
    for (size_t t = 0; t < gx.tensors.size(); ++t)
      if (gx.tensors[t].shape != gy.tensors[t].shape || gx.tensors[t].type != gy.tensors[t].type ||
          gx.tensors[t].buffer != gy.tensors[t].buffer || gx.tensors[t].name != gy.tensors[t].name)
        return "tensor";
    for (size_t i = 0; i < gx.operators.size(); ++i) {
      const ModelOperator &a = gx.operators[i], &b = gy.operators[i];
      const ModelOpCode &ca = before.codes[a.opcode], &cb = after.codes[b.opcode];
      // Every custom op (the smoke model's are all gradrt's) is renamed:
      // "FlexConv2DBackpropFilter" -> "FlexConv2DBackpropFilter#1.38"; builtins keep their codes.
      const std::string renamed = std::string(ca.custom.substr(0, ca.custom.rfind('#'))) + "#" + std::to_string(s) +
                                  "." + std::to_string(i);
      if (a.inputs != b.inputs || a.outputs != b.outputs || a.custom_options != b.custom_options ||
          ca.builtin != cb.builtin || ca.version != cb.version ||
          (ca.builtin == kBuiltinCustom ? cb.custom != renamed : cb.custom != ca.custom))
        return "operator " + std::to_string(s) + "." + std::to_string(i);
    }
  }
  for (size_t k = 0; k < before.signatures.size(); ++k)
    if (before.signatures[k].key != after.signatures[k].key || before.signatures[k].inputs != after.signatures[k].inputs ||
        before.signatures[k].outputs != after.signatures[k].outputs || before.signatures[k].subgraph != after.signatures[k].subgraph)
      return "signature";
  return "";
}
}  // namespace

TEST_CASE("litert: prepare aligns buffers, gives each gradrt node its operator code, is idempotent") {
  const std::vector<uint8_t> model = smoke_model();
  REQUIRE(model.size() > 1000);
  Model before;
  ModelPlan plan_before;
  REQUIRE(read_model({model.data(), model.size()}, &before).ok());
  REQUIRE(make_plan(before, &plan_before).ok());
  CHECK(!plan_before.prepared());
  CHECK(plan_before.nodes.size() == 5);  // conv filter, depthwise input + filter, batch norm + gradient
  CHECK(!plan_before.misaligned.empty());  // the converter's buffers are not 64-byte aligned

  int rc;
  const std::vector<uint8_t> once = prepare(model, &rc);
  REQUIRE(rc == 0);
  Model after;
  ModelPlan plan;
  REQUIRE(read_model({once.data(), once.size()}, &after).ok());
  REQUIRE(make_plan(after, &plan).ok());
  CHECK(plan.prepared());
  for (const ModelBuffer& b : after.buffers)
    if (b.size) CHECK(b.data % 64 == 0);
  CHECK(differences(before, after) == "");  // the model is unchanged otherwise
  CHECK(after.signatures.size() == 2);

  const std::vector<uint8_t> twice = prepare(once, &rc);
  REQUIRE(rc == 0);
  CHECK(twice == once);
}

TEST_CASE("litert: prepare moves buffers stored after the FlatBuffer (Buffer.offset/size) to aligned data") {
  // The smoke model with every non-empty buffer moved behind the FlatBuffer, 16 bytes off a
  // 64-byte boundary, as Buffer {offset, size} (the schema's form for models over 2 GB).
  const std::vector<uint8_t> model = smoke_model();
  Model m;
  REQUIRE(read_model({model.data(), model.size()}, &m).ok());
  std::vector<uint8_t> moved = model;
  fb::Appender a(&moved);
  std::vector<std::pair<size_t, size_t>> offset_fields;  // (field position, buffer index)
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    if (!m.buffers[i].size) continue;
    std::vector<size_t> pos;
    a.patch(m.buffers[i].slot, a.table({{1, 0, 8}, {2, m.buffers[i].size, 8}}, &pos));
    offset_fields.emplace_back(pos[0], i);
  }
  for (auto [field, i] : offset_fields) {
    a.align(64, 48);  // data at 64k + 16
    fb::store<uint64_t>(moved.data() + field, moved.size());
    moved.insert(moved.end(), model.begin() + static_cast<long>(m.buffers[i].data),
                 model.begin() + static_cast<long>(m.buffers[i].data + m.buffers[i].size));
  }
  Model mm;
  REQUIRE(read_model({moved.data(), moved.size()}, &mm).ok());
  for (size_t i = 0; i < mm.buffers.size(); ++i)
    if (mm.buffers[i].size) CHECK((!mm.buffers[i].inline_data && mm.buffers[i].data % 64 == 16));

  int rc;
  const std::vector<uint8_t> prepared = prepare(moved, &rc);
  REQUIRE(rc == 0);
  Model p;
  REQUIRE(read_model({prepared.data(), prepared.size()}, &p).ok());
  REQUIRE(p.buffers.size() == m.buffers.size());
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    REQUIRE(p.buffers[i].size == m.buffers[i].size);
    if (!m.buffers[i].size) continue;
    CHECK(p.buffers[i].inline_data);
    CHECK(p.buffers[i].data % 64 == 0);
    CHECK(std::memcmp(prepared.data() + p.buffers[i].data, model.data() + m.buffers[i].data, m.buffers[i].size) == 0);
  }
}

TEST_CASE("litert: prepare names every op nobody runs in one UnsupportedOp error") {
  std::vector<uint8_t> model = smoke_model();
  REQUIRE(patch(&model, "FlexConv2DBackpropFilter", "FlexConv2DBackpropFiltez"));
  REQUIRE(patch(&model, "FlexFusedBatchNormV3", "FlexFusedBatchNormV9"));
  int rc;
  prepare(model, &rc);
  CHECK(rc == GRADRT_LITERT_UNSUPPORTED_OP);
  CHECK(gradrt_litert_last_error_code() == GRADRT_LITERT_UNSUPPORTED_OP);
  CHECK(std::string(gradrt_litert_last_error()) ==
        "UnsupportedOp: 2 op(s) that neither LiteRT's builtins nor gradrt can run: Conv2DBackpropFiltez, FusedBatchNormV9");
  prepare(smoke_model(), &rc);
  CHECK(rc == 0);
  CHECK(std::string(gradrt_litert_last_error()).empty());
}

TEST_CASE("litert: prepare refuses hostile models with a status") {
  const std::vector<uint8_t> model = smoke_model();
  int rc;
  prepare({}, &rc);
  CHECK(rc == GRADRT_LITERT_INVALID_ARGUMENT);
  CHECK(std::string(gradrt_litert_last_error()).rfind("InvalidArgument: model:", 0) == 0);
  CHECK(gradrt_litert_prepare(nullptr, 5, nullptr, nullptr) == GRADRT_LITERT_INVALID_ARGUMENT);
  for (size_t n = 0; n < model.size(); n += 97) {  // truncations
    prepare(std::vector<uint8_t>(model.begin(), model.begin() + static_cast<long>(n)), &rc);
    CHECK(rc == GRADRT_LITERT_INVALID_ARGUMENT);
  }
  std::mt19937 rng(20);
  for (int round = 0; round < 3000; ++round) {  // random byte changes: a status or a model, never a crash
    std::vector<uint8_t> m = model;
    for (int k = 0; k < 1 + round % 4; ++k) m[rng() % m.size()] = static_cast<uint8_t>(rng());
    prepare(m, &rc);
    CHECK((rc == 0 || rc == GRADRT_LITERT_INVALID_ARGUMENT || rc == GRADRT_LITERT_UNSUPPORTED_OP ||
           rc == GRADRT_LITERT_RESOURCE_EXHAUSTED));
  }
}

TEST_CASE("litert: prepare on a one-bit change of each byte of a model: a status, or the same model prepared") {
  // The rewrite patches offsets in place; a changed bit can make those bytes shared with another
  // object (CI's fuzzer found one: a patched slot that was also a table's vtable offset).
  // Byte k gets bit k % 8 flipped; every byte but the weights' (buffer data: no structure there).
  const std::vector<uint8_t> model = smoke_model();
  Model original;
  REQUIRE(read_model({model.data(), model.size()}, &original).ok());
  std::vector<bool> weights(model.size());
  for (const ModelBuffer& b : original.buffers) std::fill_n(weights.begin() + static_cast<long>(b.data), b.size, true);
  size_t prepared = 0, refused = 0, shared = 0;
  std::vector<uint8_t> m = model;
  for (size_t at = 0; at < model.size(); ++at) {
    if (weights[at]) continue;
    const int bit = static_cast<int>(at % 8);  // one bit per byte: 1/8 of all flips, 4 s
    m[at] = static_cast<uint8_t>(model[at] ^ (1u << bit));
    int rc;
    const std::vector<uint8_t> out = prepare(m, &rc);
    if (rc != 0) {
      ++refused;
      REQUIRE((rc == GRADRT_LITERT_INVALID_ARGUMENT || rc == GRADRT_LITERT_UNSUPPORTED_OP));
      shared += std::string(gradrt_litert_last_error()).find("objects share bytes") != std::string::npos;
    } else {
      ++prepared;
      Model before, after;
      ModelPlan plan;
      REQUIRE(read_model({m.data(), m.size()}, &before).ok());
      INFO("byte ", at, " bit ", bit);
      REQUIRE(read_model({out.data(), out.size()}, &after).ok());
      REQUIRE(make_plan(after, &plan).ok());
      REQUIRE(plan.prepared());
      REQUIRE(differences(before, after) == "");
    }
    m[at] = model[at];
  }
  MESSAGE(prepared, " prepared, ", refused, " refused (", shared, " as objects that share bytes)");
  CHECK(prepared > 0);
  CHECK(shared > 0);  // byte 97 bit 1 is one (a signature's bytes)
}

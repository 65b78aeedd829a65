// Which nodes of a model gradrt runs, what a model needs to be "prepared", and preparing it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tflite_model.h"

namespace gradrt::litert {

struct GradrtNode {
  uint32_t subgraph = 0, index = 0;
  std::string tf_op;     // TF's op name: "Conv2DBackpropFilter"
  std::string name;      // its own operator code once prepared: "FlexConv2DBackpropFilter#1.38"
  int32_t version = 1;
  Attrs attrs;
};

struct ModelPlan {
  std::vector<GradrtNode> nodes;
  std::vector<std::string> unsupported;  // ops nobody runs (sorted, once each)
  std::vector<size_t> renames;           // nodes whose operator code is not yet `name`
  std::vector<uint32_t> misaligned;      // buffers whose data does not start 64-byte aligned
  bool prepared() const { return renames.empty() && misaligned.empty(); }
};

constexpr size_t kBufferAlignment = 64;  // LITERT_HOST_MEMORY_BUFFER_ALIGNMENT

// Classifies every operator and decodes each gradrt node's attributes (a bad NodeDef is
// InvalidArgument naming the node). Ops nobody runs go to plan->unsupported (not an error here).
Status make_plan(const Model& model, ModelPlan* plan);

// The prepared bytes: the input with the objects that change appended after it (FlatBuffer
// offsets only point forward, so new tables go at the end and the old references are patched):
// a new operator_codes vector (old codes + one per renamed node), a new Operator table per
// renamed node, a new Buffer table + 64-byte aligned data per misaligned buffer. An already
// prepared model comes back unchanged.
Status prepare_bytes(const Model& model, const ModelPlan& plan, std::vector<uint8_t>* out);

// "UnsupportedOp: N op(s) that neither LiteRT's builtins nor gradrt can run: A, B"
std::string unsupported_message(const ModelPlan& plan);

}  // namespace gradrt::litert

// The parts of a .tflite model (TFLite's FlatBuffer schema) that preparing and running need.
// Field ids are those of TFLite's public schema.fbs:
//   Model: operator_codes 1, subgraphs 2, buffers 4, signature_defs 7
//   OperatorCode: deprecated_builtin_code 0 (int8), custom_code 1, version 2, builtin_code 3
//   SubGraph: tensors 0, operators 3, name 4
//   Tensor: shape 0, type 1, buffer 2, name 3
//   Operator: opcode_index 0, inputs 1, outputs 2, custom_options 5,
//             large_custom_options_offset 9, large_custom_options_size 10
//   Buffer: data 0, offset 1, size 2 (offset/size: data after the FlatBuffer, from byte 0)
//   SignatureDef: inputs 0, outputs 1, signature_key 2, subgraph_index 4; TensorMap: name 0, tensor_index 1
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "flatbuffer.h"

namespace gradrt::litert {

constexpr int32_t kBuiltinCustom = 32;  // BuiltinOperator CUSTOM

struct ModelOpCode {
  int32_t builtin = 0;       // max(deprecated_builtin_code, builtin_code), the schema's rule
  std::string_view custom;   // custom_code
  int32_t version = 1;
};

struct ModelTensor {
  std::vector<int64_t> shape;
  int type = 0;              // TensorType of the file (FLOAT32 = 0, ...)
  uint32_t buffer = 0;
  std::string_view name;
};

struct ModelOperator {
  uint32_t opcode = 0;
  std::vector<int32_t> inputs, outputs;  // tensor indices, -1: optional input left out
  std::string_view custom_options;        // inline or large (after the FlatBuffer)
  size_t slot = 0;                        // position of its uoffset in the operators vector
};

struct ModelSubgraph {
  std::string_view name;
  std::vector<ModelTensor> tensors;
  std::vector<ModelOperator> operators;
};

struct ModelBuffer {
  size_t data = 0;           // position of the first data byte (0: none)
  uint64_t size = 0;
  bool inline_data = true;   // false: Buffer.offset/size
  size_t slot = 0;           // position of its uoffset in the buffers vector
};

struct ModelSignature {
  std::string_view key;
  uint32_t subgraph = 0;
  std::vector<std::pair<std::string_view, uint32_t>> inputs, outputs;  // name, tensor index
};

struct Model {
  fb::Bytes bytes;
  size_t operator_codes_field = 0;  // position of Model.operator_codes' uoffset
  std::vector<ModelOpCode> codes;
  std::vector<ModelSubgraph> subgraphs;
  std::vector<ModelBuffer> buffers;
  std::vector<ModelSignature> signatures;
};

// Reads (and bounds-checks) everything above; InvalidArgument naming what is wrong.
Status read_model(fb::Bytes bytes, Model* out);

// NumPy's name and the byte size of a file TensorType (nullptr / 0 for types gradrt does not map).
const char* tensor_type_name(int type);
size_t tensor_type_size(int type);

}  // namespace gradrt::litert

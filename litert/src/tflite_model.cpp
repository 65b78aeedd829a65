#include "tflite_model.h"

#include <algorithm>
#include <string>

#include "status_macros.h"

namespace gradrt::litert {

namespace {

Status bad(const std::string& msg) { return Status(Code::InvalidArgument, "model: " + msg); }

// A vector of int32 (tensor indices, shapes) of table field `id`.
Status read_ints(const fb::Table& t, int id, fb::Bytes b, std::vector<int32_t>* out) {
  size_t data;
  uint32_t n;
  GRADRT_RETURN_IF_ERROR(t.vector(id, 4, &data, &n));
  out->resize(n);
  for (uint32_t i = 0; i < n; ++i) (*out)[i] = fb::load<int32_t>(b.data + data + 4 * size_t{i});
  return Status::OK();
}

// Reads the vector of tables in field `id` of `parent` into *out (resized): read(table, slot, i,
// element) for each, where slot is the position of the element's uoffset in the vector.
template <class T, class F>
Status read_tables(const fb::Table& parent, int id, const char* what, std::vector<T>* out, F&& read) {
  size_t data;
  uint32_t n;
  GRADRT_RETURN_IF_ERROR(parent.vector(id, 4, &data, &n));
  out->resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    fb::Table t;
    GRADRT_RETURN_IF_ERROR(parent.table_at(data, i, what, &t));
    GRADRT_RETURN_IF_ERROR(read(t, data + 4 * size_t{i}, i, (*out)[i]));
  }
  return Status::OK();
}

Status read_code(const fb::Table& c, size_t, uint32_t, ModelOpCode& code) {
  uint8_t deprecated;
  int32_t builtin;
  GRADRT_RETURN_IF_ERROR(c.u8(0, 0, &deprecated));
  GRADRT_RETURN_IF_ERROR(c.i32(3, 0, &builtin));
  code.builtin = std::max<int32_t>(static_cast<int8_t>(deprecated), builtin);
  GRADRT_RETURN_IF_ERROR(c.string(1, &code.custom));
  return c.i32(2, 1, &code.version);
}

Status read_operator(const fb::Table& t, fb::Bytes b, ModelOperator* op) {
  GRADRT_RETURN_IF_ERROR(t.u32(0, 0, &op->opcode));
  GRADRT_RETURN_IF_ERROR(read_ints(t, 1, b, &op->inputs));
  GRADRT_RETURN_IF_ERROR(read_ints(t, 2, b, &op->outputs));
  size_t data;
  uint32_t n;
  GRADRT_RETURN_IF_ERROR(t.vector(5, 1, &data, &n));
  op->custom_options = std::string_view(reinterpret_cast<const char*>(b.data + data), n);
  uint64_t large_off, large_size;
  GRADRT_RETURN_IF_ERROR(t.u64(9, 0, &large_off));
  GRADRT_RETURN_IF_ERROR(t.u64(10, 0, &large_size));
  if (large_off > 1 && n == 0) {  // options stored after the FlatBuffer
    if (large_off > b.size || large_size > b.size - large_off)
      return bad("an operator's large custom options (offset " + std::to_string(large_off) + ", size " +
                 std::to_string(large_size) + ") are outside the " + std::to_string(b.size) + "-byte model");
    op->custom_options = std::string_view(reinterpret_cast<const char*>(b.data + large_off), large_size);
  }
  return Status::OK();
}

Status read_subgraph(const fb::Table& g, fb::Bytes b, ModelSubgraph* s) {
  GRADRT_RETURN_IF_ERROR(g.string(4, &s->name));
  GRADRT_RETURN_IF_ERROR(read_tables(g, 0, "Tensor", &s->tensors, [&](const fb::Table& t, size_t, uint32_t, ModelTensor& mt) {
    std::vector<int32_t> shape;
    GRADRT_RETURN_IF_ERROR(read_ints(t, 0, b, &shape));
    mt.shape.assign(shape.begin(), shape.end());
    uint8_t type;
    GRADRT_RETURN_IF_ERROR(t.u8(1, 0, &type));
    mt.type = type;
    GRADRT_RETURN_IF_ERROR(t.u32(2, 0, &mt.buffer));
    return t.string(3, &mt.name);
  }));
  return read_tables(g, 3, "Operator", &s->operators, [&](const fb::Table& t, size_t slot, uint32_t, ModelOperator& op) {
    op.slot = slot;
    return read_operator(t, b, &op);
  });
}

Status read_buffer(const fb::Table& t, fb::Bytes b, size_t slot, uint32_t i, ModelBuffer& mb) {
  mb.slot = slot;
  uint32_t count;
  GRADRT_RETURN_IF_ERROR(t.vector(0, 1, &mb.data, &count));
  mb.size = count;
  uint64_t off, size;
  GRADRT_RETURN_IF_ERROR(t.u64(1, 0, &off));
  GRADRT_RETURN_IF_ERROR(t.u64(2, 0, &size));
  if (count == 0 && off > 1) {  // offset 0/1 mean "no data" in the schema
    if (off > b.size || size > b.size - off)
      return bad("buffer " + std::to_string(i) + " (offset " + std::to_string(off) + ", size " +
                 std::to_string(size) + ") is outside the " + std::to_string(b.size) + "-byte model");
    mb.data = static_cast<size_t>(off);
    mb.size = size;
    mb.inline_data = false;
  }
  if (mb.size == 0) mb.data = 0;
  return Status::OK();
}

Status read_signature(const fb::Table& t, const Model& m, ModelSignature& s) {
  GRADRT_RETURN_IF_ERROR(t.string(2, &s.key));
  GRADRT_RETURN_IF_ERROR(t.u32(4, 0, &s.subgraph));
  if (s.subgraph >= m.subgraphs.size())
    return bad("signature '" + std::string(s.key) + "' names subgraph " + std::to_string(s.subgraph) + " of " +
               std::to_string(m.subgraphs.size()));
  const size_t tensors = m.subgraphs[s.subgraph].tensors.size();
  for (int io = 0; io < 2; ++io)
    GRADRT_RETURN_IF_ERROR(read_tables(t, io, "TensorMap", io == 0 ? &s.inputs : &s.outputs,
                                       [&](const fb::Table& tm, size_t, uint32_t, auto& entry) {
      GRADRT_RETURN_IF_ERROR(tm.string(0, &entry.first));
      GRADRT_RETURN_IF_ERROR(tm.u32(1, 0, &entry.second));
      if (entry.second >= tensors)
        return bad("signature '" + std::string(s.key) + "' maps '" + std::string(entry.first) + "' to tensor " +
                   std::to_string(entry.second) + " of " + std::to_string(tensors));
      return Status::OK();
    }));
  return Status::OK();
}

// Every operator's opcode and tensor indices must name existing entries.
Status check_indices(const Model& m) {
  for (size_t s = 0; s < m.subgraphs.size(); ++s) {
    const ModelSubgraph& g = m.subgraphs[s];
    for (const ModelTensor& t : g.tensors)
      if (t.buffer >= m.buffers.size() && !m.buffers.empty())
        return bad("tensor '" + std::string(t.name) + "' names buffer " + std::to_string(t.buffer) + " of " +
                   std::to_string(m.buffers.size()));
    for (size_t i = 0; i < g.operators.size(); ++i) {
      const ModelOperator& op = g.operators[i];
      const std::string where = "operator " + std::to_string(s) + "." + std::to_string(i);
      if (op.opcode >= m.codes.size())
        return bad(where + " has opcode_index " + std::to_string(op.opcode) + " of " + std::to_string(m.codes.size()));
      for (const auto* list : {&op.inputs, &op.outputs})
        for (int32_t t : *list)
          if (t < -1 || t >= static_cast<int64_t>(g.tensors.size()))
            return bad(where + " names tensor " + std::to_string(t) + " of " + std::to_string(g.tensors.size()));
    }
  }
  return Status::OK();
}

}  // namespace

Status read_model(fb::Bytes b, Model* m) {
  *m = Model();
  m->bytes = b;
  if (b.size < 8 || b.size > 0x7fffffffu) return bad("size " + std::to_string(b.size) + " is not a FlatBuffer's (8 bytes .. 2 GiB)");
  if (std::string_view(reinterpret_cast<const char*>(b.data + 4), 4) != "TFL3")
    return bad("file identifier is not \"TFL3\" (not a .tflite model)");
  uint32_t root;
  GRADRT_RETURN_IF_ERROR(fb::read_u32(b, 0, &root));
  fb::Table model;
  GRADRT_RETURN_IF_ERROR(fb::Table::at(b, root, "Model", &model));
  m->operator_codes_field = model.field(1);
  GRADRT_RETURN_IF_ERROR(read_tables(model, 1, "OperatorCode", &m->codes, read_code));
  GRADRT_RETURN_IF_ERROR(read_tables(model, 2, "SubGraph", &m->subgraphs,
                                     [&](const fb::Table& g, size_t, uint32_t, ModelSubgraph& s) { return read_subgraph(g, b, &s); }));
  GRADRT_RETURN_IF_ERROR(read_tables(model, 4, "Buffer", &m->buffers,
                                     [&](const fb::Table& t, size_t slot, uint32_t i, ModelBuffer& mb) {
                                       return read_buffer(t, b, slot, i, mb);
                                     }));
  GRADRT_RETURN_IF_ERROR(read_tables(model, 7, "SignatureDef", &m->signatures,
                                     [&](const fb::Table& t, size_t, uint32_t, ModelSignature& s) { return read_signature(t, *m, s); }));
  return check_indices(*m);
}

const char* tensor_type_name(int type) {
  switch (type) {
    case 0: return "float32";
    case 1: return "float16";
    case 2: return "int32";
    case 3: return "uint8";
    case 4: return "int64";
    case 6: return "bool";
    case 7: return "int16";
    case 9: return "int8";
    case 10: return "float64";
    case 18: return "bfloat16";
    default: return nullptr;
  }
}

size_t tensor_type_size(int type) {
  switch (type) {
    case 0: case 2: return 4;
    case 1: case 7: case 18: return 2;
    case 3: case 6: case 9: return 1;
    case 4: case 10: return 8;
    default: return 0;
  }
}

}  // namespace gradrt::litert

#include "prepare.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <string_view>

#include "node_attrs.h"
#include "registry.h"
#include "status_macros.h"

namespace gradrt::litert {

namespace {

// Custom ops of TFLite's builtin op resolver (register.cc), which LiteRT runs itself.
constexpr std::string_view kLiteRtCustomOps[] = {"NumericVerify", "Mfcc", "AudioSpectrogram",
                                                 "TFLite_Detection_PostProcess"};
// Plain custom ops (not Flex) that the converter writes with allow_custom_ops and gradrt runs.
constexpr std::string_view kGradrtCustomOps[] = {"FractionalAvgPool", "FractionalAvgPoolGrad"};

bool digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// "FlexConv2DBackpropFilter#1.38" -> "FlexConv2DBackpropFilter" (a name gradrt gave); else as is.
std::string_view base_name(std::string_view custom) {
  const size_t hash = custom.rfind('#');
  if (hash == std::string_view::npos) return custom;
  const std::string_view suffix = custom.substr(hash + 1);
  const size_t dot = suffix.find('.');
  if (dot == std::string_view::npos || !digits(suffix.substr(0, dot)) || !digits(suffix.substr(dot + 1))) return custom;
  return custom.substr(0, hash);
}

template <size_t N> bool listed(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

Status node_error(const GradrtNode& n, const Status& s) {
  return Status(s.code(), s.message() + " (node " + std::to_string(n.subgraph) + "." + std::to_string(n.index) + ", " +
                              n.tf_op + ")");
}

}  // namespace

Status make_plan(const Model& model, ModelPlan* plan) {
  *plan = ModelPlan();
  std::set<std::string> unsupported;
  for (uint32_t s = 0; s < model.subgraphs.size(); ++s) {
    const ModelSubgraph& g = model.subgraphs[s];
    for (uint32_t i = 0; i < g.operators.size(); ++i) {
      const ModelOperator& op = g.operators[i];
      const ModelOpCode& code = model.codes[op.opcode];
      if (code.builtin != kBuiltinCustom) continue;  // LiteRT's own
      const std::string_view base = base_name(code.custom);
      const bool flex = base.substr(0, 4) == "Flex" && find_op(base.substr(4)) != nullptr;
      if (!flex && !listed(kGradrtCustomOps, base)) {
        if (!listed(kLiteRtCustomOps, base))
          unsupported.insert(std::string(base.substr(0, 4) == "Flex" ? base.substr(4) : base));
        continue;
      }
      GradrtNode n;
      n.subgraph = s;
      n.index = i;
      n.tf_op = std::string(flex ? base.substr(4) : base);
      n.name = std::string(base) + "#" + std::to_string(s) + "." + std::to_string(i);
      n.version = code.version;
      Status st;
      if (flex) {
        std::string op_name;
        st = flex_node_attrs(op.custom_options, &op_name, &n.attrs);
        if (st.ok() && op_name != n.tf_op)
          st = Status(Code::InvalidArgument, "NodeDef: op '" + op_name + "' under operator code '" + std::string(code.custom) + "'");
      } else {
        st = flex_map_attrs(op.custom_options, &n.attrs);
      }
      if (!st.ok()) return node_error(n, st);
      if (code.custom != n.name) plan->renames.push_back(plan->nodes.size());
      plan->nodes.push_back(std::move(n));
    }
  }
  plan->unsupported.assign(unsupported.begin(), unsupported.end());
  for (uint32_t b = 0; b < model.buffers.size(); ++b)
    if (model.buffers[b].size > 0 && model.buffers[b].data % kBufferAlignment != 0) plan->misaligned.push_back(b);
  return Status::OK();
}

std::string unsupported_message(const ModelPlan& plan) {
  std::string msg = "UnsupportedOp: " + std::to_string(plan.unsupported.size()) +
                    " op(s) that neither LiteRT's builtins nor gradrt can run:";
  for (size_t i = 0; i < plan.unsupported.size(); ++i) msg += (i ? ", " : " ") + plan.unsupported[i];
  return msg;
}

namespace {

// OperatorCode table: deprecated_builtin_code (int8, builtins < 127), custom_code, version, builtin_code.
void write_code(fb::Appender& a, size_t slot, int32_t builtin, std::string_view custom, int32_t version) {
  std::vector<fb::Appender::Field> f = {{0, static_cast<uint64_t>(std::min<int32_t>(builtin, 127)), 1},
                                        {2, static_cast<uint64_t>(static_cast<uint32_t>(version)), 4},
                                        {3, static_cast<uint64_t>(static_cast<uint32_t>(builtin)), 4}};
  if (!custom.empty()) f.push_back({1, 0, 4});
  std::vector<size_t> pos;
  a.patch(slot, a.table(f, &pos));
  if (!custom.empty()) a.patch(pos[3], a.string(custom));
}

// Operator table of a renamed node: opcode_index, inputs, outputs, custom_options (inline).
void write_operator(fb::Appender& a, const ModelOperator& op, uint32_t opcode) {
  std::vector<size_t> pos;
  a.patch(op.slot, a.table({{0, opcode, 4}, {1, 0, 4}, {2, 0, 4}, {5, 0, 4}}, &pos));
  a.patch(pos[1], a.vector(op.inputs.data(), static_cast<uint32_t>(op.inputs.size()), 4));
  a.patch(pos[2], a.vector(op.outputs.data(), static_cast<uint32_t>(op.outputs.size()), 4));
  a.patch(pos[3], a.vector(op.custom_options.data(), static_cast<uint32_t>(op.custom_options.size()), 1));
}

// The rewrite patches uoffsets in place (Model.operator_codes, operators[i], buffers[b]). In a
// hostile FlatBuffer those 4 bytes may also belong to another object (a table's soffset, a
// vector shared by two subgraphs), so the result is read back: it must plan as prepared and hold
// the same model (tensors, operators, codes, buffer bytes, signatures) with the new names.
Status check_rewrite(const Model& before, const ModelPlan& plan, const std::vector<uint8_t>& out) {
  const auto refuse = [](const std::string& what) {
    return Status(Code::InvalidArgument, "model: its FlatBuffer objects share bytes (" + what +
                                             "), so it cannot be prepared; convert it again");
  };
  Model after;
  ModelPlan again;
  Status s = read_model({out.data(), out.size()}, &after);
  if (s.ok()) s = make_plan(after, &again);
  if (!s.ok()) return refuse("the rewritten model does not read back: " + s.message());
  if (!again.prepared() || again.nodes.size() != plan.nodes.size()) return refuse("a node is not renamed once");
  if (after.subgraphs.size() != before.subgraphs.size() || after.buffers.size() != before.buffers.size() ||
      after.signatures.size() != before.signatures.size())
    return refuse("subgraph, buffer or signature counts changed");
  for (size_t b = 0; b < before.buffers.size(); ++b) {
    const ModelBuffer &x = before.buffers[b], &y = after.buffers[b];
    if (x.size != y.size || (x.size && std::memcmp(before.bytes.data + x.data, out.data() + y.data, x.size) != 0))
      return refuse("buffer " + std::to_string(b) + " changed");
  }
  for (size_t g = 0; g < before.subgraphs.size(); ++g) {
    const ModelSubgraph &x = before.subgraphs[g], &y = after.subgraphs[g];
    if (x.tensors.size() != y.tensors.size() || x.operators.size() != y.operators.size())
      return refuse("subgraph " + std::to_string(g) + " changed");
    for (size_t t = 0; t < x.tensors.size(); ++t)
      if (x.tensors[t].shape != y.tensors[t].shape || x.tensors[t].type != y.tensors[t].type ||
          x.tensors[t].buffer != y.tensors[t].buffer || x.tensors[t].name != y.tensors[t].name)
        return refuse("tensor " + std::to_string(g) + "." + std::to_string(t) + " changed");
    for (size_t i = 0; i < x.operators.size(); ++i) {
      const ModelOperator &a = x.operators[i], &c = y.operators[i];
      const ModelOpCode &ca = before.codes[a.opcode], &cc = after.codes[c.opcode];
      if (a.inputs != c.inputs || a.outputs != c.outputs || a.custom_options != c.custom_options ||
          ca.builtin != cc.builtin || ca.version != cc.version ||
          base_name(ca.custom) != base_name(cc.custom))
        return refuse("operator " + std::to_string(g) + "." + std::to_string(i) + " changed");
    }
  }
  for (size_t k = 0; k < before.signatures.size(); ++k) {
    const ModelSignature &x = before.signatures[k], &y = after.signatures[k];
    if (x.key != y.key || x.subgraph != y.subgraph || x.inputs != y.inputs || x.outputs != y.outputs)
      return refuse("signature " + std::to_string(k) + " changed");
  }
  return Status::OK();
}

}  // namespace

Status prepare_bytes(const Model& model, const ModelPlan& plan, std::vector<uint8_t>* out) {
  out->assign(model.bytes.data, model.bytes.data + model.bytes.size);
  if (plan.prepared()) return Status::OK();
  fb::Appender a(out);
  if (!plan.renames.empty()) {
    if (model.operator_codes_field == 0) return Status(Code::InvalidArgument, "model: operators but no operator_codes");
    const uint32_t n = static_cast<uint32_t>(model.codes.size() + plan.renames.size());
    const std::vector<uint32_t> zeros(n, 0);
    const size_t vec = a.vector(zeros.data(), n, 4);
    a.patch(model.operator_codes_field, vec);
    for (size_t k = 0; k < model.codes.size(); ++k)
      write_code(a, vec + 4 + 4 * k, model.codes[k].builtin, model.codes[k].custom, model.codes[k].version);
    for (size_t r = 0; r < plan.renames.size(); ++r) {
      const GradrtNode& node = plan.nodes[plan.renames[r]];
      const uint32_t code = static_cast<uint32_t>(model.codes.size() + r);
      write_code(a, vec + 4 + 4 * code, kBuiltinCustom, node.name, node.version);
      write_operator(a, model.subgraphs[node.subgraph].operators[node.index], code);
    }
  }
  for (uint32_t b : plan.misaligned) {  // Buffer table {data}, data 64-byte aligned
    const ModelBuffer& mb = model.buffers[b];
    std::vector<size_t> pos;
    a.patch(mb.slot, a.table({{0, 0, 4}}, &pos));
    a.patch(pos[0], a.vector(model.bytes.data + mb.data, static_cast<uint32_t>(mb.size), 1, kBufferAlignment));
  }
  if (out->size() > 0x7fffffffu)
    return Status(Code::ResourceExhausted, "model: the prepared model would exceed 2 GiB (" + std::to_string(out->size()) + " bytes)");
  return check_rewrite(model, plan, *out);
}

}  // namespace gradrt::litert

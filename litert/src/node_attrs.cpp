#include "node_attrs.h"

#include <cstring>

#include "flexbuffer.h"
#include "status_macros.h"

namespace gradrt::litert {

namespace {

Status bad(const std::string& msg) { return Status(Code::InvalidArgument, "NodeDef: " + msg); }

// Protobuf wire format: a key is a varint (field << 3 | wire type); wire types 0 varint,
// 1 fixed64, 2 length-delimited, 5 fixed32 (3/4, groups, are not used by NodeDef).
class Wire {
 public:
  explicit Wire(std::string_view b) : b_(b) {}
  bool done() const { return p_ >= b_.size(); }
  Status varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= b_.size()) return bad("varint runs past the end");
      const uint8_t c = static_cast<uint8_t>(b_[p_++]);
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) {
        *out = v;
        return Status::OK();
      }
    }
    return bad("varint longer than 10 bytes");
  }
  Status key(uint32_t* field, uint32_t* type) {
    uint64_t k;
    GRADRT_RETURN_IF_ERROR(varint(&k));
    *field = static_cast<uint32_t>(k >> 3);
    *type = static_cast<uint32_t>(k & 7);
    if (*field == 0) return bad("field number 0");
    return Status::OK();
  }
  Status bytes(std::string_view* out) {
    uint64_t n;
    GRADRT_RETURN_IF_ERROR(varint(&n));
    if (n > b_.size() - p_) return bad("length " + std::to_string(n) + " runs past the end");
    *out = b_.substr(p_, static_cast<size_t>(n));
    p_ += static_cast<size_t>(n);
    return Status::OK();
  }
  Status fixed(size_t n, uint64_t* out) {
    if (n > b_.size() - p_) return bad("fixed-size value runs past the end");
    uint64_t v = 0;
    std::memcpy(&v, b_.data() + p_, n);
    p_ += n;
    *out = v;
    return Status::OK();
  }
  Status skip(uint32_t type) {
    uint64_t v;
    std::string_view s;
    switch (type) {
      case 0: return varint(&v);
      case 1: return fixed(8, &v);
      case 2: return bytes(&s);
      case 5: return fixed(4, &v);
      default: return bad("wire type " + std::to_string(type) + " is not supported");
    }
  }

 private:
  std::string_view b_;
  size_t p_ = 0;
};

double float_bits(uint64_t v) {
  float f;
  const uint32_t u = static_cast<uint32_t>(v);
  std::memcpy(&f, &u, 4);
  return f;
}

// Scalars of a repeated field, packed (wire type 2) or one at a time; fixed32 = 4-byte floats.
Status repeated(Wire& w, uint32_t type, bool fixed32, AttrValue* list, int kind) {
  auto one = [&](Wire& r, uint32_t t) -> Status {
    uint64_t v;
    if (fixed32 ? t != 5 : t != 0) return bad("list element of wire type " + std::to_string(t));
    GRADRT_RETURN_IF_ERROR(fixed32 ? r.fixed(4, &v) : r.varint(&v));
    if (fixed32) list->list.emplace_back(float_bits(v));
    else if (kind == 5) list->list.emplace_back(v != 0);
    else list->list.emplace_back(static_cast<int64_t>(v));
    return Status::OK();
  };
  if (type != 2) return one(w, type);
  std::string_view packed;
  GRADRT_RETURN_IF_ERROR(w.bytes(&packed));
  Wire r(packed);
  while (!r.done()) GRADRT_RETURN_IF_ERROR(one(r, fixed32 ? 5 : 0));
  return Status::OK();
}

// TensorShapeProto (dim 2 = Dim {size 1}, unknown_rank 3) -> the list of its sizes (-1: unknown).
Status shape_value(std::string_view b, AttrValue* out) {
  out->kind = AttrValue::Kind::List;
  Wire w(b);
  while (!w.done()) {
    uint32_t f, t;
    GRADRT_RETURN_IF_ERROR(w.key(&f, &t));
    if (f == 2 && t == 2) {
      std::string_view dim;
      GRADRT_RETURN_IF_ERROR(w.bytes(&dim));
      Wire d(dim);
      int64_t size = 0;
      while (!d.done()) {
        uint32_t df, dt;
        uint64_t v;
        GRADRT_RETURN_IF_ERROR(d.key(&df, &dt));
        if (df == 1 && dt == 0) {
          GRADRT_RETURN_IF_ERROR(d.varint(&v));
          size = static_cast<int64_t>(v);
        } else {
          GRADRT_RETURN_IF_ERROR(d.skip(dt));
        }
      }
      out->list.emplace_back(size);
    } else if (f == 3 && t == 0) {
      uint64_t v;
      GRADRT_RETURN_IF_ERROR(w.varint(&v));
      if (v) return bad("a shape of unknown rank is not supported");
    } else {
      GRADRT_RETURN_IF_ERROR(w.skip(t));
    }
  }
  return Status::OK();
}

// ListValue -> a gradrt list; *skip = a list of types (not an attribute gradrt takes).
Status list_value(std::string_view b, AttrValue* out, bool* skip) {
  out->kind = AttrValue::Kind::List;
  Wire w(b);
  while (!w.done()) {
    uint32_t f, t;
    GRADRT_RETURN_IF_ERROR(w.key(&f, &t));
    if (f == 2) {
      std::string_view s;
      if (t != 2) return bad("list(string) element of wire type " + std::to_string(t));
      GRADRT_RETURN_IF_ERROR(w.bytes(&s));
      out->list.emplace_back(std::string(s));
    } else if (f == 3 || f == 5) {
      GRADRT_RETURN_IF_ERROR(repeated(w, t, false, out, static_cast<int>(f)));
    } else if (f == 4) {
      GRADRT_RETURN_IF_ERROR(repeated(w, t, true, out, 4));
    } else if (f == 6) {
      *skip = true;
      GRADRT_RETURN_IF_ERROR(w.skip(t));
    } else if (f == 7 && t == 2) {  // list(shape): a list of dimension lists
      std::string_view shape;
      GRADRT_RETURN_IF_ERROR(w.bytes(&shape));
      out->list.emplace_back();
      GRADRT_RETURN_IF_ERROR(shape_value(shape, &out->list.back()));
    } else if (f >= 7 && f <= 9) {
      return bad("list of tensors or functions is not supported");
    } else {
      GRADRT_RETURN_IF_ERROR(w.skip(t));
    }
  }
  return Status::OK();
}

Status attr_value(std::string_view b, AttrValue* out, bool* skip) {
  Wire w(b);
  *skip = false;
  bool any = false;
  while (!w.done()) {
    uint32_t f, t;
    GRADRT_RETURN_IF_ERROR(w.key(&f, &t));
    uint64_t v;
    std::string_view s;
    any = true;
    switch (f) {
      case 1:
        if (t != 2) return bad("list of wire type " + std::to_string(t));
        GRADRT_RETURN_IF_ERROR(w.bytes(&s));
        *out = AttrValue();
        GRADRT_RETURN_IF_ERROR(list_value(s, out, skip));
        break;
      case 2:
        if (t != 2) return bad("string of wire type " + std::to_string(t));
        GRADRT_RETURN_IF_ERROR(w.bytes(&s));
        *out = AttrValue(std::string(s));
        break;
      case 3:
      case 5:
        if (t != 0) return bad("int/bool of wire type " + std::to_string(t));
        GRADRT_RETURN_IF_ERROR(w.varint(&v));
        *out = f == 3 ? AttrValue(static_cast<int64_t>(v)) : AttrValue(v != 0);
        break;
      case 4:
        if (t != 5) return bad("float of wire type " + std::to_string(t));
        GRADRT_RETURN_IF_ERROR(w.fixed(4, &v));
        *out = AttrValue(float_bits(v));
        break;
      case 6:
        *skip = true;
        GRADRT_RETURN_IF_ERROR(w.skip(t));
        break;
      case 7:
        if (t != 2) return bad("shape of wire type " + std::to_string(t));
        GRADRT_RETURN_IF_ERROR(w.bytes(&s));
        *out = AttrValue();
        GRADRT_RETURN_IF_ERROR(shape_value(s, out));
        break;
      default:
        return bad("attribute of kind " + std::to_string(f) + " (tensor, placeholder or function) is not supported");
    }
  }
  if (!any) return bad("empty attribute value");
  return Status::OK();
}

}  // namespace

Status node_def_attrs(std::string_view node_def, std::string* op, Attrs* attrs) {
  Wire w(node_def);
  op->clear();
  attrs->clear();
  while (!w.done()) {
    uint32_t f, t;
    GRADRT_RETURN_IF_ERROR(w.key(&f, &t));
    if ((f == 2 || f == 5) && t != 2) return bad("field " + std::to_string(f) + " of wire type " + std::to_string(t));
    if (f == 2) {
      std::string_view s;
      GRADRT_RETURN_IF_ERROR(w.bytes(&s));
      *op = std::string(s);
    } else if (f == 5) {  // map<string, AttrValue> entry
      std::string_view entry, key, value;
      GRADRT_RETURN_IF_ERROR(w.bytes(&entry));
      Wire e(entry);
      bool has_value = false;
      while (!e.done()) {
        uint32_t ef, et;
        GRADRT_RETURN_IF_ERROR(e.key(&ef, &et));
        if ((ef == 1 || ef == 2) && et != 2) return bad("attr entry field of wire type " + std::to_string(et));
        if (ef == 1) GRADRT_RETURN_IF_ERROR(e.bytes(&key));
        else if (ef == 2) {
          has_value = true;
          GRADRT_RETURN_IF_ERROR(e.bytes(&value));
        } else {
          GRADRT_RETURN_IF_ERROR(e.skip(et));
        }
      }
      if (key.empty() || key[0] == '_') continue;
      if (!has_value) return bad("attribute '" + std::string(key) + "' has no value");
      AttrValue a;
      bool skip = false;
      Status s = attr_value(value, &a, &skip);
      if (!s.ok()) return Status(s.code(), s.message() + " (attribute '" + std::string(key) + "')");
      if (!skip) (*attrs)[std::string(key)] = std::move(a);
    } else {
      GRADRT_RETURN_IF_ERROR(w.skip(t));
    }
  }
  if (op->empty()) return bad("no op name");
  return Status::OK();
}

Status flex_node_attrs(std::string_view options, std::string* op, Attrs* attrs) {
  flex::Ref root, name, def;
  size_t n;
  GRADRT_RETURN_IF_ERROR(flex::Ref::root(options, &root));
  GRADRT_RETURN_IF_ERROR(root.size(&n));
  if (n < 2) return bad("Flex options hold " + std::to_string(n) + " values, expected [op name, NodeDef]");
  std::string_view name_s, def_s;
  GRADRT_RETURN_IF_ERROR(root.at(0, &name));
  GRADRT_RETURN_IF_ERROR(root.at(1, &def));
  GRADRT_RETURN_IF_ERROR(name.as_string(&name_s));
  GRADRT_RETURN_IF_ERROR(def.as_string(&def_s));
  GRADRT_RETURN_IF_ERROR(node_def_attrs(def_s, op, attrs));
  if (*op != name_s) return bad("Flex options name op '" + std::string(name_s) + "' but the NodeDef's op is '" + *op + "'");
  return Status::OK();
}

// One FlexBuffer value -> an attribute (scalars, strings, vectors of them); *skip: not taken.
static Status flex_value(const flex::Ref& r, AttrValue* out, int depth) {
  using flex::Type;
  switch (r.type()) {
    case flex::kBool: {
      int64_t v;
      GRADRT_RETURN_IF_ERROR(r.as_int(&v));
      *out = AttrValue(v != 0);
      return Status::OK();
    }
    case flex::kInt: case flex::kUInt: case flex::kIndirectInt: case flex::kIndirectUInt: {
      int64_t v;
      GRADRT_RETURN_IF_ERROR(r.as_int(&v));
      *out = AttrValue(v);
      return Status::OK();
    }
    case flex::kFloat: case flex::kIndirectFloat: {
      double v;
      GRADRT_RETURN_IF_ERROR(r.as_double(&v));
      *out = AttrValue(v);
      return Status::OK();
    }
    case flex::kString: case flex::kKey: case flex::kBlob: {
      std::string_view s;
      GRADRT_RETURN_IF_ERROR(r.as_string(&s));
      *out = AttrValue(std::string(s));
      return Status::OK();
    }
    default: break;
  }
  if (!r.is_vector() || r.type() == flex::kMap || depth > 0)
    return Status(Code::InvalidArgument, "custom options: value of FlexBuffer type " + std::to_string(r.type()) + " is not an attribute");
  size_t n;
  GRADRT_RETURN_IF_ERROR(r.size(&n));
  out->kind = AttrValue::Kind::List;
  out->list.resize(n);
  for (size_t i = 0; i < n; ++i) {
    flex::Ref e;
    GRADRT_RETURN_IF_ERROR(r.at(i, &e));
    GRADRT_RETURN_IF_ERROR(flex_value(e, &out->list[i], depth + 1));
  }
  return Status::OK();
}

Status flex_map_attrs(std::string_view options, Attrs* attrs) {
  attrs->clear();
  flex::Ref root;
  GRADRT_RETURN_IF_ERROR(flex::Ref::root(options, &root));
  if (root.type() != flex::kMap) return Status(Code::InvalidArgument, "custom options: not a FlexBuffer map of attributes");
  size_t n;
  GRADRT_RETURN_IF_ERROR(root.size(&n));
  for (size_t i = 0; i < n; ++i) {
    std::string_view key;
    flex::Ref v;
    GRADRT_RETURN_IF_ERROR(root.key(i, &key));
    GRADRT_RETURN_IF_ERROR(root.at(i, &v));
    if (key.empty() || key[0] == '_' || key == "T") continue;  // dtypes come with the tensors
    AttrValue a;
    Status s = flex_value(v, &a, 0);
    if (!s.ok()) return Status(s.code(), s.message() + " (attribute '" + std::string(key) + "')");
    (*attrs)[std::string(key)] = std::move(a);
  }
  return Status::OK();
}

}  // namespace gradrt::litert

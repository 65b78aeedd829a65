// The readers of litert/ on hand-built bytes: FlatBuffer tables, FlexBuffers, NodeDef wire format.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "flatbuffer.h"
#include "flexbuffer.h"
#include "node_attrs.h"

using namespace gradrt;
using namespace gradrt::litert;

namespace {

// Protobuf encoding for the tests (written here independently of the reader).
std::string varint(uint64_t v) {
  std::string s;
  do {
    uint8_t b = v & 0x7f;
    v >>= 7;
    s.push_back(static_cast<char>(b | (v ? 0x80 : 0)));
  } while (v);
  return s;
}
std::string field(int f, int type) { return varint(static_cast<uint64_t>(f) << 3 | static_cast<uint64_t>(type)); }
std::string bytes_field(int f, const std::string& b) { return field(f, 2) + varint(b.size()) + b; }
std::string attr(const std::string& key, const std::string& value) {
  return bytes_field(5, bytes_field(1, key) + bytes_field(2, value));
}
std::string float32(float f) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &f, 4);
  return s;
}

// A FlexBuffer vector [a, b] of two strings, all 1-byte wide (layout in flexbuffer.h).
std::string flex_pair(const std::string& a, const std::string& b) {
  std::string s;
  s.push_back(static_cast<char>(a.size()));
  const size_t pa = s.size();
  s += a + '\0';
  s.push_back(static_cast<char>(b.size()));
  const size_t pb = s.size();
  s += b + '\0';
  s.push_back(2);  // vector length
  const size_t v = s.size();
  s.push_back(static_cast<char>(v - pa));
  s.push_back(static_cast<char>(v + 1 - pb));
  s.push_back(5 << 2);  // STRING, width 1
  s.push_back(5 << 2);
  s.push_back(static_cast<char>(s.size() - v));  // root: offset to the vector
  s.push_back(10 << 2);                          // VECTOR, width 1
  s.push_back(1);                                // root width
  return s;
}

std::string conv_node_def() {
  std::string strides = bytes_field(3, varint(1) + varint(2) + varint(2) + varint(1));  // packed ints
  return bytes_field(1, "gradients/conv") + bytes_field(2, "Conv2DBackpropFilter") + bytes_field(3, "x") +
         attr("strides", bytes_field(1, strides)) + attr("padding", bytes_field(2, "VALID")) +
         attr("T", field(6, 0) + varint(1)) + attr("use_cudnn_on_gpu", field(5, 0) + varint(1)) +
         attr("explicit_paddings", bytes_field(1, "")) + attr("_class", bytes_field(1, bytes_field(2, "loc:@x"))) +
         attr("dilations", bytes_field(1, field(3, 0) + varint(1) + field(3, 0) + varint(1) + field(3, 0) +
                                              varint(1) + field(3, 0) + varint(1))) +  // unpacked ints
         attr("epsilon", field(4, 5) + float32(0.001f));
}

}  // namespace

TEST_CASE("litert: NodeDef attributes (wire format)") {
  std::string op;
  Attrs a;
  REQUIRE(node_def_attrs(conv_node_def(), &op, &a).ok());
  CHECK(op == "Conv2DBackpropFilter");
  CHECK(a.count("T") == 0);       // type attributes: the tensors carry dtypes
  CHECK(a.count("_class") == 0);  // internal attributes
  REQUIRE(a.count("strides") == 1);
  CHECK(a["strides"].to_json() == "[1,2,2,1]");
  CHECK(a["dilations"].to_json() == "[1,1,1,1]");
  CHECK(a["padding"].s == "VALID");
  CHECK(a["use_cudnn_on_gpu"].kind == AttrValue::Kind::Bool);
  CHECK(a["explicit_paddings"].kind == AttrValue::Kind::List);
  CHECK(a["explicit_paddings"].list.empty());
  CHECK(a["epsilon"].f == static_cast<double>(0.001f));  // float32 widened exactly

  // shape {dim {size: 2} dim {size: -1}} and list(shape) [[3]]
  const std::string shape = bytes_field(2, field(1, 0) + varint(2)) + bytes_field(2, field(1, 0) + varint(~uint64_t{0}));
  REQUIRE(node_def_attrs(bytes_field(2, "X") + attr("shape", bytes_field(7, shape)) +
                             attr("shapes", bytes_field(1, bytes_field(7, bytes_field(2, field(1, 0) + varint(3))))),
                         &op, &a)
              .ok());
  CHECK(a["shape"].to_json() == "[2,-1]");
  CHECK(a["shapes"].to_json() == "[[3]]");
}

TEST_CASE("litert: Flex options [op, NodeDef]") {
  std::string op;
  Attrs a;
  REQUIRE(flex_node_attrs(flex_pair("Conv2DBackpropFilter", conv_node_def()), &op, &a).ok());
  CHECK(op == "Conv2DBackpropFilter");
  CHECK(a.size() == 6);
  Status s = flex_node_attrs(flex_pair("Conv2DBackpropInput", conv_node_def()), &op, &a);
  CHECK(s.code() == Code::InvalidArgument);
  CHECK(s.message().find("Conv2DBackpropInput") != std::string::npos);
}

TEST_CASE("litert: hostile NodeDefs and FlexBuffers give InvalidArgument") {
  std::string op;
  Attrs a;
  const std::string good = conv_node_def();
  for (size_t n = 0; n < good.size(); ++n) {  // every truncation: a status, never a crash
    Status s = node_def_attrs(good.substr(0, n), &op, &a);
    if (!s.ok()) CHECK(s.code() == Code::InvalidArgument);
  }
  CHECK(!node_def_attrs(std::string(11, '\xff'), &op, &a).ok());                           // 11-byte varint
  CHECK(!node_def_attrs(field(2, 3), &op, &a).ok());                                        // group
  CHECK(!node_def_attrs(bytes_field(2, "X") + attr("t", bytes_field(8, "")), &op, &a).ok());  // tensor attr
  CHECK(!node_def_attrs(bytes_field(2, "X") + attr("s", bytes_field(7, field(3, 0) + varint(1))), &op, &a).ok());
  CHECK(!node_def_attrs(field(2, 2) + varint(1000) + "ab", &op, &a).ok());                   // length past end
  const std::string flex = flex_pair("Conv2DBackpropFilter", good);
  for (size_t n = 0; n < flex.size(); ++n) CHECK(!flex_node_attrs(flex.substr(0, n), &op, &a).ok());
  for (size_t i = 0; i < flex.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {  // every single-bit flip
      std::string f = flex;
      f[i] = static_cast<char>(f[i] ^ (1 << bit));
      Status s = flex_node_attrs(f, &op, &a);
      if (!s.ok()) CHECK(s.code() == Code::InvalidArgument);
    }
}

TEST_CASE("litert: FlexBuffer map of a plain custom op") {
  // The custom options TF 2.21's converter wrote (allow_custom_ops) for
  // tf.nn.fractional_avg_pool(x, [1, 1.5, 1.5, 1], pseudo_random=True, overlapping=True, seed=3):
  // {T: 0, deterministic: true, overlapping: true, pooling_ratio: [1, 1.5, 1.5, 1],
  //  pseudo_random: true, seed: 87654321, seed2: 3}
  static const char kOptions[] =
      "\x54\x00\x64\x65\x74\x65\x72\x6d\x69\x6e\x69\x73\x74\x69\x63\x00\x6f\x76\x65\x72\x6c\x61\x70\x70"
      "\x69\x6e\x67\x00\x70\x6f\x6f\x6c\x69\x6e\x67\x5f\x72\x61\x74\x69\x6f\x00\x00\x00\x04\x00\x00\x00"
      "\x00\x00\x80\x3f\x00\x00\xc0\x3f\x00\x00\xc0\x3f\x00\x00\x80\x3f\x70\x73\x65\x75\x64\x6f\x5f\x72"
      "\x61\x6e\x64\x6f\x6d\x00\x73\x65\x65\x64\x00\x73\x65\x65\x64\x32\x00\x07\x5a\x59\x4c\x41\x1e\x11"
      "\x0d\x00\x00\x00\x0a\x00\x00\x00\x01\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00"
      "\x01\x00\x00\x00\x4c\x00\x00\x00\x01\x00\x00\x00\xb1\x7f\x39\x05\x03\x00\x00\x00\x06\x6a\x6a\x36"
      "\x6a\x06\x06\x23\x26\x01";
  const std::string options(kOptions, sizeof kOptions - 1);
  Attrs a;
  Status st = flex_map_attrs(options, &a);
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  CHECK(a.count("T") == 0);
  CHECK(a.size() == 6);
  CHECK(a["overlapping"].kind == AttrValue::Kind::Bool);
  CHECK(a["overlapping"].b);
  CHECK(a["deterministic"].b);
  CHECK(a["pseudo_random"].b);
  CHECK(a["pooling_ratio"].to_json() == "[1.0,1.5,1.5,1.0]");
  CHECK(a["seed"].i == 87654321);
  CHECK(a["seed2"].i == 3);
  for (size_t n = 0; n < options.size(); ++n) {  // truncations and bit flips: statuses only
    Status t = flex_map_attrs(options.substr(0, n), &a);
    if (!t.ok()) CHECK(t.code() == Code::InvalidArgument);
    std::string f = options;
    f[n] = static_cast<char>(f[n] ^ 0x41);
    t = flex_map_attrs(f, &a);
    if (!t.ok()) CHECK(t.code() == Code::InvalidArgument);
  }
}

TEST_CASE("litert: FlatBuffer table reader") {
  // vtable [8, 12, field0 at 4, field1 absent] then the table: soffset 8, uint32 7, then a
  // uoffset to a string "hi" as field 2? (field 2 is beyond the vtable: absent).
  std::vector<uint8_t> b(32, 0);
  fb::store<uint32_t>(b.data(), 12);           // root -> table at 12
  fb::store<uint16_t>(b.data() + 4, 8);        // vtable at 4: 8 bytes
  fb::store<uint16_t>(b.data() + 6, 8);        // table: 8 bytes
  fb::store<uint16_t>(b.data() + 8, 4);        // field 0 at table + 4
  fb::store<uint16_t>(b.data() + 10, 0);       // field 1 absent
  fb::store<int32_t>(b.data() + 12, 12 - 4);   // soffset to the vtable
  fb::store<uint32_t>(b.data() + 16, 7);
  fb::Table t;
  REQUIRE(fb::Table::at({b.data(), b.size()}, 12, "T", &t).ok());
  uint32_t v;
  CHECK((t.u32(0, 9, &v).ok() && v == 7));
  CHECK((t.u32(1, 9, &v).ok() && v == 9));   // absent: default
  CHECK((t.u32(5, 9, &v).ok() && v == 9));   // beyond the vtable: default
  std::string_view s;
  CHECK((t.string(1, &s).ok() && s.empty()));
  fb::store<int32_t>(b.data() + 12, 1000);     // vtable before the buffer
  CHECK(fb::Table::at({b.data(), b.size()}, 12, "T", &t).code() == Code::InvalidArgument);
  fb::store<int32_t>(b.data() + 12, -100);     // vtable after the buffer
  CHECK(fb::Table::at({b.data(), b.size()}, 12, "T", &t).code() == Code::InvalidArgument);
  CHECK(fb::Table::at({b.data(), b.size()}, 30, "T", &t).code() == Code::InvalidArgument);
}

// A gradrt node's attributes, read from what TF's TFLite converter writes:
//  - Flex ops: custom options = FlexBuffer vector [op name, serialized NodeDef]; the NodeDef's
//    attr map is read with a protobuf wire-format reader (NodeDef: op 2, attr 5 = map entries
//    {key 1, value 2}; AttrValue: list 1, s 2, i 3, f 4, b 5, type 6, shape 7, tensor 8,
//    placeholder 9, func 10; ListValue: s 2, i 3, f 4, b 5, type 6, shape 7, tensor 8, func 9).
//  - plain custom ops (FractionalAvgPool/Grad with allow_custom_ops): a FlexBuffer map
//    attribute name -> value.
// As gradrt_tf does: type attributes (T, ...) and names starting with '_' are left out (the
// tensors carry their dtypes); float attributes are float32 in a NodeDef and widened exactly; a
// shape is the list of its sizes (-1 unknown), a list of shapes a list of such lists.
#pragma once

#include <string>
#include <string_view>

#include "gradrt/gradrt.h"

namespace gradrt::litert {

// Flex options -> TF op name (checked against the NodeDef's op) and attributes.
Status flex_node_attrs(std::string_view options, std::string* op, Attrs* attrs);
// A serialized NodeDef -> its op and attributes.
Status node_def_attrs(std::string_view node_def, std::string* op, Attrs* attrs);
// A FlexBuffer map of attributes (plain custom ops) -> attributes.
Status flex_map_attrs(std::string_view options, Attrs* attrs);

}  // namespace gradrt::litert

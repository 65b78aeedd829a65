// Which ops each kind of test covers, for the coverage test (test_coverage.cpp): golden and
// hostile coverage is read from tests/data; the sweep and gradient-check files declare theirs
// here (GRADRT_TEST_COVERS) and record the ops they really ran (ran()); a last test case of
// each file checks the declaration against the record.
#pragma once

#include <initializer_list>
#include <set>
#include <string>

namespace test {

bool declare_coverage(const char* kind, std::initializer_list<const char*> ops);
const std::set<std::string>& declared(const std::string& kind);
void ran(const std::string& kind, const std::string& op);
// Every op declared for kind ran (when any op of kind ran in this process; else a message).
void check_declared_ran(const std::string& kind);

}  // namespace test

// The conv family: each forward op with its two gradients.
#define GRADRT_TEST_CONV_FAMILY                                                                    \
  "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",                 \
      "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"

// The elementwise activation and bias ops with their gradients, and the pools with theirs.
#define GRADRT_TEST_ELEMENTWISE_FAMILY "Relu", "Relu6", "ReluGrad", "Relu6Grad", "BiasAdd", "BiasAddGrad"
#define GRADRT_TEST_POOL_FAMILY "MaxPool", "MaxPoolGrad", "AvgPool", "AvgPoolGrad"

#define GRADRT_TEST_COVERS_CAT2(a, b) a##b
#define GRADRT_TEST_COVERS_CAT(a, b) GRADRT_TEST_COVERS_CAT2(a, b)
#define GRADRT_TEST_COVERS(kind, ...) \
  static const bool GRADRT_TEST_COVERS_CAT(gradrt_covers_, __LINE__) = test::declare_coverage(kind, {__VA_ARGS__})

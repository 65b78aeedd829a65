// AttrValue::parse_json / to_json (core/json.cpp): strict RFC 8259, one value, no objects.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gradrt/gradrt.h"

namespace {

using gradrt::AttrValue;
using Kind = gradrt::AttrValue::Kind;

AttrValue parse_ok(const std::string& text) {
  AttrValue v;
  gradrt::Status s = AttrValue::parse_json(text, &v);
  CAPTURE(text);
  CAPTURE(s.to_string());
  CHECK(s.ok());
  return v;
}

// Expects InvalidArgument with `needle` in the message, and `out` left untouched.
void expect_refused(const std::string& text, const std::string& needle) {
  AttrValue v("untouched");
  gradrt::Status s = AttrValue::parse_json(text, &v);
  CAPTURE(text);
  CAPTURE(s.to_string());
  CHECK(s.code() == gradrt::Code::InvalidArgument);
  CHECK(s.message().find(needle) != std::string::npos);
  CHECK(v.kind == Kind::String);
  CHECK(v.s == "untouched");
}

}  // namespace

TEST_CASE("json: scalars") {
  CHECK(parse_ok("null").kind == Kind::Null);
  CHECK(parse_ok("true").kind == Kind::Bool);
  CHECK(parse_ok("true").b == true);
  CHECK(parse_ok(" false ").b == false);
  CHECK(parse_ok("\"SAME\"").s == "SAME");
  CHECK(parse_ok("\"\"").s.empty());
}

TEST_CASE("json: integers fit int64, everything else is a double") {
  AttrValue v = parse_ok("0");
  CHECK(v.kind == Kind::Int);
  CHECK(v.i == 0);
  v = parse_ok("-42");
  CHECK(v.kind == Kind::Int);
  CHECK(v.i == -42);
  v = parse_ok("9223372036854775807");
  CHECK(v.kind == Kind::Int);
  CHECK(v.i == INT64_MAX);
  v = parse_ok("-9223372036854775808");
  CHECK(v.kind == Kind::Int);
  CHECK(v.i == INT64_MIN);
  v = parse_ok("9223372036854775808");  // 2^63: beyond int64
  CHECK(v.kind == Kind::Float);
  CHECK(v.f == 9223372036854775808.0);
  v = parse_ok("0.001");
  CHECK(v.kind == Kind::Float);
  CHECK(v.f == 0.001);
  v = parse_ok("1e3");
  CHECK(v.kind == Kind::Float);
  CHECK(v.f == 1000.0);
  v = parse_ok("-2.5E-1");
  CHECK(v.f == -0.25);
  v = parse_ok("1.0");
  CHECK(v.kind == Kind::Float);
  CHECK(parse_ok("1.7976931348623157e308").f == 1.7976931348623157e308);
}

TEST_CASE("json: lists and nesting") {
  AttrValue v = parse_ok("[1,2,2,1]");
  REQUIRE(v.kind == Kind::List);
  REQUIRE(v.list.size() == 4);
  CHECK(v.list[1].kind == Kind::Int);
  CHECK(v.list[1].i == 2);
  v = parse_ok(" [ ] ");
  CHECK(v.kind == Kind::List);
  CHECK(v.list.empty());
  v = parse_ok("[[0, 0], [1, 2], [3.5, \"x\"], [true, null, []]]");
  REQUIRE(v.list.size() == 4);
  CHECK(v.list[1].list[1].i == 2);
  CHECK(v.list[2].list[0].f == 3.5);
  CHECK(v.list[2].list[1].s == "x");
  CHECK(v.list[3].list[1].kind == Kind::Null);
  CHECK(v.list[3].list[2].kind == Kind::List);
  const std::string deep64 = std::string(64, '[') + std::string(64, ']');
  CHECK(parse_ok(deep64).kind == Kind::List);
}

TEST_CASE("json: string escapes and UTF-8") {
  CHECK(parse_ok(R"("a\"b\\c\/d\b\f\n\r\t")").s == "a\"b\\c/d\b\f\n\r\t");
  CHECK(parse_ok(R"("\u0041\u00e9\u20AC")").s == "A\xC3\xA9\xE2\x82\xAC");  // A, e-acute, euro
  CHECK(parse_ok(R"("\ud83d\ude00")").s == "\xF0\x9F\x98\x80");             // U+1F600 as a surrogate pair
  CHECK(parse_ok("\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"").s == "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  CHECK(parse_ok(R"("\u0000")").s == std::string(1, '\0'));
}

TEST_CASE("json: refusals") {
  expect_refused("", "empty");
  expect_refused("   ", "empty");
  expect_refused("[1,2] x", "after the value");
  expect_refused("1 2", "after the value");
  expect_refused("{}", "objects are not supported");
  expect_refused("[{\"a\": 1}]", "objects are not supported");
  expect_refused(std::string(65, '[') + std::string(65, ']'), "nested deeper than 64");
  expect_refused(std::string(100000, '['), "nested deeper than 64");
  expect_refused("[1,2", "unterminated list");
  expect_refused("[1,]", "invalid value");
  expect_refused("[,1]", "invalid value");
  expect_refused("[1 2]", "expected ',' or ']'");
  expect_refused("SAME", "invalid value");
  expect_refused("True", "invalid value");
  expect_refused("nul", "invalid value");
  expect_refused("'SAME'", "invalid value");
}

TEST_CASE("json: number refusals") {
  expect_refused("01", "after the value");
  expect_refused("+1", "invalid value");
  expect_refused("-", "invalid number");
  expect_refused("1.", "digit after '.'");
  expect_refused(".5", "invalid value");
  expect_refused("1e", "digit in the exponent");
  expect_refused("1e+", "digit in the exponent");
  expect_refused("NaN", "invalid value");
  expect_refused("Infinity", "invalid value");
  expect_refused("-Infinity", "invalid number");
  expect_refused("1e400", "out of range");
  expect_refused("-1e400", "out of range");
  expect_refused("1" + std::string(400, '0'), "out of range");
  expect_refused("0x10", "after the value");
}

TEST_CASE("json: string refusals") {
  expect_refused("\"abc", "unterminated string");
  expect_refused("\"abc\\", "unterminated string");
  expect_refused("\"a\nb\"", "control character");
  expect_refused("\"a\tb\"", "control character");
  expect_refused(R"("\x41")", "invalid escape");
  expect_refused(R"("\U0041")", "invalid escape");
  expect_refused(R"("\u12")", "\\u escape");
  expect_refused(R"("\u12G4")", "invalid hex digit");
  expect_refused(R"("\ud83d")", "unpaired high surrogate");
  expect_refused(R"("\ud83dx")", "unpaired high surrogate");
  expect_refused(R"("\ud83d\u0041")", "low surrogate");
  expect_refused(R"("\ude00")", "unpaired low surrogate");
  expect_refused("\"\xFF\"", "UTF-8");
  expect_refused("\"\xC0\xAF\"", "UTF-8");          // overlong '/'
  expect_refused("\"\xED\xA0\x80\"", "UTF-8");      // an encoded surrogate
  expect_refused("\"\xF4\x90\x80\x80\"", "UTF-8");  // above U+10FFFF
  expect_refused("\"\xE2\x82\"", "UTF-8");          // truncated sequence
}

TEST_CASE("json: every byte string is safe to parse") {
  // Every 1- and 2-byte text: parse_json either succeeds or says why, never crashes.
  for (int a = 0; a < 256; ++a) {
    for (int b = -1; b < 256; ++b) {
      std::string text(1, static_cast<char>(a));
      if (b >= 0) text += static_cast<char>(b);
      AttrValue v;
      gradrt::Status s = AttrValue::parse_json(text, &v);
      if (!s.ok()) CHECK(s.code() == gradrt::Code::InvalidArgument);
    }
  }
}

TEST_CASE("json: to_json") {
  CHECK(AttrValue().to_json() == "null");
  CHECK(AttrValue(true).to_json() == "true");
  CHECK(AttrValue(int64_t{-7}).to_json() == "-7");
  CHECK(AttrValue(0.001).to_json() == "0.001");
  CHECK(AttrValue(1.0).to_json() == "1.0");  // stays a Float when read back
  CHECK(AttrValue(1e300).to_json() == "1e+300");
  CHECK(AttrValue("a\"b\\\n\x01").to_json() == R"("a\"b\\\n\u0001")");
  CHECK(AttrValue({1, 2, 2, 1}).to_json() == "[1,2,2,1]");
  CHECK(AttrValue(std::vector<double>{1.5, 2.0}).to_json() == "[1.5,2.0]");
}

TEST_CASE("json: to_json reads back to the same value") {
  AttrValue list(std::vector<int64_t>{1, -2});
  list.list.push_back(AttrValue(0.1));
  list.list.push_back(AttrValue("\xE2\x82\xAC \t"));
  list.list.push_back(AttrValue());
  list.list.push_back(AttrValue(false));
  AttrValue back;
  REQUIRE(AttrValue::parse_json(list.to_json(), &back).ok());
  REQUIRE(back.list.size() == 6);
  CHECK(back.list[0].i == 1);
  CHECK(back.list[1].i == -2);
  CHECK(back.list[2].kind == Kind::Float);
  CHECK(back.list[2].f == 0.1);
  CHECK(back.list[3].s == "\xE2\x82\xAC \t");
  CHECK(back.list[4].kind == Kind::Null);
  CHECK(back.list[5].kind == Kind::Bool);
}

TEST_CASE("json: vector constructors make lists of Int and Float") {
  AttrValue ints(std::vector<int64_t>{1, 2});
  CHECK(ints.kind == Kind::List);
  CHECK(ints.list[0].kind == Kind::Int);
  CHECK(ints.list[1].i == 2);
  AttrValue floats(std::vector<double>{1.0, 1.44});
  CHECK(floats.kind == Kind::List);
  CHECK(floats.list[1].kind == Kind::Float);
  CHECK(floats.list[1].f == 1.44);
}

// core/codec/yaml_go_rules.cpp: YAML 1.1 scalars and numbers as go-yaml v2 (sigs.k8s.io/yaml) resolves
// them, and JSON numbers as encoding/json reads them.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <tuple>
#include <variant>

#include "core/codec/codec.h"
#include "core/codec/codec_internal.h"
#include "core/codec/templates.h"

using namespace gpuops;
namespace json = boost::json;

// go-yaml v2 (YAML 1.1) plain scalars, as sigs.k8s.io/yaml converts them.
TEST(YamlGoRules, Yaml11Scalars) {
  auto docs = core::read_documents(
      "a: yes\nb: \"yes\"\nc: On\nd: n\ne: 123\nf: 1.5\ng: ~\nh: 0x1f\ni: '42'\nj: hello\nk: !!str true\nl: 010\n",
      "x.yaml");
  const auto& o = docs.at(0).value.as_object();
  EXPECT_EQ(o.at("a"), json::value(true));
  EXPECT_EQ(o.at("b"), json::value("yes"));
  EXPECT_EQ(o.at("c"), json::value(true));
  EXPECT_EQ(o.at("d"), json::value(false));
  EXPECT_EQ(o.at("e"), json::value(123));
  EXPECT_EQ(o.at("f"), json::value(1.5));
  EXPECT_TRUE(o.at("g").is_null());
  EXPECT_EQ(o.at("h"), json::value(31));
  EXPECT_EQ(o.at("i"), json::value("42"));
  EXPECT_EQ(o.at("j"), json::value("hello"));
  EXPECT_EQ(o.at("k"), json::value("true"));
  EXPECT_EQ(o.at("l"), json::value(8));  // YAML 1.1 octal
}

// Numbers outside int64 and float64, as go-yaml resolves them: an integer
// above int64 is a uint64 (ParseUint), beyond that a float; a float beyond
// float64's range fails ParseFloat and stays a string; an underflow is 0.
TEST(YamlGoRules, Yaml11NumbersOutOfRange) {
  auto docs = core::read_documents(
      "a: 18446744073709551615\nb: 99999999999999999999999\nc: 1e400\nd: 1e-400\ne: -1e400\nf: -9223372036854775809\n",
      "x.yaml");
  const auto& o = docs.at(0).value.as_object();
  EXPECT_EQ(o.at("a"), json::value(static_cast<uint64_t>(18446744073709551615ULL)));
  EXPECT_EQ(o.at("b"), json::value(1e23));
  EXPECT_EQ(o.at("c"), json::value("1e400"));
  EXPECT_EQ(o.at("d"), json::value(0.0));
  EXPECT_EQ(o.at("e"), json::value("-1e400"));
  EXPECT_EQ(o.at("f"), json::value(-9223372036854775809.0));
}

// A JSON file with a number float64 cannot hold is refused at reading, as
// kubectl v1.37.2 refuses to decode it (measured: `kubectl create -f
// ds.json --validate=false` says `error: unable to decode "ds.json": json:
// cannot unmarshal number 1e400 into Go value of type float64`; Boost.JSON
// made it an infinity, which decoding then called a type error). The
// literal as written, its line, whatever the kind and field.
TEST(YamlGoRules, JsonNumberBeyondFloat64IsRefusedAtReading) {
  for (const char* lit : {"1e400", "-1e400", "1.5E+309"}) {
    SCOPED_TRACE(lit);
    const std::string text = std::string("{\"apiVersion\": \"apps/v1\", \"kind\": \"DaemonSet\",\n") +
                             "\"spec\": {\"revisionHistoryLimit\": " + lit + "}}\n";
    try {
      core::read_documents(text, "ds.json");
      ADD_FAILURE() << "read";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.what(),
                "ds.json:2: json: cannot unmarshal number " + std::string(lit) + " into Go value of type float64");
    }
  }
  // An underflow is 0 (strconv.ParseFloat: no error); 1e308 fits.
  auto docs = core::read_documents(R"({"a": 1e-400, "b": 1e308, "c": "1e400"})", "x.json");
  EXPECT_EQ(docs.at(0).value.at("a"), json::value(0.0));
  EXPECT_EQ(docs.at(0).value.at("c"), json::value("1e400"));
}

// Where the first such number is: its text and field path, strings and keys
// that look like numbers skipped.
TEST(YamlGoRules, FirstOutOfRangeNumber) {
  auto n = core::first_out_of_range_number(
      R"({"x\"1e400": "1e400", "spec": {"a": [1, {"b": 2e308}], "c": 1e400}, "d": -1e999})");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->literal, "2e308");
  EXPECT_EQ(n->field, "spec.a[1].b");
  n = core::first_out_of_range_number(R"([{"op": "add", "path": "/a", "value": {"b": [0, -1e400]}}])");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->literal, "-1e400");
  EXPECT_EQ(n->field, "[0].value.b[1]");
  EXPECT_FALSE(core::first_out_of_range_number(R"({"a": 1e308, "b": -1e-400, "c": 123456789012345678901234567890})"));
}

// The number forms of go-yaml v2's resolve table are the regular
// expressions of resolve.go; gpuops scans them. Every plain scalar of up to
// four characters over the characters those expressions read resolves as
// the expressions say (int, hex, octal, float or a string).
TEST(YamlGoRules, Yaml11NumberFormsAreResolveGosExpressions) {
  const std::regex int_re(R"([-+]?(0|[1-9][0-9_]*))"), hex_re(R"([-+]?0x[0-9a-fA-F_]+)"), oct_re(R"([-+]?0[0-7_]+)"),
      float_re(R"([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?)");
  const std::string alphabet = "0178x.eE_-+a";  // E is also a hex digit
  std::vector<std::string> scalars;
  std::function<void(std::string)> grow = [&](std::string s) {
    if (!s.empty()) scalars.push_back(s);
    if (s.size() == 4) return;
    for (char c : alphabet) grow(s + c);
  };
  grow("");
  // Some are no plain scalar in YAML (a lone "-" starts a sequence): those
  // are refused or read as something else, and are not numbers either.
  auto resolve = [](const std::string& scalar) -> std::optional<json::value> {
    try {
      auto docs = core::read_documents("k: " + scalar + "\n", "x.yaml");
      if (docs.empty() || !docs[0].value.is_object()) return std::nullopt;
      return docs[0].value.as_object().at("k");
    } catch (const core::InputError&) {
      return std::nullopt;
    }
  };
  size_t numbers = 0;
  for (const auto& sc : scalars) {
    auto v = resolve(sc);
    if (!v) continue;
    bool number_form = std::regex_match(sc, int_re) || std::regex_match(sc, hex_re) || std::regex_match(sc, oct_re) ||
                       std::regex_match(sc, float_re);
    // A scalar of a number form is a number, or stays a string only when the
    // number does not parse (a float past float64, a hex of only '_').
    if (number_form) {
      ++numbers;
      if (!v->is_number()) {
        EXPECT_EQ(*v, json::value(sc));
      }
    } else {
      EXPECT_FALSE(v->is_number()) << sc << " -> " << json::serialize(*v);
    }
  }
  EXPECT_GT(numbers, 1000u);
}

// Found by a hostile-input run: a plain scalar of some 26,000 digits or more
// overflowed std::regex's recursion (SIGSEGV) in every YAML reader. It is a
// number past float64, so a string, as go-yaml keeps it.
TEST(YamlGoRules, AVeryLongPlainNumberIsReadNotACrash) {
  for (const std::string& scalar :
       {std::string(30000, '1'), "0x" + std::string(30000, 'f'), "." + std::string(30000, '1'),
        std::string(30000, '1') + "abc", std::string(200000, '7')}) {
    auto docs = core::read_documents("k: " + scalar + "\n", "x.yaml");
    ASSERT_EQ(docs.size(), 1u);
    const json::value& v = docs[0].value.as_object().at("k");
    if (scalar[0] == '.') {
      EXPECT_TRUE(v.is_double()) << scalar.substr(0, 10);  // 0.111...: a float
    } else {
      EXPECT_EQ(v, json::value(scalar)) << scalar.substr(0, 10);
    }
  }
}

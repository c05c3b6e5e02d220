// The (expr) language of assert/error (core/scenario/scenario_expr.h) and
// its use in partial matches (core/scenario/scenario_assert.h).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <stdexcept>
#include <string>

#include "core/scenario/scenario_assert.h"
#include "core/scenario/scenario_expr.h"

using namespace gpuops;
namespace json = boost::json;

namespace {

json::value eval(const std::string& text, const json::value& at) { return core::evaluate_expression(text, &at); }

std::string syntax_error(const std::string& text) {
  try {
    core::check_expression(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(none)";
}

std::string eval_error(const std::string& text, const json::value& at) {
  try {
    core::evaluate_expression(text, &at);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(none)";
}

const json::value kNode = json::parse(R"({"metadata": {"name": "gpu-a",
  "labels": {"nvidia.com/gpu.present": "true", "zone": "b"}},
  "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}, {"key": "x", "effect": "NoExecute"}]},
  "status": {"capacity": {"pods": 110}, "ratio": 0.5}})");

}  // namespace

TEST(ScenarioExpr, PathsLiteralsAndLength) {
  EXPECT_EQ(eval("(metadata.name)", kNode), json::value("gpu-a"));
  EXPECT_EQ(eval("(@.metadata.name)", kNode), json::value("gpu-a"));
  EXPECT_EQ(eval("(metadata.labels['nvidia.com/gpu.present'])", kNode), json::value("true"));
  EXPECT_EQ(eval("(spec.taints[1].effect)", kNode), json::value("NoExecute"));
  EXPECT_EQ(eval("(spec.taints[2])", kNode), json::value(nullptr));  // out of range: null
  EXPECT_EQ(eval("(spec.missing.deeper)", kNode), json::value(nullptr));
  EXPECT_EQ(eval("(length(spec.taints))", kNode), json::value(2));
  EXPECT_EQ(eval("(length(metadata.labels))", kNode), json::value(2));
  EXPECT_EQ(eval("(length(metadata.name))", kNode), json::value(5));
  EXPECT_EQ(eval("(length(@))", json::value("abc")), json::value(3));
  EXPECT_EQ(eval("( 'it\\'s' )", kNode), json::value("it's"));
  EXPECT_EQ(eval("(-2.5)", kNode), json::value(-2.5));
  EXPECT_EQ(eval("(null)", kNode), json::value(nullptr));
}

TEST(ScenarioExpr, Comparisons) {
  EXPECT_EQ(eval("(status.capacity.pods >= 110)", kNode), json::value(true));
  EXPECT_EQ(eval("(status.capacity.pods > 110)", kNode), json::value(false));
  EXPECT_EQ(eval("(status.capacity.pods == 110.0)", kNode), json::value(true));  // numbers by value
  EXPECT_EQ(eval("(status.ratio < 1)", kNode), json::value(true));
  EXPECT_EQ(eval("(status.ratio <= 0.5)", kNode), json::value(true));
  EXPECT_EQ(eval("(metadata.name != 'gpu-b')", kNode), json::value(true));
  EXPECT_EQ(eval("(metadata.labels.zone < 'c')", kNode), json::value(true));  // strings byte-wise
  EXPECT_EQ(eval("(length(spec.taints) == length(metadata.labels))", kNode), json::value(true));
  EXPECT_EQ(eval("(spec.none == null)", kNode), json::value(true));
  EXPECT_EQ(eval("('110' == status.capacity.pods)", kNode), json::value(false));  // a string is not a number
}

TEST(ScenarioExpr, Errors) {
  EXPECT_EQ(syntax_error("(@ >= )"), "at character 7: expected a value, a field name, @ or length(...)");
  EXPECT_EQ(syntax_error("(a = 1)"), "at character 4: expected )");
  EXPECT_EQ(syntax_error("(a.)"), "at character 4: expected a field name");
  EXPECT_EQ(syntax_error("(a['x)"), "at character 7: expected ' to end the string");
  EXPECT_EQ(syntax_error("(a[-1])"), "at character 6: expected an index (0, 1, ...) or a 'key'");
  EXPECT_EQ(syntax_error("(a) b"), "at character 5: expected the end of the expression");
  EXPECT_EQ(eval_error("(length(spec.none))", kNode), "length of a null");
  EXPECT_EQ(eval_error("(metadata.name > 1)", kNode), "cannot order a string and a number with >");
  EXPECT_TRUE(core::is_expression("(x)"));
  EXPECT_FALSE(core::is_expression("(x"));
  EXPECT_FALSE(core::is_expression("x)"));
}

// In a partial match: a key's result matches its value; a value must give
// true; the first difference names the expression.
TEST(ScenarioExpr, InPartialMatches) {
  auto diff = [](const char* expected) { return core::partial_difference(json::parse(expected), kNode); };
  EXPECT_EQ(diff(R"j({"spec": {"(length(taints))": 2}})j"), std::nullopt);
  EXPECT_EQ(diff(R"j({"spec": {"(length(taints))": 1}})j"), "spec.(length(taints)): expected 1, got 2");
  EXPECT_EQ(diff(R"j({"status": {"capacity": {"pods": "(@ > 100)"}}})j"), std::nullopt);
  EXPECT_EQ(diff(R"j({"status": {"capacity": {"pods": "(@ > 200)"}}})j"),
            "status.capacity.pods: expected (@ > 200) to be true, got false (@ is 110)");
  EXPECT_EQ(diff(R"j({"status": {"missing": "(@ == null)"}})j"), std::nullopt);
  EXPECT_EQ(diff(R"j({"status": {"missing": "(@ != null)"}})j"),
            "status.missing: expected (@ != null) to be true, got false (@ is absent)");
  EXPECT_EQ(diff(R"j({"spec": {"(length(nothing))": 0}})j"), "spec.(length(nothing)): length of a null");
  EXPECT_EQ(diff(R"j({"spec": {"taints": [{"effect": "(@ != 'NoExecute')"}, {"effect": "(@ == 'NoExecute')"}]}})j"),
            std::nullopt);
}

// core/kube/selector.h: label and field selectors (apimachinery pkg/labels, pkg/fields).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "../../common/http_status.h"
#include "core/base/errors.h"
#include "core/kube/selector.h"

namespace gpuops::core {
namespace {

namespace json = boost::json;
using testing::J;
using testing::status_of;

TEST(LabelQuery, ParsesAndMatchesAsLabelsParse) {
  LabelQuery q = LabelQuery::parse("app=x, tier!=db,env in (a, b),!gone,has");
  EXPECT_TRUE(q.matches({{"app", "x"}, {"env", "a"}, {"has", ""}}));
  EXPECT_FALSE(q.matches({{"app", "x"}, {"env", "a"}, {"has", ""}, {"tier", "db"}}));
  EXPECT_TRUE(q.matches({{"app", "x"}, {"env", "b"}, {"has", "1"}, {"tier", "web"}}));
  EXPECT_FALSE(q.matches({{"app", "x"}, {"has", ""}}));  // env missing
  EXPECT_FALSE(q.matches({{"app", "x"}, {"env", "a"}, {"has", ""}, {"gone", "1"}}));
  EXPECT_TRUE(LabelQuery::parse("").matches({}));
  EXPECT_TRUE(LabelQuery::parse("env notin (a)").matches({}));  // notin matches a missing key
  EXPECT_TRUE(LabelQuery::parse("n>3").matches({{"n", "4"}}));
  EXPECT_FALSE(LabelQuery::parse("n>3").matches({{"n", "3"}}));
  EXPECT_EQ(status_of([] { LabelQuery::parse("env in a"); }), 400);
  EXPECT_EQ(status_of([] { LabelQuery::parse("a=b=c"); }), 400);
}

// A list tests metadata.name and metadata.namespace terms from its keys
// (simulator list pages); the answer must be matches()'s on the object.
TEST(FieldQuery, NameAndNamespaceTermsAreDecidedFromTheNameAsMatchesDecides) {
  const auto pod = J(R"({"metadata":{"name":"p","namespace":"gpu-operator"}})").as_object();
  const auto node = J(R"({"metadata":{"name":"n"}})").as_object();
  for (const char* text : {"metadata.namespace!=gpu-operator", "metadata.namespace=gpu-operator",
                           "metadata.namespace==", "metadata.namespace!=", "metadata.name=p",
                           "metadata.name!=p,metadata.namespace=gpu-operator", "metadata.name=n,metadata.namespace="}) {
    FieldQuery q = FieldQuery::parse(text);
    EXPECT_EQ(q.matches_name("gpu-operator", "p"), q.matches(pod)) << text;
    EXPECT_EQ(q.matches_name("", "n"), q.matches(node)) << text;
  }
  EXPECT_EQ(FieldQuery::parse("metadata.namespace!=gpu-operator").matches_name("gpu-operator", "p"), false);
  EXPECT_EQ(FieldQuery::parse("metadata.namespace!=gpu-operator").matches_name("default", "w"), true);
  // Any other field needs the object.
  EXPECT_EQ(FieldQuery::parse("metadata.name=p,spec.nodeName=a").matches_name("gpu-operator", "p"), std::nullopt);
}

TEST(FieldQuery, ParsesMatchesAndRefusesUnknownFields) {
  FieldQuery q = FieldQuery::parse("spec.nodeName=lab-node-0,status.phase!=Failed");
  ASSERT_EQ(q.terms().size(), 2u);
  EXPECT_TRUE(q.matches(J(R"({"spec":{"nodeName":"lab-node-0"},"status":{"phase":"Running"}})").as_object()));
  EXPECT_FALSE(q.matches(J(R"({"spec":{"nodeName":"lab-node-0"},"status":{"phase":"Failed"}})").as_object()));
  EXPECT_FALSE(q.matches(J(R"({"spec":{},"status":{"phase":"Pending"}})").as_object()));
  q.check_supported("Pod");
  // Node spec.unschedulable defaults to "false" when absent.
  EXPECT_TRUE(FieldQuery::parse("spec.unschedulable=false").matches(J(R"({"spec":{}})").as_object()));
  try {
    q.check_supported("DaemonSet");
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.http_status, 400);
    EXPECT_EQ(e.message(), "field label not supported: spec.nodeName");
  }
  // \, escapes a comma inside a value.
  FieldQuery esc = FieldQuery::parse("metadata.name=a\\,b");
  ASSERT_EQ(esc.terms().size(), 1u);
  EXPECT_EQ(esc.terms()[0].value, "a,b");
}

}  // namespace
}  // namespace gpuops::core

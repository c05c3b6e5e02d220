// core/plan/plan_objects.h: the differences of DaemonSets and ClusterPolicies
// a plan reports. A DaemonSet read back from the API server carries the
// defaults of pkg/apis/core/v1/defaults.go; one rendered by the simulated
// operator does not: a default on one side only is no difference.
#include "core/plan/plan_objects.h"

#include <gtest/gtest.h>

namespace gpuops::core {
namespace {

boost::json::value j(const char* text) { return boost::json::parse(text); }

TEST(PlanObjects, DefaultsOnOneSideAreNoDifference) {
  // SetDefaults_Container and SetDefaults_PodSpec.
  auto read = j(R"({"spec":{"containers":[{"name":"c","image":"i","terminationMessagePath":"/dev/termination-log",
                   "terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"dnsPolicy":"ClusterFirst",
                   "restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},
                   "terminationGracePeriodSeconds":30},"metadata":{"creationTimestamp":null}})");
  auto rendered = j(R"({"spec":{"containers":[{"name":"c","image":"i"}]},"metadata":{}})");
  EXPECT_TRUE(json_changes(read, rendered).empty());
  EXPECT_TRUE(json_differences(rendered, read, "spec.template").empty());
  // Not the default: a difference, with its path.
  auto never = j(R"({"spec":{"containers":[{"name":"c","image":"i","imagePullPolicy":"Never"}]}})");
  EXPECT_EQ(json_differences(rendered, never, "spec.template"),
            std::vector<std::string>{"spec.template.spec.containers[0].imagePullPolicy: (absent) -> \"Never\""});
  auto grace = j(R"({"spec":{"containers":[{"name":"c","image":"i"}],"terminationGracePeriodSeconds":60}})");
  EXPECT_EQ(json_differences(rendered, grace, "t"),
            std::vector<std::string>{"t.spec.terminationGracePeriodSeconds: (absent) -> 60"});
}

TEST(PlanObjects, PathsValuesAndTheCap) {
  auto a = j(R"({"env":[{"name":"A","value":"1"}],"n":30,"labels":{"app.kubernetes.io/name":"x"}})");
  auto b = j(R"({"env":[{"name":"A","value":"2"},{"name":"B","value":"3"}],"n":30.0,"labels":{}})");
  EXPECT_EQ(json_differences(a, b, "s"),
            (std::vector<std::string>{"s.env[0].value: \"1\" -> \"2\"",
                                      "s.env[1]: (absent) -> {\"name\":\"B\",\"value\":\"3\"}",
                                      "s.labels.app.kubernetes.io/name: \"x\" -> (absent)"}));
  EXPECT_EQ(json_differences(a, b, "s", 1), (std::vector<std::string>{"s.env[0].value: \"1\" -> \"2\"", "... 2 more"}));
  auto changes = json_changes(a, b);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(json_at(a, changes[0].path), changes[0].before);
  EXPECT_EQ(json_at(a, changes[1].path), nullptr);
  // A long value is cut.
  std::string big(200, 'x');
  auto c = boost::json::value(boost::json::object{{"v", big}});
  auto lines = json_differences(boost::json::object{}, c, "s");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "s.v: (absent) -> \"" + std::string(76, 'x') + "...");
}

DaemonSet ds(const char* name, const char* uid, const char* strategy, const char* image) {
  DaemonSet d;
  d.metadata.name = name;
  d.metadata.uid = uid;
  d.update_strategy = strategy;
  d.raw = boost::json::object{
      {"spec",
       boost::json::object{
           {"template", boost::json::object{
                            {"spec", boost::json::object{{"containers", boost::json::array{boost::json::object{
                                                                            {"name", "c"}, {"image", image}}}}}}}}}}};
  return d;
}

TEST(PlanObjects, DaemonSetsCreatedDeletedChanged) {
  Catalog catalog;
  ClusterState before, after;
  before.daemonsets = {ds("a", "u1", "RollingUpdate", "i:1"), ds("b", "u2", "OnDelete", "d:1"),
                       ds("gone", "u3", "RollingUpdate", "x"), ds("same", "u4", "RollingUpdate", "s")};
  after.daemonsets = {ds("a", "u1", "RollingUpdate", "i:2"), ds("b", "u2", "OnDelete", "d:2"),
                      ds("new", "u5", "RollingUpdate", "y"), ds("same", "u4", "RollingUpdate", "s")};
  after.daemonsets[0].max_unavailable = IntOrPercent{10, true};
  auto changes = daemonset_changes(before, after, catalog);
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].name, "a");
  EXPECT_EQ(changes[0].kind, DaemonSetChange::Kind::kChanged);
  EXPECT_EQ(changes[0].fields,
            (std::vector<std::string>{"spec.template.spec.containers[0].image: \"i:1\" -> \"i:2\"",
                                      "spec.updateStrategy: RollingUpdate (maxUnavailable 1, maxSurge 0) -> "
                                      "RollingUpdate (maxUnavailable 10%, maxSurge 0)"}));
  EXPECT_EQ(changes[0].rollout,
            "RollingUpdate: the pods are replaced node by node, at most 10% unavailable at once (maxSurge 0)");
  EXPECT_EQ(changes[1].name, "b");
  EXPECT_EQ(changes[1].rollout.rfind("OnDelete: the pods keep the old template until each is deleted", 0), 0u);
  EXPECT_EQ(changes[2].name, "gone");
  EXPECT_EQ(changes[2].kind, DaemonSetChange::Kind::kDeleted);
  EXPECT_EQ(changes[3].name, "new");
  EXPECT_EQ(changes[3].kind, DaemonSetChange::Kind::kCreated);
  // The same name with another uid: deleted, then created.
  after.daemonsets[3].metadata.uid = "u6";
  changes = daemonset_changes(before, after, catalog);
  ASSERT_EQ(changes.size(), 6u);
  EXPECT_EQ(changes[4].kind, DaemonSetChange::Kind::kDeleted);
  EXPECT_EQ(changes[5].kind, DaemonSetChange::Kind::kCreated);
}

TEST(PlanObjects, ClusterPolicyStatus) {
  ClusterState before, after;
  ClusterPolicy cp;
  cp.metadata.name = "cluster-policy";
  cp.state = "ready";
  cp.conditions = {{"Ready", "True", "Reconciled", "", std::nullopt}};
  before.cluster_policies = {cp};
  after.cluster_policies = {cp};
  EXPECT_TRUE(cluster_policy_changes(before, after).empty());
  after.cluster_policies[0].state = "notReady";
  after.cluster_policies[0].conditions = {{"Ready", "False", "Error", "", std::nullopt}};
  auto c = cluster_policy_changes(before, after);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].state_before, "ready");
  EXPECT_EQ(c[0].state_after, "notReady");
  EXPECT_EQ(c[0].ready_before, "True (Reconciled)");
  EXPECT_EQ(c[0].ready_after, "False (Error)");
}

}  // namespace
}  // namespace gpuops::core

// Placement as NodeShouldRunDaemonPod (pkg/controller/daemon) decides it.
#include <gtest/gtest.h>

#include "../../common/builders.h"
#include "core/kube/placement.h"

using namespace gpuops;
using namespace gpuops::testing;
using core::Requirement;

namespace {

core::Requirement req(const std::string& key, const std::string& op, std::vector<std::string> values = {}) {
  Requirement r;
  r.key = key;
  r.op = core::parse_selector_operator(op);
  r.values = std::move(values);
  if (r.op == core::SelectorOperator::kUnknown) r.unknown_op = op;
  return r;
}

core::DaemonSet with_affinity(std::vector<core::NodeSelectorTerm> terms) {
  core::DaemonSet ds = daemonset("ds", "");
  ds.template_.spec.required_node_affinity = std::move(terms);
  return ds;
}

}  // namespace

// labels.SelectorFromSet: every key present with exactly the same string.
TEST(Placement, NodeSelectorNeedsExactStringValue) {
  core::DaemonSet ds = daemonset("nvidia-driver-daemonset", "nvidia.com/gpu.deploy.driver");
  auto yes = core::should_run(ds, node("a", {{"nvidia.com/gpu.deploy.driver", "true"}}));
  EXPECT_TRUE(yes.should_run);
  EXPECT_TRUE(yes.should_continue_running);
  EXPECT_TRUE(yes.reasons.empty());

  auto opted_out = core::should_run(ds, node("b", {{"nvidia.com/gpu.deploy.driver", "false"}}));
  EXPECT_FALSE(opted_out.should_run);
  EXPECT_FALSE(opted_out.should_continue_running);
  EXPECT_TRUE(opted_out.selector_mismatch);
  ASSERT_EQ(opted_out.reasons.size(), 1u);
  EXPECT_EQ(opted_out.reasons[0], "nodeSelector nvidia.com/gpu.deploy.driver=true: node has \"false\"");

  auto absent = core::should_run(ds, node("c"));
  EXPECT_FALSE(absent.should_run);
  EXPECT_FALSE(absent.should_continue_running);
  EXPECT_EQ(absent.reasons.at(0),
            "nodeSelector nvidia.com/gpu.deploy.driver=true: node has no label nvidia.com/gpu.deploy.driver");

  // "" is not "true" (cases/empty-label-values); "True" is not "true".
  EXPECT_FALSE(core::should_run(ds, node("d", {{"nvidia.com/gpu.deploy.driver", ""}})).should_run);
  EXPECT_FALSE(core::should_run(ds, node("e", {{"nvidia.com/gpu.deploy.driver", "True"}})).should_run);
}

TEST(Placement, EmptyNodeSelectorMatchesEveryNode) {
  core::DaemonSet ds = daemonset("ds", "");
  EXPECT_TRUE(core::should_run(ds, node("any")).should_run);
}

TEST(Placement, TemplateNodeNameOtherThanNode) {
  core::DaemonSet ds = daemonset("ds", "");
  ds.template_.spec.node_name = "other";
  auto p = core::should_run(ds, node("a"));
  EXPECT_FALSE(p.should_run);
  EXPECT_FALSE(p.should_continue_running);
  EXPECT_TRUE(core::should_run(ds, node("other")).should_run);
}

// labels.Requirement.Matches, apimachinery pkg/labels/selector.go.
TEST(Placement, AffinityOperators) {
  core::Labels l = {{"zone", "a"}, {"gpus", "8"}, {"empty", ""}, {"word", "x8"}};
  EXPECT_TRUE(core::requirement_matches(req("zone", "In", {"a", "b"}), l));
  EXPECT_FALSE(core::requirement_matches(req("zone", "In", {"b"}), l));
  EXPECT_FALSE(core::requirement_matches(req("missing", "In", {"a"}), l));
  EXPECT_FALSE(core::requirement_matches(req("zone", "NotIn", {"a"}), l));
  EXPECT_TRUE(core::requirement_matches(req("zone", "NotIn", {"b"}), l));
  EXPECT_TRUE(core::requirement_matches(req("missing", "NotIn", {"a"}), l));  // absent key matches NotIn
  EXPECT_TRUE(core::requirement_matches(req("empty", "Exists"), l));
  EXPECT_FALSE(core::requirement_matches(req("missing", "Exists"), l));
  EXPECT_TRUE(core::requirement_matches(req("missing", "DoesNotExist"), l));
  EXPECT_FALSE(core::requirement_matches(req("zone", "DoesNotExist"), l));
  EXPECT_TRUE(core::requirement_matches(req("gpus", "Gt", {"7"}), l));
  EXPECT_FALSE(core::requirement_matches(req("gpus", "Gt", {"8"}), l));
  EXPECT_TRUE(core::requirement_matches(req("gpus", "Lt", {"9"}), l));
  EXPECT_FALSE(core::requirement_matches(req("gpus", "Lt", {"8"}), l));
  EXPECT_FALSE(core::requirement_matches(req("word", "Gt", {"1"}), l));     // label not an integer
  EXPECT_FALSE(core::requirement_matches(req("missing", "Lt", {"9"}), l));  // absent key
}

TEST(Placement, InvalidRequirementsMatchNothing) {
  core::Labels l = {{"zone", "a"}};
  EXPECT_FALSE(core::requirement_matches(req("zone", "In", {}), l));          // In needs values
  EXPECT_FALSE(core::requirement_matches(req("missing", "NotIn", {}), l));    // so does NotIn
  EXPECT_FALSE(core::requirement_matches(req("zone", "Exists", {"a"}), l));   // Exists takes none
  EXPECT_FALSE(core::requirement_matches(req("zone", "Gt", {"1", "2"}), l));  // exactly one value
  EXPECT_FALSE(core::requirement_matches(req("zone", "Gt", {"x"}), l));       // must be an integer
  EXPECT_FALSE(core::requirement_matches(req("zone", "Equals", {"a"}), l));   // unknown operator
}

// nodeaffinity.LazyErrorNodeSelector.Match: terms ORed, requirements ANDed,
// empty terms match nothing, matchFields only metadata.name In/NotIn.
TEST(Placement, RequiredAffinityTerms) {
  core::NodeSelectorTerm gpu{{req("nvidia.com/gpu.present", "In", {"true"})}, {}};
  core::NodeSelectorTerm named{{}, {req("metadata.name", "In", {"special"})}};
  core::DaemonSet ds = with_affinity({gpu, named});
  EXPECT_TRUE(core::should_run(ds, node("g", {{"nvidia.com/gpu.present", "true"}})).should_run);
  EXPECT_TRUE(core::should_run(ds, node("special")).should_run);
  auto no = core::should_run(ds, node("plain"));
  EXPECT_FALSE(no.should_run);
  EXPECT_FALSE(no.should_continue_running);
  EXPECT_EQ(no.reasons.at(0),
            "required node affinity not matched: (nvidia.com/gpu.present In [true]) OR (metadata.name In [special])");

  core::NodeSelectorTerm both{{req("nvidia.com/gpu.present", "In", {"true"})}, {req("metadata.name", "NotIn", {"g"})}};
  core::DaemonSet ds2 = with_affinity({both});
  EXPECT_FALSE(core::should_run(ds2, node("g", {{"nvidia.com/gpu.present", "true"}})).should_run);
  EXPECT_TRUE(core::should_run(ds2, node("h", {{"nvidia.com/gpu.present", "true"}})).should_run);

  EXPECT_FALSE(core::should_run(with_affinity({core::NodeSelectorTerm{}}), node("x")).should_run);
  EXPECT_FALSE(core::should_run(with_affinity({}), node("x")).should_run);
  core::NodeSelectorTerm bad_field{{}, {req("metadata.labels", "In", {"x"})}};
  EXPECT_FALSE(core::should_run(with_affinity({bad_field}), node("x")).should_run);
  core::NodeSelectorTerm two_values{{}, {req("metadata.name", "In", {"x", "y"})}};
  EXPECT_FALSE(core::should_run(with_affinity({two_values}), node("x")).should_run);
}

TEST(Placement, NodeSelectorAndAffinityAreAnded) {
  core::DaemonSet ds = daemonset("ds", "nvidia.com/gpu.deploy.driver");
  ds.template_.spec.required_node_affinity =
      std::vector<core::NodeSelectorTerm>{{{req("kubernetes.io/arch", "In", {"amd64"})}, {}}};
  EXPECT_TRUE(
      core::should_run(ds, node("a", {{"nvidia.com/gpu.deploy.driver", "true"}, {"kubernetes.io/arch", "amd64"}}))
          .should_run);
  EXPECT_FALSE(
      core::should_run(ds, node("b", {{"nvidia.com/gpu.deploy.driver", "true"}, {"kubernetes.io/arch", "arm64"}}))
          .should_run);
  EXPECT_FALSE(core::should_run(ds, node("c", {{"kubernetes.io/arch", "amd64"}})).should_run);
}

// k8s.io/api core/v1 Toleration.ToleratesTaint.
TEST(Placement, ToleratesTaint) {
  auto t = taint("dedicated", "ml-team", "NoSchedule");
  EXPECT_TRUE(core::tolerates(toleration("dedicated", "Equal", "ml-team", "NoSchedule"), t));
  EXPECT_TRUE(core::tolerates(toleration("dedicated", "", "ml-team", ""), t));  // "" operator is Equal; "" effect all
  EXPECT_FALSE(core::tolerates(toleration("dedicated", "Equal", "other", "NoSchedule"), t));
  EXPECT_FALSE(core::tolerates(toleration("dedicated", "Equal", "ml-team", "NoExecute"), t));
  EXPECT_TRUE(core::tolerates(toleration("dedicated", "Exists", "", ""), t));
  EXPECT_TRUE(core::tolerates(toleration("", "Exists", "", ""), t));  // empty key + Exists tolerates everything
  EXPECT_FALSE(core::tolerates(toleration("other", "Exists", "", ""), t));
  EXPECT_FALSE(core::tolerates(toleration("dedicated", "Lt", "ml-team", ""), t));  // unknown operator
}

// The operands tolerate only nvidia.com/gpu (cases/untolerated-taint): a
// NoSchedule team taint keeps new pods off but lets a running one stay.
TEST(Placement, UntoleratedNoScheduleTaint) {
  core::DaemonSet ds = daemonset("ds", "");
  ds.template_.spec.tolerations.push_back(toleration("nvidia.com/gpu", "Exists", "", "NoSchedule"));
  auto p = core::should_run(ds, node("b", {}, {taint("dedicated", "ml-team", "NoSchedule")}));
  EXPECT_FALSE(p.should_run);
  EXPECT_TRUE(p.should_continue_running);
  EXPECT_FALSE(p.selector_mismatch);
  ASSERT_TRUE(p.untolerated_taint.has_value());
  EXPECT_EQ(p.untolerated_taint->key, "dedicated");
  EXPECT_EQ(p.reasons.at(0), "untolerated taint dedicated=ml-team:NoSchedule");
  EXPECT_TRUE(core::should_run(ds, node("g", {}, {taint("nvidia.com/gpu", "", "NoSchedule")})).should_run);
}

TEST(Placement, UntoleratedNoExecuteTaintEvicts) {
  core::DaemonSet ds = daemonset("ds", "");
  auto p = core::should_run(ds, node("b", {}, {taint("maintenance", "", "NoExecute")}));
  EXPECT_FALSE(p.should_run);
  EXPECT_FALSE(p.should_continue_running);
  EXPECT_EQ(p.reasons.at(0), "untolerated taint maintenance:NoExecute");
}

TEST(Placement, PreferNoScheduleIsIgnored) {
  core::DaemonSet ds = daemonset("ds", "");
  EXPECT_TRUE(core::should_run(ds, node("b", {}, {taint("soft", "", "PreferNoSchedule")})).should_run);
}

// AddOrUpdateDaemonPodTolerations: the controller's own tolerations.
TEST(Placement, DaemonTolerationsCoverNodeConditions) {
  core::DaemonSet ds = daemonset("ds", "");
  // Cordoned: unschedulable:NoSchedule is tolerated, DaemonSet pods still go there.
  EXPECT_TRUE(
      core::should_run(ds, node("c", {}, {taint("node.kubernetes.io/unschedulable", "", "NoSchedule")})).should_run);
  EXPECT_TRUE(
      core::should_run(ds, node("m", {}, {taint("node.kubernetes.io/memory-pressure", "", "NoSchedule")})).should_run);
  // NotReady: not-ready is tolerated only for NoExecute; the lifecycle
  // controller's NoSchedule taint takes the node out of desired but lets the
  // pod stay (issue #132459).
  EXPECT_TRUE(core::should_run(ds, node("n", {}, {taint("node.kubernetes.io/not-ready", "", "NoExecute")})).should_run);
  auto nr = core::should_run(ds, node("n", {},
                                      {taint("node.kubernetes.io/not-ready", "", "NoSchedule"),
                                       taint("node.kubernetes.io/not-ready", "", "NoExecute")}));
  EXPECT_FALSE(nr.should_run);
  EXPECT_TRUE(nr.should_continue_running);
  // network-unavailable only for hostNetwork pods.
  auto net = taint("node.kubernetes.io/network-unavailable", "", "NoSchedule");
  EXPECT_FALSE(core::should_run(ds, node("x", {}, {net})).should_run);
  ds.template_.spec.host_network = true;
  EXPECT_TRUE(core::should_run(ds, node("x", {}, {net})).should_run);
}

TEST(Placement, WithDaemonTolerationsReplacesSameToleration) {
  auto user = toleration("node.kubernetes.io/not-ready", "Exists", "", "NoExecute");
  user.toleration_seconds = 300;
  auto out = core::with_daemon_tolerations({user, toleration("nvidia.com/gpu", "Exists", "", "NoSchedule")}, false);
  ASSERT_EQ(out.size(), 7u);  // 2 user + 6 defaults - 1 replaced
  EXPECT_EQ(out[0].key, "node.kubernetes.io/not-ready");
  EXPECT_FALSE(out[0].toleration_seconds.has_value());
  EXPECT_EQ(out[1].key, "nvidia.com/gpu");
  EXPECT_EQ(core::daemon_tolerations(true).size(), 7u);
  EXPECT_EQ(core::daemon_tolerations(false).size(), 6u);
}

TEST(Placement, ResourcesNeverMatter) {
  core::DaemonSet ds = daemonset("ds", "");
  ds.template_.spec.containers[0].requests["memory"] = core::Quantity::parse("512Mi");
  core::Node small = node("small");
  small.allocatable["memory"] = core::Quantity::parse("256Mi");
  EXPECT_TRUE(core::should_run(ds, small).should_run);
}

TEST(Placement, LabelSelector) {
  core::LabelSelector s;
  EXPECT_TRUE(core::selector_matches(s, {}));
  s.match_labels = {{"app", "x"}};
  EXPECT_TRUE(core::selector_matches(s, {{"app", "x"}, {"other", "y"}}));
  EXPECT_FALSE(core::selector_matches(s, {{"app", "y"}}));
  s.match_expressions.push_back(req("tier", "NotIn", {"canary"}));
  EXPECT_TRUE(core::selector_matches(s, {{"app", "x"}}));
  EXPECT_FALSE(core::selector_matches(s, {{"app", "x"}, {"tier", "canary"}}));
}

// strconv.ParseInt, as Requirement.Matches parses Gt/Lt operands: an optional
// sign, decimal digits, int64 range; nothing else.
TEST(Placement, GtLtParseAsStrconvParseInt) {
  core::Labels l = {{"gpus", "8"}, {"neg", "-3"}};
  EXPECT_TRUE(core::requirement_matches(req("gpus", "Gt", {"+7"}), l));
  EXPECT_TRUE(core::requirement_matches(req("neg", "Lt", {"-2"}), l));
  EXPECT_FALSE(core::requirement_matches(req("gpus", "Gt", {"+-7"}), l));
  EXPECT_FALSE(core::requirement_matches(req("gpus", "Gt", {"+"}), l));
  EXPECT_FALSE(core::requirement_matches(req("gpus", "Gt", {" 7"}), l));
  EXPECT_FALSE(core::requirement_matches(req("gpus", "Gt", {"9223372036854775808"}), l));  // out of range
}

// labels.SelectorFromSet(nodeSelector).Matches, and the keys it fails on.
TEST(Placement, NodeSelectorMatchesAndMismatches) {
  core::Labels sel = {{"a", "true"}, {"b", "true"}, {"c", "x"}};
  core::Labels l = {{"a", "true"}, {"b", "false"}};
  EXPECT_FALSE(core::node_selector_matches(sel, l));
  EXPECT_EQ(core::node_selector_mismatches(sel, l), (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(core::node_selector_matches({}, l));
  EXPECT_TRUE(core::node_selector_mismatches({{"a", "true"}}, l).empty());
}

// labels.Set's Matches is a lookup by key, then the value compared: keys of
// the same length with the value asked for, values equal to the one asked
// for under other keys, and label sets on either side of the size where the
// lookup changes from a scan to a binary search (64) all answer the same.
TEST(Placement, NodeSelectorLookupIsByKeyWhateverTheSetSize) {
  for (int n : {0, 1, 63, 64, 65, 200}) {
    SCOPED_TRACE("labels: " + std::to_string(n));
    core::Labels l;
    for (int i = 0; i < n; ++i) l.emplace("nvidia.com/gpu.deploy.op-" + std::to_string(1000 + i), "true");
    const std::string same_length_key = "nvidia.com/gpu.deploy.op-9999";  // as long as every key above
    EXPECT_FALSE(core::node_selector_matches({{same_length_key, "true"}}, l));
    if (n == 0) continue;
    const std::string last = "nvidia.com/gpu.deploy.op-" + std::to_string(1000 + n - 1);
    EXPECT_TRUE(core::node_selector_matches({{last, "true"}}, l));
    EXPECT_FALSE(core::node_selector_matches({{last, "false"}}, l));
    EXPECT_FALSE(core::node_selector_matches({{last, "true "}}, l));
    EXPECT_FALSE(core::node_selector_matches({{last + "x", "true"}}, l));
    l[last] = "a-value-longer-than-fifteen-bytes";
    EXPECT_TRUE(core::node_selector_matches({{last, "a-value-longer-than-fifteen-bytes"}}, l));
    EXPECT_FALSE(core::node_selector_matches({{last, "a-value-longer-than-fifteen-bytez"}}, l));
    if (n >= 2) {
      EXPECT_EQ(core::node_selector_mismatches({{last, "true"}, {"nvidia.com/gpu.deploy.op-1000", "true"}}, l),
                std::vector<std::string>{last});
    }
  }
  EXPECT_TRUE(core::node_selector_matches({{"", ""}}, {{"", ""}}));
  EXPECT_FALSE(core::node_selector_matches({{"", "x"}}, {{"", ""}}));
}

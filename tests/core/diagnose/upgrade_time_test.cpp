// The clocks diagnose reads durations from: the upgrade controller's
// start-time annotations (k8s-operator-libs pkg/upgrade consts.go, parsed as
// strconv.ParseInt(v, 10, 64) in handleTimeout) and a dump's newest
// timestamp (core::newest_timestamp), and the evidence built from them.
#include <gtest/gtest.h>

#include "../../common/builders.h"
#include "core/cluster/snapshot.h"
#include "core/diagnose/diagnose.h"
#include "core/gpu_operator/gpu_node_rules.h"
#include "core/model/rfc3339.h"

namespace gpuops {
namespace {

using core::parse_time;

core::Node annotated(const std::string& value) {
  core::Node n = testing::node("gpu-1");
  n.metadata.annotations[core::kUpgradeValidationStartTimeAnnotation] = value;
  return n;
}

TEST(UpgradeStartTime, ParsesAsParseIntBase10) {
  // 1796025000 s after the Unix epoch is 2026-11-30T07:50:00Z.
  EXPECT_EQ(core::upgrade_start_time(annotated("1796025000"), core::kUpgradeValidationStartTimeAnnotation),
            parse_time("2026-11-30T07:50:00Z"));
  EXPECT_EQ(core::upgrade_start_time(annotated("+1796025000"), core::kUpgradeValidationStartTimeAnnotation),
            parse_time("2026-11-30T07:50:00Z"));
  EXPECT_EQ(core::upgrade_start_time(annotated("-60"), core::kUpgradeValidationStartTimeAnnotation),
            parse_time("1969-12-31T23:59:00Z"));
  // ParseInt's errors: empty, spaces, a fraction, two signs, hex, base-0
  // underscores, out of int64 range; and "null", which the controller writes
  // to remove the annotation.
  for (const char* bad : {"", " 1", "1 ", "1.5", "+-1", "--1", "0x10", "1_000", "99999999999999999999", "null"})
    EXPECT_EQ(core::upgrade_start_time(annotated(bad), core::kUpgradeValidationStartTimeAnnotation), std::nullopt)
        << bad;
  EXPECT_EQ(core::upgrade_start_time(testing::node("gpu-1"), core::kUpgradeValidationStartTimeAnnotation),
            std::nullopt);
  // ParseInt reads any int64; a time is kept only where RFC 3339 can write
  // it (years 1 to 9999: the evidence prints it), so that the durations
  // computed from it stay in the clock's range.
  EXPECT_EQ(core::upgrade_start_time(annotated("253402300799"), core::kUpgradeValidationStartTimeAnnotation),
            parse_time("9999-12-31T23:59:59Z"));
  EXPECT_EQ(core::upgrade_start_time(annotated("-62135596800"), core::kUpgradeValidationStartTimeAnnotation),
            parse_time("0001-01-01T00:00:00Z"));
  for (const char* far : {"253402300800", "-62135596801", "9223372036854775", "-9223372036854775",
                          "9223372036854775807", "-9223372036854775808"})
    EXPECT_EQ(core::upgrade_start_time(annotated(far), core::kUpgradeValidationStartTimeAnnotation), std::nullopt)
        << far;
}

TEST(NewestTimestamp, EveryTimeOfTheStateButDeletion) {
  core::ClusterState s;
  EXPECT_EQ(core::newest_timestamp(s), std::nullopt);
  s.nodes.push_back(testing::node("gpu-1"));
  s.nodes[0].metadata.creation_timestamp = parse_time("2026-11-30T07:00:00Z");
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:00:00Z"));
  s.nodes[0].taints.push_back(
      core::Taint{"node.kubernetes.io/not-ready", "", "NoExecute", parse_time("2026-11-30T07:01:00Z")});
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:01:00Z"));
  s.nodes[0].metadata.annotations[core::kUpgradeWaitForPodCompletionStartTimeAnnotation] = "1796025000";
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:50:00Z"));
  auto ds = testing::daemonset("nvidia-driver-daemonset", "nvidia.com/gpu.deploy.driver");
  core::Pod p = testing::pod(ds, "gpu-1");
  p.metadata.creation_timestamp = parse_time("2026-11-30T07:51:00Z");
  p.metadata.deletion_timestamp = parse_time("2026-11-30T09:00:00Z");  // now + grace: not a time it was seen
  s.pods.push_back(p);
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:51:00Z"));
  s.pods[0].status.start_time = parse_time("2026-11-30T07:52:00Z");
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:52:00Z"));
  s.pods[0].status.conditions.push_back(
      core::PodCondition{"Ready", "False", "", "", parse_time("2026-11-30T07:53:00Z")});
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:53:00Z"));
  core::ContainerStatus c;
  c.name = "k8s-driver-manager";
  c.state = "running";
  c.started_at = parse_time("2026-11-30T07:54:00Z");
  s.pods[0].status.init_container_statuses.push_back(c);
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:54:00Z"));
  core::ClusterPolicy cp;
  cp.conditions.push_back(core::Condition{"Ready", "True", "", "", parse_time("2026-11-30T07:55:00Z")});
  s.cluster_policies.push_back(cp);
  EXPECT_EQ(core::newest_timestamp(s), parse_time("2026-11-30T07:55:00Z"));
}

// Without observed_at (nothing tells when the state was read) the evidence
// gives the start only; with it, the HumanDuration between the two.
TEST(UpgradeTimeEvidence, DurationOnlyWithObservedAt) {
  core::ClusterState s;
  s.namespace_ = "gpu-operator";
  core::Node n = testing::node("gpu-1", {{"feature.node.kubernetes.io/pci-10de.present", "true"},
                                         {"nvidia.com/gpu-driver-upgrade-state", "validation-required"}});
  n.metadata.annotations[core::kUpgradeValidationStartTimeAnnotation] = "1796025000";
  s.nodes.push_back(n);
  core::Catalog catalog = core::load_catalog("gpu-operator");
  auto evidence = [&](const std::string& key) {
    for (const auto& f : core::diagnose(s, catalog, {}))
      if (f.name == "driver-upgrade-in-progress")
        for (const auto& [k, v] : f.evidence)
          if (k == key) return v;
    return std::string("(none)");
  };
  EXPECT_EQ(evidence("validating for"), "since 2026-11-30T07:50:00Z");
  EXPECT_EQ(evidence("validation timeout"), "(none)");
  // 4 min 30 s in: HumanDuration "4m30s"; 600 s - 270 s = 330 s left, "5m30s".
  s.observed_at = parse_time("2026-11-30T07:54:30Z");
  EXPECT_EQ(evidence("validating for"), "4m30s (since 2026-11-30T07:50:00Z)");
  EXPECT_EQ(evidence("validation timeout"), "10m, 5m30s left before the upgrade controller sets upgrade-failed");
  // Exactly 600 s: handleTimeout fails only when currentTime > start + timeout.
  s.observed_at = parse_time("2026-11-30T08:00:00Z");
  EXPECT_EQ(evidence("validation timeout"), "10m, 0s left before the upgrade controller sets upgrade-failed");
  s.observed_at = parse_time("2026-11-30T08:00:01Z");
  EXPECT_EQ(evidence("validation timeout").substr(0, 13), "10m, passed: ");
  // A start time no clock can hold gives no duration (it printed
  // "292471151y left" and, for the negative one, overflowed).
  for (const char* far : {"9223372036854775", "-9223372036854775"}) {
    s.nodes[0].metadata.annotations[core::kUpgradeValidationStartTimeAnnotation] = far;
    EXPECT_EQ(evidence("validating for"), "(none)") << far;
    EXPECT_EQ(evidence("validation timeout"), "(none)") << far;
  }
}

}  // namespace
}  // namespace gpuops

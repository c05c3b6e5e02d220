// deploy/fleet/: the PrometheusRule's spec is the plain rule file, the same
// groups and rules, field for field (rules.yml for a plain Prometheus,
// prometheusrule-fleet.yaml for the Prometheus Operator). promtool checks
// and tests them in scripts/e2e-exporter.sh --fleet.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

namespace {

const std::string kFleet = std::string(GPUOPS_SOURCE_DIR) + "/deploy/fleet/";

// `n` as one line: maps by sorted key, scalars quoted; style and comments
// left out.
std::string canonical(const YAML::Node& n) {
  std::string out;
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      std::map<std::string, std::string> fields;
      for (const auto& kv : n) fields[kv.first.as<std::string>()] = canonical(kv.second);
      out = "{";
      for (const auto& [k, v] : fields) out += "\"" + k + "\":" + v + ",";
      return out + "}";
    }
    case YAML::NodeType::Sequence:
      out = "[";
      for (const auto& e : n) out += canonical(e) + ",";
      return out + "]";
    case YAML::NodeType::Scalar: return "\"" + n.Scalar() + "\"";
    default: return "null";
  }
}

TEST(DeployFleet, ThePrometheusRuleHoldsTheRuleFile) {
  YAML::Node file = YAML::LoadFile(kFleet + "rules.yml");
  YAML::Node pr = YAML::LoadFile(kFleet + "prometheusrule-fleet.yaml");
  EXPECT_EQ(pr["kind"].as<std::string>(), "PrometheusRule");
  EXPECT_EQ(canonical(pr["spec"]), canonical(file));
  // Five alerts, each aggregating by cluster.
  ASSERT_EQ(file["groups"].size(), 1u);
  const YAML::Node rules = file["groups"][0]["rules"];
  ASSERT_EQ(rules.size(), 5u);
  for (const auto& r : rules)
    EXPECT_NE(r["expr"].as<std::string>().find("by (cluster)"), std::string::npos) << r["alert"].as<std::string>();
}

}  // namespace

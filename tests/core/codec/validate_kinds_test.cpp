// core/codec/validate_kinds.h: the kinds gpuops lint checks without modelling them.
// Each tests/data/lint/*.yaml case holds, on its first line, the message the
// API server gives for it (upstream's rule; scripts/e2e-exporter.sh step 1b
// checks every case against a real API server); here core::validate_kind or
// the DaemonSet decoder must end its error with that text.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/base/errors.h"
#include "core/base/input_file.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/validate_kinds.h"

using namespace gpuops;
namespace fs = std::filesystem;

namespace {

const fs::path kCases = fs::path(GPUOPS_SOURCE_DIR) / "tests/data/lint";

void check(const core::Document& doc) {
  const auto& kind = doc.value.as_object().at("kind").as_string();
  if (core::is_validated_kind(kind))
    core::validate_kind(doc);
  else
    core::decode_manifest(doc);
}

core::InputError error_of(const std::string& text, const std::string& file = "m.yaml") {
  try {
    for (const auto& d : core::read_documents(text, file)) check(d);
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return core::InputError("", 0, "", "");
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

TEST(ValidateKinds, EveryCaseGivesTheApiServersMessage) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kCases)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u);
  for (const auto& f : files) {
    std::string text = core::read_input_file(f.string());
    ASSERT_EQ(text.rfind("# api: ", 0), 0u) << f;
    std::string want = text.substr(7, text.find('\n') - 7);
    core::InputError e = error_of(text, f.string());
    EXPECT_TRUE(ends_with(e.message(), want)) << f.filename() << "\n  want: " << want << "\n  got:  " << e.message();
    // A refusal of the API server: the 400 of strict decoding, else the 422.
    EXPECT_EQ(e.http_status, want.rfind("strict decoding error", 0) == 0 ? 400 : 422) << f.filename();
    EXPECT_GT(e.line(), 1) << f.filename();
  }
}

TEST(ValidateKinds, TheManifestsOfDeployPass) {
  for (const char* f : {"rbac.yaml", "exporter.yaml", "servicemonitor.yaml", "prometheusrule.yaml"}) {
    auto docs = core::read_paths({(fs::path(GPUOPS_SOURCE_DIR) / "deploy" / f).string()});
    ASSERT_FALSE(docs.empty()) << f;
    for (const auto& d : docs) EXPECT_NO_THROW(check(d)) << f;
  }
}

// Least privilege, as the exporter reads (real/cluster_cache.cpp): nodes and
// the cluster-scoped ClusterPolicy and NVIDIADriver cluster-wide; pods and
// DaemonSets only in gpu-operator, the namespace it is started with. And
// what Pod Security "restricted" asks of the pod.
TEST(ValidateKinds, DeployGrantsWhatTheExporterReadsAndNoMore) {
  auto docs = core::read_paths({(fs::path(GPUOPS_SOURCE_DIR) / "deploy" / "rbac.yaml").string()});
  auto resources_of = [&](const std::string& kind) {
    std::vector<std::string> out;
    for (const auto& d : docs) {
      const auto& o = d.value.as_object();
      if (o.at("kind").as_string() != kind.c_str()) continue;
      if (kind == "Role") {
        EXPECT_EQ(o.at("metadata").as_object().at("namespace").as_string(), "gpu-operator");
      }
      for (const auto& rule : o.at("rules").as_array()) {
        EXPECT_EQ(boost::json::serialize(rule.as_object().at("verbs")), R"(["get","list","watch"])");
        for (const auto& r : rule.as_object().at("resources").as_array()) out.emplace_back(r.as_string());
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(resources_of("ClusterRole"), (std::vector<std::string>{"clusterpolicies", "nodes", "nvidiadrivers"}));
  EXPECT_EQ(resources_of("Role"), (std::vector<std::string>{"daemonsets", "pods"}));
  auto exporter = core::read_paths({(fs::path(GPUOPS_SOURCE_DIR) / "deploy" / "exporter.yaml").string()});
  const auto& pod = exporter.at(0).value.at_pointer("/spec/template/spec").as_object();
  EXPECT_EQ(pod.at("securityContext").at_pointer("/seccompProfile/type").as_string(), "RuntimeDefault");
  EXPECT_EQ(pod.at("securityContext").at("runAsNonRoot").as_bool(), true);
}

TEST(ValidateKinds, TheErrorNamesTheObjectFieldAndLine) {
  core::InputError e = error_of(R"(apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: reader
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: reader
subjects:
- kind: ServiceAccount
  name: exporter
)");
  EXPECT_EQ(
      e.message(),
      "ClusterRoleBinding.rbac.authorization.k8s.io \"reader\" is invalid: subjects[0].namespace: Required value");
  EXPECT_EQ(e.field(), "subjects[0].namespace");
  EXPECT_EQ(e.line(), 10);  // the subject: its namespace is missing
  EXPECT_EQ(e.file(), "m.yaml");
}

TEST(ValidateKinds, AnApiVersionNotServedIsTheNoMatch404) {
  core::InputError e = error_of("apiVersion: apps/v1beta1\nkind: Deployment\nmetadata:\n  name: x\n");
  EXPECT_EQ(e.http_status, 404);
  EXPECT_EQ(e.message(), "no matches for kind \"Deployment\" in version \"apps/v1beta1\"");
  EXPECT_EQ(e.line(), 1);
  e = error_of("apiVersion: monitoring.coreos.com/v1alpha1\nkind: ServiceMonitor\nmetadata:\n  name: x\n");
  EXPECT_EQ(e.http_status, 404);
}

TEST(ValidateKinds, AWrongJsonTypeOfABuiltInKindIsThe400) {
  core::InputError e = error_of(R"(apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules:
- verbs: get
)");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.message(),
            "ClusterRole in version \"v1\" cannot be handled as a ClusterRole: json: cannot unmarshal string into Go "
            "struct field PolicyRule.rules.verbs of type []string");
}

// The Duration pattern of the Prometheus Operator's CRDs:
// ^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$
TEST(ValidateKinds, DurationsFollowThePattern) {
  auto rule_for = [](const std::string& d) {
    return "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: r\nspec:\n  groups:\n  - "
           "name: g\n    rules:\n    - alert: A\n      expr: up\n      for: \"" +
           d + "\"\n";
  };
  for (const char* ok : {"", "0", "30s", "5m", "1h30m", "1y2w3d4h5m6s7ms", "500ms", "1m5ms", "90s"}) {
    EXPECT_NO_THROW(check(core::read_documents(rule_for(ok), "r.yaml").at(0))) << ok;
  }
  for (const char* bad : {"s", "1", "30 s", "1m1h", "5mm", "1s1s", "-1s", "1.5s", "00", "0s0", "1ms1s"}) {
    core::InputError e = error_of(rule_for(bad));
    EXPECT_EQ(e.field(), "spec.groups[0].rules[0].for") << bad;
    EXPECT_NE(e.message().find("in body should match"), std::string::npos) << bad;
  }
}

TEST(ValidateKinds, OnlyTheListedKindsAreValidatedHere) {
  for (const char* k : {"Deployment", "Service", "ServiceAccount", "ClusterRole", "Role", "ClusterRoleBinding",
                        "RoleBinding", "ServiceMonitor", "PrometheusRule"})
    EXPECT_TRUE(core::is_validated_kind(k)) << k;
  for (const char* k : {"DaemonSet", "Pod", "ConfigMap", "deployment", ""})
    EXPECT_FALSE(core::is_validated_kind(k)) << k;
}

}  // namespace

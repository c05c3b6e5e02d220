// core/codec/decode.cpp and documents.cpp: YAML and JSON as kubectl turns them into objects, decoded as
// strictly as the API server does.
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

#include "codec_test_helpers.h"

using namespace gpuops;
namespace json = boost::json;
using gpuops::testing::decode_error;
using gpuops::testing::kDs;
using gpuops::testing::replace;

TEST(Decode, DecodesTheLabDaemonSet) {
  auto docs = core::read_documents(kDs, "driver-ds.yaml");
  ASSERT_EQ(docs.size(), 1u);
  core::DaemonSet ds = core::decode_daemonset(docs[0]);
  EXPECT_EQ(ds.metadata.name, "nvidia-driver-daemonset");
  EXPECT_EQ(ds.metadata.namespace_, "gpu-operator");
  EXPECT_EQ(ds.selector.match_labels.at("app"), "nvidia-driver-daemonset");
  EXPECT_EQ(ds.template_.spec.node_selector.at("nvidia.com/gpu.deploy.driver"), "true");
  ASSERT_EQ(ds.template_.spec.containers.size(), 1u);
  EXPECT_EQ(ds.template_.spec.containers[0].requests.at("memory").value(), 512LL << 20);
  ASSERT_EQ(ds.template_.spec.tolerations.size(), 1u);
  EXPECT_EQ(ds.template_.spec.tolerations[0].op, "Exists");
}

TEST(Decode, RoundTripKeepsUnmodelledFields) {
  auto docs = core::read_documents(kDs, "driver-ds.yaml");
  core::DaemonSet ds = core::decode_daemonset(docs[0]);
  json::object out = core::encode(ds);
  const auto& tspec = out.at("spec").at("template").at("spec").as_object();
  EXPECT_EQ(tspec.at("priorityClassName"), json::value("system-node-critical"));
  EXPECT_EQ(tspec.at("containers").at(0).at("securityContext").at("privileged"), json::value(true));
  EXPECT_EQ(out.at("metadata").at("annotations").at("team"), json::value("gpu"));
  EXPECT_EQ(tspec.at("nodeSelector").at("nvidia.com/gpu.deploy.driver"), json::value("true"));
  // Status serialized as apps/v1 does: four counters always present.
  const auto& st = out.at("status").as_object();
  EXPECT_EQ(st.at("desiredNumberScheduled"), json::value(0));
  EXPECT_FALSE(st.contains("numberAvailable"));
  // And it decodes again to the same typed view.
  core::Document again;
  again.value = out;
  core::DaemonSet ds2 = core::decode_daemonset(again);
  EXPECT_EQ(ds2.template_.spec.node_selector, ds.template_.spec.node_selector);
  EXPECT_EQ(ds2.template_.spec.containers[0].requests.at("memory"),
            ds.template_.spec.containers[0].requests.at("memory"));
}

// A quantity written as an unquoted number far out of range decodes as
// upstream's would: 1e400 stays the string "1e400", a valid (huge) quantity.
TEST(Decode, UnquotedExtremeQuantities) {
  auto big =
      core::decode_daemonset(core::read_documents(replace(kDs, "memory: 512Mi", "memory: 1e400"), "ds.yaml").at(0));
  EXPECT_GT(big.template_.spec.containers[0].requests.at("memory"), core::Quantity::parse("1Ei"));
  auto tiny = core::decode_daemonset(
      core::read_documents(replace(kDs, "memory: 512Mi", "memory: \"1e-400\""), "ds.yaml").at(0));
  EXPECT_EQ(tiny.template_.spec.containers[0].requests.at("memory").nanos(), 1);
}

TEST(Decode, MultiDocumentYamlAndLines) {
  auto docs = core::read_documents(
      "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\n"
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n",
      "ns.yaml");
  ASSERT_EQ(docs.size(), 2u);  // the empty document is skipped
  EXPECT_EQ(docs[0].line, 2);
  EXPECT_EQ(docs[1].line, 8);
  EXPECT_EQ(docs[1].line_of({"metadata", "name"}), 11);
  EXPECT_EQ(std::get<core::Namespace>(core::decode_object(docs[1])).metadata.name, "b");
}

TEST(Decode, ListIsExpanded) {
  std::string text = R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"a":"b"}}},
    {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}]})";
  auto docs = core::read_documents(text, "dump.json");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(std::get<core::Node>(core::decode_object(docs[0])).metadata.labels.at("a"), "b");
  // YAML List too, with lines carried into the items.
  auto ydocs = core::read_documents(
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
      "  metadata:\n    name: n1\n    labels:\n      a: 1\n",
      "dump.yaml");
  ASSERT_EQ(ydocs.size(), 1u);
  auto e = decode_error(
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
      "  metadata:\n    name: n1\n    labels:\n      a: 1\n",
      "dump.yaml");
  EXPECT_EQ(e.line(), 9);
  EXPECT_EQ(e.field(), "metadata.labels[a]");
}

TEST(Decode, RemovedApiVersionIsThe404) {
  auto e = decode_error(replace(kDs, "apps/v1", "extensions/v1beta1"));
  EXPECT_EQ(e.http_status, 404);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "apiVersion");
  EXPECT_EQ(e.message(),
            "no matches for kind \"DaemonSet\" in version \"extensions/v1beta1\" (extensions/v1beta1 "
            "DaemonSets were removed in Kubernetes 1.16; use apps/v1)");
}

TEST(Decode, UnknownFieldIsStrictDecodingError) {
  auto e = decode_error(replace(kDs, "      nodeSelector:", "      nodeselector:"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.field(), "spec.template.spec.nodeselector");
  EXPECT_EQ(e.line(), 17);
  EXPECT_EQ(e.message(), "strict decoding error: unknown field \"spec.template.spec.nodeselector\"");
}

TEST(Decode, MissingKindOrContainers) {
  EXPECT_EQ(decode_error("apiVersion: v1\nmetadata:\n  name: x\n").field(), "kind");
  EXPECT_EQ(decode_error("kind: Node\nmetadata:\n  name: x\n").field(), "apiVersion");
  auto e = decode_error("apiVersion: v1\nkind: Node\nmetadata: {}\n");
  EXPECT_EQ(e.field(), "metadata.name");
  EXPECT_EQ(e.http_status, 422);
  auto k = decode_error("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n");
  EXPECT_EQ(k.field(), "kind");
  auto c = decode_error(replace(kDs, "      containers:\n", "      initContainers:\n"));
  EXPECT_EQ(c.field(), "spec.template.spec.containers");
}

TEST(Decode, WrongShapes) {
  auto e = decode_error(replace(
      kDs,
      "      tolerations:\n        - key: nvidia.com/gpu\n          operator: Exists\n          effect: NoSchedule\n",
      "      tolerations: nvidia.com/gpu\n"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_NE(e.message().find("cannot unmarshal string into Go struct field PodSpec.spec.template.spec.tolerations of "
                             "type []v1.Toleration"),
            std::string::npos);
  auto l = decode_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: x\n  labels: [a]\n");
  EXPECT_NE(l.message().find(
                "cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
            std::string::npos);
}

TEST(Decode, YamlSyntaxErrors) {
  auto e = decode_error("apiVersion: apps/v1\nkind: DaemonSet\nspec:\n\tselector: {}\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.message(), "invalid YAML: found a tab character in indentation (YAML allows spaces only)");
  auto u = decode_error("a: [1, 2\n");
  EXPECT_NE(u.message().find("invalid YAML"), std::string::npos);
  EXPECT_EQ(u.http_status, 0);
}

TEST(Decode, JsonSyntaxErrorNamesLine) {
  auto e = decode_error("{\n\"a\": 1,\n\"b\": }\n", "x.json");
  EXPECT_EQ(e.file(), "x.json");
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.message().find("invalid JSON"), std::string::npos);
}

TEST(Decode, NodeAndPodFields) {
  auto docs = core::read_documents(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"gpu-operator",
    "deletionTimestamp":"2026-11-20T08:00:30Z","ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":"d","uid":"u","controller":true}]},
    "spec":{"containers":[{"name":"c","image":"i"}],"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
    {"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}}},
    "status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/1 nodes"}],
    "initContainerStatuses":[{"name":"toolkit-validation","ready":false,"restartCount":0,"state":{"running":{}}}]}})",
                                   "p.json");
  core::Pod p = core::decode_pod(docs.at(0));
  EXPECT_EQ(p.target_node(), "n1");
  EXPECT_TRUE(p.spec.node_name.empty());
  ASSERT_TRUE(p.metadata.deletion_timestamp.has_value());
  EXPECT_EQ(core::format_time(*p.metadata.deletion_timestamp), "2026-11-20T08:00:30Z");
  EXPECT_EQ(p.metadata.controller_ref()->name, "d");
  EXPECT_EQ(p.condition("PodScheduled")->reason, "Unschedulable");
  EXPECT_EQ(p.status.init_container_statuses.at(0).state, "running");
  EXPECT_FALSE(p.is_ready());

  auto nd = core::read_documents(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},
    "spec":{"unschedulable":true,"taints":[{"key":"k","value":"v","effect":"NoSchedule"}]},
    "status":{"allocatable":{"memory":"256Mi","pods":110,"cpu":"4"},"conditions":[{"type":"Ready","status":"False"}]}})",
                                 "n.json");
  core::Node n = core::decode_node(nd.at(0));
  EXPECT_TRUE(n.unschedulable);
  EXPECT_EQ(n.taints.at(0).value, "v");
  EXPECT_EQ(n.allocatable.at("memory").value(), 256LL << 20);
  EXPECT_EQ(n.allocatable.at("pods").value(), 110);
  EXPECT_EQ(n.ready_status(), "False");
  json::object back = core::encode(n);
  EXPECT_EQ(back.at("spec").at("taints").at(0).at("key"), json::value("k"));
  EXPECT_EQ(back.at("status").at("conditions").at(0).at("status"), json::value("False"));
}

TEST(Decode, ReadPathsFolderAndMissing) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "gpuops-codec-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "b.yaml") << "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n";
  std::ofstream(dir / "a.json") << R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"a"}})";
  std::ofstream(dir / "notes.txt") << "ignored";
  auto objs = core::load_manifests({dir.string()});
  ASSERT_EQ(objs.size(), 2u);
  EXPECT_EQ(core::describe(objs[0]), "Namespace a");
  EXPECT_EQ(core::describe(objs[1]), "Namespace b");
  try {
    core::read_paths({(dir / "nope.yaml").string()});
    FAIL();
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.message(), "no such file or directory");
  }
  fs::remove_all(dir);
}

// Requirement::op is an enum; an operator the enum does not name (not
// validated for a DaemonSet's selector) is kept as written and written back.
TEST(Decode, SelectorOperatorsRoundTrip) {
  std::string text = replace(kDs, "    matchLabels:\n      app: nvidia-driver-daemonset\n",
                             "    matchLabels:\n      app: nvidia-driver-daemonset\n    matchExpressions:\n"
                             "      - {key: tier, operator: NotIn, values: [canary]}\n"
                             "      - {key: odd, operator: Sometimes}\n");
  core::DaemonSet ds = core::decode_daemonset(core::read_documents(text, "ds.yaml").at(0));
  ASSERT_EQ(ds.selector.match_expressions.size(), 2u);
  EXPECT_EQ(ds.selector.match_expressions[0].op, core::SelectorOperator::kNotIn);
  EXPECT_EQ(ds.selector.match_expressions[1].op, core::SelectorOperator::kUnknown);
  EXPECT_EQ(ds.selector.match_expressions[1].op_text(), "Sometimes");
  json::object out = core::encode(ds);
  const auto& me = out.at("spec").at("selector").at("matchExpressions").as_array();
  EXPECT_EQ(me.at(0).at("operator"), json::value("NotIn"));
  EXPECT_EQ(me.at(1).at("operator"), json::value("Sometimes"));
}

// lint's kinds: the four decode_object handles and the GPU Operator's two
// custom resources, at the versions their CRDs serve; their metadata as
// apiextensions-apiserver checks a custom resource's.
TEST(Decode, DecodeManifestTakesTheOperatorsResources) {
  auto one = [](const std::string& text) { return core::decode_manifest(core::read_documents(text, "m.yaml").at(0)); };
  auto cp = one(
      "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\nspec:\n"
      "  driver:\n    enabled: true\n  daemonsets: {}\n  dcgm: {}\n  dcgmExporter: {}\n  devicePlugin: {}\n  gfd: {}\n"
      "  nodeStatusExporter: {}\n  operator: {}\n  toolkit: {}\nstatus:\n  state: ready\n");
  ASSERT_TRUE(std::holds_alternative<core::ClusterPolicy>(cp));
  EXPECT_EQ(std::get<core::ClusterPolicy>(cp).state, "ready");
  auto nd =
      one("apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n  name: default\nspec:\n"
          "  nodeSelector:\n    nvidia.com/gpu.present: \"true\"\n");
  ASSERT_TRUE(std::holds_alternative<core::NVIDIADriver>(nd));
  EXPECT_EQ(std::get<core::NVIDIADriver>(nd).driver_type, "gpu");
  EXPECT_TRUE(std::holds_alternative<core::DaemonSet>(one(kDs)));
  auto err = [&](const std::string& text) {
    try {
      one(text);
    } catch (const core::InputError& e) {
      return e;
    }
    ADD_FAILURE() << text;
    return core::InputError("", 0, "", "");
  };
  auto e = err("apiVersion: nvidia.com/v1alpha1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\n");
  EXPECT_EQ(e.http_status, 404);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.message(), "no matches for kind \"ClusterPolicy\" in version \"nvidia.com/v1alpha1\"");
  // As the API server judges a create: the CRD's schema (core/codec/crd_schema.h),
  // the error on the line of the field (or of its parent, for one missing).
  e =
      err("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: cluster-policy\nspec:\n"
          "  driver:\n    enabled: true\n");
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.field(), "spec.daemonsets");
  EXPECT_EQ(e.causes.size(), 8u);
  e =
      err("apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n  name: d\nspec:\n"
          "  driverType: vgpu\n  image:\n    name: x\n");
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 7);
  EXPECT_EQ(e.field(), "spec.image");
  e = err("apiVersion: nvidia.com/v1\nkind: NVIDIADriver\nmetadata:\n  name: default\n");
  EXPECT_EQ(e.message(), "no matches for kind \"NVIDIADriver\" in version \"nvidia.com/v1\"");
  e = err("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: Cluster_Policy\n");
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.message().rfind("ClusterPolicy.nvidia.com \"Cluster_Policy\" is invalid: metadata.name: Invalid value: "
                              "\"Cluster_Policy\": a lowercase RFC 1123 subdomain",
                              0),
            0u)
      << e.message();
  e =
      err("apiVersion: nvidia.com/v1alpha1\nkind: NVIDIADriver\nmetadata:\n  name: d\nspec:\n  nodeSelector:\n"
          "    nvidia.com/gpu.present: true\n");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.field(), "spec.nodeSelector[nvidia.com/gpu.present]");
  e = err("apiVersion: v1\nkind: Service\nmetadata:\n  name: x\n");
  EXPECT_EQ(e.field(), "kind");
  EXPECT_EQ(e.message(),
            "kind \"Service\" (v1) is not handled by gpuops; expected Namespace, Node, DaemonSet, Pod, "
            "ClusterPolicy or NVIDIADriver");
  // decode_object, for apply and the simulator, still takes its four.
  EXPECT_NE(decode_error("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: c\n")
                .message()
                .find("expected Namespace, Node, DaemonSet or Pod"),
            std::string::npos);
}

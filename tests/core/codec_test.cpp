// Codecs: YAML as kubectl turns it into JSON, decoding as strict as the API.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>

#include "core/codec.h"

using namespace gpuops;
namespace json = boost::json;

namespace {

const char* kDs = R"(apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-driver-daemonset
  namespace: gpu-operator
  annotations:
    team: gpu
spec:
  selector:
    matchLabels:
      app: nvidia-driver-daemonset
  template:
    metadata:
      labels:
        app: nvidia-driver-daemonset
    spec:
      nodeSelector:
        nvidia.com/gpu.deploy.driver: "true"
      priorityClassName: system-node-critical
      tolerations:
        - key: nvidia.com/gpu
          operator: Exists
          effect: NoSchedule
      containers:
        - name: driver
          image: nvcr.io/nvidia/driver:550.90.07-ubuntu22.04
          securityContext:
            privileged: true
          resources:
            requests:
              memory: 512Mi
)";

core::InputError decode_error(const std::string& text, const std::string& file = "m.yaml") {
  try {
    auto docs = core::read_documents(text, file);
    for (const auto& d : docs) core::decode_object(d);
  } catch (const core::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return core::InputError("", 0, "", "");
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return s.replace(pos, from.size(), to);
}

}  // namespace

TEST(Codec, DecodesTheLabDaemonSet) {
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

TEST(Codec, RoundTripKeepsUnmodelledFields) {
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
  EXPECT_EQ(ds2.template_.spec.containers[0].requests.at("memory"), ds.template_.spec.containers[0].requests.at("memory"));
}

// go-yaml v2 (YAML 1.1) plain scalars, as sigs.k8s.io/yaml converts them.
TEST(Codec, Yaml11Scalars) {
  auto docs = core::read_documents(
      "a: yes\nb: \"yes\"\nc: On\nd: n\ne: 123\nf: 1.5\ng: ~\nh: 0x1f\ni: '42'\nj: hello\nk: !!str true\nl: 010\n", "x.yaml");
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

TEST(Codec, MultiDocumentYamlAndLines) {
  auto docs = core::read_documents("---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n---\n---\n"
                                   "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: b\n",
                                   "ns.yaml");
  ASSERT_EQ(docs.size(), 2u);  // the empty document is skipped
  EXPECT_EQ(docs[0].line, 2);
  EXPECT_EQ(docs[1].line, 8);
  EXPECT_EQ(docs[1].line_of({"metadata", "name"}), 11);
  EXPECT_EQ(std::get<core::Namespace>(core::decode_object(docs[1])).metadata.name, "b");
}

TEST(Codec, ListIsExpanded) {
  std::string text = R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"a":"b"}}},
    {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}]})";
  auto docs = core::read_documents(text, "dump.json");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(std::get<core::Node>(core::decode_object(docs[0])).metadata.labels.at("a"), "b");
  // YAML List too, with lines carried into the items.
  auto ydocs = core::read_documents("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
                                    "  metadata:\n    name: n1\n    labels:\n      a: 1\n", "dump.yaml");
  ASSERT_EQ(ydocs.size(), 1u);
  auto e = decode_error("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n"
                        "  metadata:\n    name: n1\n    labels:\n      a: 1\n", "dump.yaml");
  EXPECT_EQ(e.line(), 9);
  EXPECT_EQ(e.field(), "metadata.labels[a]");
}

TEST(Codec, UnquotedTrueInNodeSelectorIsTheApis400) {
  auto e = decode_error(replace(kDs, "deploy.driver: \"true\"", "deploy.driver: true"), "driver-ds.yaml");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.file(), "driver-ds.yaml");
  EXPECT_EQ(e.line(), 18);
  EXPECT_EQ(e.field(), "spec.template.spec.nodeSelector[nvidia.com/gpu.deploy.driver]");
  EXPECT_EQ(e.message(),
            "DaemonSet in version \"v1\" cannot be handled as a DaemonSet: json: cannot unmarshal bool into Go "
            "struct field PodSpec.spec.template.spec.nodeSelector of type string");
  auto n = decode_error(replace(kDs, "deploy.driver: \"true\"", "deploy.driver: 1"));
  EXPECT_NE(n.message().find("cannot unmarshal number into Go struct field PodSpec.spec.template.spec.nodeSelector of type string"),
            std::string::npos);
}

TEST(Codec, SelectorMustMatchTemplateLabelsIsThe422) {
  auto e = decode_error(replace(kDs, "      app: nvidia-driver-daemonset\n  template", "      app: other\n  template"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "spec.template.metadata.labels");
  EXPECT_EQ(e.line(), 14);
  EXPECT_EQ(e.message(),
            "DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: spec.template.metadata.labels: Invalid value: "
            "map[string]string{\"app\":\"nvidia-driver-daemonset\"}: `selector` does not match template `labels`");
}

TEST(Codec, EmptySelectorIsInvalid) {
  auto e = decode_error(replace(kDs, "    matchLabels:\n      app: nvidia-driver-daemonset\n  template", "    {}\n  template"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "spec.selector");
}

TEST(Codec, BadQuantity) {
  auto e = decode_error(replace(kDs, "memory: 512Mi", "memory: 512Mix"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.line(), 31);
  EXPECT_EQ(e.field(), "spec.template.spec.containers[0].resources.requests[memory]");
  EXPECT_NE(e.message().find("quantities must match the regular expression"), std::string::npos);
}

TEST(Codec, InvalidLabelValueInNodeSelector) {
  auto e = decode_error(replace(kDs, "deploy.driver: \"true\"", "deploy.driver: \"yes please\""));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "spec.template.spec.nodeSelector[nvidia.com/gpu.deploy.driver]");
  EXPECT_NE(e.message().find("a valid label must be an empty string"), std::string::npos);
}

TEST(Codec, RemovedApiVersionIsThe404) {
  auto e = decode_error(replace(kDs, "apps/v1", "extensions/v1beta1"));
  EXPECT_EQ(e.http_status, 404);
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.field(), "apiVersion");
  EXPECT_EQ(e.message(), "no matches for kind \"DaemonSet\" in version \"extensions/v1beta1\" (extensions/v1beta1 "
                         "DaemonSets were removed in Kubernetes 1.16; use apps/v1)");
}

TEST(Codec, UnknownFieldIsStrictDecodingError) {
  auto e = decode_error(replace(kDs, "      nodeSelector:", "      nodeselector:"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.field(), "spec.template.spec.nodeselector");
  EXPECT_EQ(e.line(), 17);
  EXPECT_EQ(e.message(), "strict decoding error: unknown field \"spec.template.spec.nodeselector\"");
}

TEST(Codec, MissingKindOrContainers) {
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

TEST(Codec, AffinityAndTolerationValidation) {
  std::string with_aff = replace(kDs, "      priorityClassName", R"(      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions:
                  - key: gpus
                    operator: Gt
                    values: ["1", "2"]
      priorityClassName)");
  auto e = decode_error(with_aff);
  EXPECT_EQ(e.field(),
            "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
            "matchExpressions[0].values");
  EXPECT_EQ(e.http_status, 422);
  auto t = decode_error(replace(kDs, "operator: Exists", "operator: Sometimes"));
  EXPECT_EQ(t.field(), "spec.template.spec.tolerations[0].operator");
  auto eff = decode_error(replace(kDs, "effect: NoSchedule", "effect: Never"));
  EXPECT_EQ(eff.field(), "spec.template.spec.tolerations[0].effect");
}

TEST(Codec, WrongShapes) {
  auto e = decode_error(replace(kDs, "      tolerations:\n        - key: nvidia.com/gpu\n          operator: Exists\n          effect: NoSchedule\n",
                                "      tolerations: nvidia.com/gpu\n"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_NE(e.message().find("cannot unmarshal string into Go struct field PodSpec.spec.template.spec.tolerations of type []v1.Toleration"),
            std::string::npos);
  auto l = decode_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: x\n  labels: [a]\n");
  EXPECT_NE(l.message().find("cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
            std::string::npos);
}

TEST(Codec, YamlSyntaxErrors) {
  auto e = decode_error("apiVersion: apps/v1\nkind: DaemonSet\nspec:\n\tselector: {}\n");
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.message(), "invalid YAML: found a tab character in indentation (YAML allows spaces only)");
  auto u = decode_error("a: [1, 2\n");
  EXPECT_NE(u.message().find("invalid YAML"), std::string::npos);
  EXPECT_EQ(u.http_status, 0);
}

TEST(Codec, JsonSyntaxErrorNamesLine) {
  auto e = decode_error("{\n\"a\": 1,\n\"b\": }\n", "x.json");
  EXPECT_EQ(e.file(), "x.json");
  EXPECT_EQ(e.line(), 3);
  EXPECT_NE(e.message().find("invalid JSON"), std::string::npos);
}

TEST(Codec, NodeAndPodFields) {
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

TEST(Codec, Times) {
  EXPECT_EQ(core::format_time(core::parse_time("2026-11-20T08:00:00Z")), "2026-11-20T08:00:00Z");
  EXPECT_EQ(core::format_time(core::parse_time("2026-11-20T10:00:00+02:00")), "2026-11-20T08:00:00Z");
  EXPECT_EQ(core::parse_time("1970-01-01T00:00:01.5Z").time_since_epoch().count(), 1500);
  EXPECT_THROW(core::parse_time("yesterday"), std::invalid_argument);
}

TEST(Codec, LabelValidation) {
  EXPECT_EQ(core::validate_label_key("nvidia.com/gpu.deploy.driver"), "");
  EXPECT_EQ(core::validate_label_value("true"), "");
  EXPECT_EQ(core::validate_label_value(""), "");
  EXPECT_NE(core::validate_label_value("-x"), "");
  EXPECT_NE(core::validate_label_value(std::string(64, 'a')), "");
  EXPECT_NE(core::validate_label_key("Bad_Prefix.com/x"), "");
  EXPECT_NE(core::validate_label_key("a/b/c"), "");
  EXPECT_NE(core::validate_label_key(""), "");
}

TEST(Codec, ReadPathsFolderAndMissing) {
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

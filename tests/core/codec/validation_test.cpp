// core/codec/validation.cpp: the API server's validation of what is decoded (its 400s and 422s, with
// the field and the line).
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

// encoding/json refuses a number outside its Go field's type: an int32
// field (minReadySeconds, a status counter, an IntOrString's IntVal) given
// 2147483648 is a 400, not a value cast and wrapped to a negative one (a
// hostile-input run found maxUnavailable: 2147483648 accepted as -2^31).
TEST(Validation, NumbersPastTheirGoTypeAreRefused) {
  auto decode = [](const std::string& spec_line) {
    std::string text = replace(kDs, "spec:\n  selector:", "spec:\n" + spec_line + "\n  selector:");
    return core::decode_daemonset(core::read_documents(text, "ds.yaml").at(0));
  };
  EXPECT_EQ(decode("  minReadySeconds: 2147483647").min_ready_seconds, 2147483647);
  EXPECT_EQ(decode("  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2147483647}}")
                .max_unavailable.value,
            2147483647);
  for (const auto& [line, want_field, type] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"  minReadySeconds: 2147483648", "spec.minReadySeconds",
            "DaemonSetSpec.spec.minReadySeconds of type int32"},
           {"  minReadySeconds: -2147483649", "spec.minReadySeconds", "of type int32"},
           {"  revisionHistoryLimit: 18446744073709551615", "spec.revisionHistoryLimit", "of type int32"},
           {"  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2147483648}}",
            "spec.updateStrategy.rollingUpdate.maxUnavailable", "of type int32"},
           {"  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1e300}}",
            "spec.updateStrategy.rollingUpdate.maxSurge", "of type int32"}}) {
    SCOPED_TRACE(line);
    try {
      decode(line);
      ADD_FAILURE() << "accepted";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.http_status, 400);
      EXPECT_EQ(e.field(), want_field);
      EXPECT_NE(e.message().find("json: cannot unmarshal number"), std::string::npos) << e.what();
      EXPECT_NE(e.message().find(type), std::string::npos) << e.what();
    }
  }
}

TEST(Validation, UnquotedTrueInNodeSelectorIsTheApis400) {
  auto e = decode_error(replace(kDs, "deploy.driver: \"true\"", "deploy.driver: true"), "driver-ds.yaml");
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.file(), "driver-ds.yaml");
  EXPECT_EQ(e.line(), 18);
  EXPECT_EQ(e.field(), "spec.template.spec.nodeSelector[nvidia.com/gpu.deploy.driver]");
  EXPECT_EQ(e.message(),
            "DaemonSet in version \"v1\" cannot be handled as a DaemonSet: json: cannot unmarshal bool into Go "
            "struct field PodSpec.spec.template.spec.nodeSelector of type string");
  auto n = decode_error(replace(kDs, "deploy.driver: \"true\"", "deploy.driver: 1"));
  EXPECT_NE(n.message().find(
                "cannot unmarshal number into Go struct field PodSpec.spec.template.spec.nodeSelector of type string"),
            std::string::npos);
}

TEST(Validation, SelectorMustMatchTemplateLabelsIsThe422) {
  auto e = decode_error(replace(kDs, "      app: nvidia-driver-daemonset\n  template", "      app: other\n  template"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "spec.template.metadata.labels");
  EXPECT_EQ(e.line(), 14);
  EXPECT_EQ(e.message(),
            "DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: spec.template.metadata.labels: Invalid value: "
            "{\"app\":\"nvidia-driver-daemonset\"}: `selector` does not match template `labels`");
}

TEST(Validation, EmptySelectorIsInvalid) {
  auto e = decode_error(
      replace(kDs, "    matchLabels:\n      app: nvidia-driver-daemonset\n  template", "    {}\n  template"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "spec.selector");
}

TEST(Validation, BadQuantity) {
  auto e = decode_error(replace(kDs, "memory: 512Mi", "memory: 512Mix"));
  EXPECT_EQ(e.http_status, 400);
  EXPECT_EQ(e.line(), 31);
  EXPECT_EQ(e.field(), "spec.template.spec.containers[0].resources.requests[memory]");
  EXPECT_NE(e.message().find("quantities must match the regular expression"), std::string::npos);
}

// ValidateObjectMeta and validateContainerCommon: a DaemonSet's and a Node's
// name is a DNS-1123 subdomain, a Namespace's and a container's a DNS-1123
// label (the API's 422, with the field and the line).
TEST(Validation, InvalidNamesAreThe422) {
  auto e = decode_error(replace(kDs, "name: nvidia-driver-daemonset\n  namespace", "name: Nvidia_Bad\n  namespace"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 4);
  EXPECT_EQ(e.field(), "metadata.name");
  EXPECT_EQ(
      e.message(),
      "DaemonSet.apps \"Nvidia_Bad\" is invalid: metadata.name: Invalid value: \"Nvidia_Bad\": a lowercase RFC "
      "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
      "an alphanumeric character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
  e = decode_error(replace(kDs, "- name: driver", "- name: Tool_Kit"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 25);
  EXPECT_EQ(e.field(), "spec.template.spec.containers[0].name");
  EXPECT_NE(e.message().find("Invalid value: \"Tool_Kit\": a lowercase RFC 1123 label must consist of"),
            std::string::npos)
      << e.message();
  e = decode_error("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: Bad_NS\n");
  EXPECT_EQ(e.field(), "metadata.name");
  EXPECT_NE(e.message().find("a lowercase RFC 1123 label"), std::string::npos) << e.message();
  e = decode_error("apiVersion: v1\nkind: Node\nmetadata:\n  name: Bad_Node\n");
  EXPECT_EQ(e.field(), "metadata.name");
  EXPECT_NE(e.message().find("a lowercase RFC 1123 subdomain"), std::string::npos) << e.message();
  // A dotted subdomain is a valid node name.
  EXPECT_NO_THROW(core::decode_object(
      core::read_documents("apiVersion: v1\nkind: Node\nmetadata:\n  name: ip-10-0-0-1.ec2.internal\n", "n.yaml")
          .at(0)));
}

// ValidateResourceRequirements: no negative amount, and a request no larger
// than the limit of the same resource.
TEST(Validation, ResourceRequirementsAreValidated) {
  auto e = decode_error(replace(kDs, "memory: 512Mi", "memory: -128Mi"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 31);
  EXPECT_EQ(e.field(), "spec.template.spec.containers[0].resources.requests[memory]");
  EXPECT_EQ(e.message(),
            "DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: "
            "spec.template.spec.containers[0].resources.requests[memory]: Invalid value: \"-128Mi\": must be greater "
            "than or equal to 0");
  e = decode_error(replace(kDs, "              memory: 512Mi",
                           "              memory: 512Mi\n            limits:\n              memory: 64Mi"));
  EXPECT_EQ(e.field(), "spec.template.spec.containers[0].resources.requests[memory]");
  EXPECT_NE(e.message().find("Invalid value: \"512Mi\": must be less than or equal to memory limit of 64Mi"),
            std::string::npos)
      << e.message();
  auto ok = core::decode_daemonset(
      core::read_documents(replace(kDs, "              memory: 512Mi",
                                   "              memory: 512Mi\n            limits:\n              memory: 1Gi"),
                           "ds.yaml")
          .at(0));
  EXPECT_EQ(ok.template_.spec.containers[0].limits.at("memory"), core::Quantity::parse("1Gi"));
}

TEST(Validation, InvalidLabelValueInNodeSelector) {
  auto e = decode_error(replace(kDs, "deploy.driver: \"true\"", "deploy.driver: \"yes please\""));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "spec.template.spec.nodeSelector[nvidia.com/gpu.deploy.driver]");
  EXPECT_NE(e.message().find("a valid label must be an empty string"), std::string::npos);
}

TEST(Validation, AffinityAndTolerationValidation) {
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
  EXPECT_EQ(
      e.field(),
      "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
      "matchExpressions[0].values");
  EXPECT_EQ(e.http_status, 422);
  auto t = decode_error(replace(kDs, "operator: Exists", "operator: Sometimes"));
  EXPECT_EQ(t.field(), "spec.template.spec.tolerations[0].operator");
  auto eff = decode_error(replace(kDs, "effect: NoSchedule", "effect: Never"));
  EXPECT_EQ(eff.field(), "spec.template.spec.tolerations[0].effect");
}

TEST(Validation, LabelValidation) {
  EXPECT_EQ(core::validate_label_key("nvidia.com/gpu.deploy.driver"), "");
  EXPECT_EQ(core::validate_label_value("true"), "");
  EXPECT_EQ(core::validate_label_value(""), "");
  EXPECT_NE(core::validate_label_value("-x"), "");
  EXPECT_NE(core::validate_label_value(std::string(64, 'a')), "");
  EXPECT_NE(core::validate_label_key("Bad_Prefix.com/x"), "");
  EXPECT_NE(core::validate_label_key("a/b/c"), "");
  EXPECT_NE(core::validate_label_key(""), "");
}

// IsQualifiedName and IsValidLabelValue (apimachinery/pkg/util/validation).
TEST(Validation, LabelValidationEdges) {
  const std::string kPrefixMsg =
      "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
      "and must start and end with an alphanumeric character";
  const std::string kNameMsg =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  const std::string kValueMsg =
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
      "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
      "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
  // Names: at most 63 characters, alphanumeric at both ends.
  for (const std::string& ok : {std::string("x"), std::string("My_Name.1-b"), std::string(63, 'a'), std::string("0"),
                                std::string("a.b"), std::string("A__-..z")})
    EXPECT_EQ(core::validate_label_key(ok), "") << ok;
  for (const std::string& bad : {std::string(64, 'a'), std::string("_x"), std::string("x_"), std::string("-x"),
                                 std::string("x-"), std::string(".x"), std::string("x."), std::string("a b"),
                                 std::string("a:b"), std::string("\xc3\xa9"), std::string("x/"), std::string("")})
    EXPECT_EQ(core::validate_label_key(bad), kNameMsg) << bad;
  // Prefixes: a DNS-1123 subdomain of at most 253 characters (no per-label limit).
  EXPECT_EQ(core::validate_label_key(std::string(253, 'a') + "/x"), "");
  EXPECT_EQ(core::validate_label_key("a-1.b2.example.com/x"), "");
  EXPECT_EQ(core::validate_label_key("0/x"), "");
  for (const std::string& bad :
       {std::string(254, 'a') + "/x", std::string("/x"), std::string("-a.com/x"), std::string("a-.com/x"),
        std::string("a..b/x"), std::string(".a/x"), std::string("a./x"), std::string("A.com/x"),
        std::string("a_b.com/x"), std::string("a.-b/x")})
    EXPECT_EQ(core::validate_label_key(bad), kPrefixMsg) << bad;
  EXPECT_EQ(core::validate_label_key("example.com/"), kNameMsg);
  EXPECT_EQ(core::validate_label_key("a/b/c"), kNameMsg);
  EXPECT_EQ(core::validate_label_key("example.com/" + std::string(64, 'a')), kNameMsg);
  // Values: empty, or at most 63 characters of the name alphabet.
  for (const std::string& ok : {std::string(""), std::string("true"), std::string(63, 'z'), std::string("A-1_b.C")})
    EXPECT_EQ(core::validate_label_value(ok), "") << ok;
  EXPECT_EQ(core::validate_label_value(std::string(64, 'z')), "must be no more than 63 characters");
  EXPECT_EQ(core::validate_label_value(std::string(64, '-')), "must be no more than 63 characters");
  for (const std::string& bad : {std::string("-x"), std::string("x-"), std::string("_"), std::string("."),
                                 std::string("a b"), std::string("a/b"), std::string("\xc3\xa9")})
    EXPECT_EQ(core::validate_label_value(bad), kValueMsg) << bad;
}

// validateNodeTaints / validateTaintEffect (pkg/apis/core/validation): the
// decoder lint and serve share refuses a taint the API server refuses, every
// error of the list as a cause. ValidateNode passes the path "metadata", so
// upstream names the fields metadata.taints[i].
namespace {
core::InputError node_taints_error(const std::string& taints) {
  return decode_error(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"taints":)" + taints + "}}",
                      "n.json");
}
}  // namespace

TEST(Validation, NodeTaintEffectIsRequiredAndEnumerated) {
  auto e = node_taints_error(R"([{"key":"a"}])");
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "metadata.taints[0].effect");
  EXPECT_EQ(e.message(), "Node \"n\" is invalid: metadata.taints[0].effect: Required value");
  ASSERT_EQ(e.causes.size(), 1u);
  EXPECT_EQ(e.causes[0].reason, "FieldValueRequired");
  EXPECT_EQ(e.causes[0].message, "Required value");

  e = node_taints_error(R"([{"key":"a","effect":"NoSchedule"},{"key":"b","effect":"Bogus"}])");
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.message(),
            "Node \"n\" is invalid: metadata.taints[1].effect: Unsupported value: \"Bogus\": supported "
            "values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
  ASSERT_EQ(e.causes.size(), 1u);
  EXPECT_EQ(e.causes[0].reason, "FieldValueNotSupported");
  EXPECT_EQ(e.causes[0].field, "metadata.taints[1].effect");
}

TEST(Validation, NodeTaintKeyIsAQualifiedName) {
  const std::string regex =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  // IsQualifiedName("") says both that the name is empty and that it does
  // not match: two causes, aggregated as "[a, b]".
  auto e = node_taints_error(R"([{"key":"","effect":"NoSchedule"}])");
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.message(),
            "Node \"n\" is invalid: [metadata.taints[0].key: Invalid value: \"\": name part must be "
            "non-empty, metadata.taints[0].key: Invalid value: \"\": " +
                regex + "]");
  ASSERT_EQ(e.causes.size(), 2u);
  EXPECT_EQ(e.causes[0].reason, "FieldValueInvalid");
  EXPECT_EQ(e.causes[0].field, "metadata.taints[0].key");
  EXPECT_EQ(e.causes[0].message, "Invalid value: \"\": name part must be non-empty");
  EXPECT_EQ(e.causes[1].message, "Invalid value: \"\": " + regex);

  e = node_taints_error(R"([{"key":"bad key!","effect":"NoExecute"}])");
  EXPECT_EQ(e.message(), "Node \"n\" is invalid: metadata.taints[0].key: Invalid value: \"bad key!\": " + regex);
  ASSERT_EQ(e.causes.size(), 1u);
}

TEST(Validation, NodeTaintsAreUniqueByKeyAndEffect) {
  auto e = node_taints_error(R"([{"key":"a","effect":"NoSchedule"},{"key":"a","value":"v","effect":"NoSchedule"}])");
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "metadata.taints[1]");
  EXPECT_EQ(e.message(),
            "Node \"n\" is invalid: metadata.taints[1]: Duplicate value: core.Taint{Key:\"a\", "
            "Value:\"v\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key "
            "and effect pair");
  ASSERT_EQ(e.causes.size(), 1u);
  EXPECT_EQ(e.causes[0].reason, "FieldValueDuplicate");
  // The same key with another effect is another taint.
  auto docs = core::read_documents(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"spec":{"taints":
      [{"key":"a","effect":"NoSchedule"},{"key":"a","effect":"NoExecute"}]}})",
                                   "n.json");
  EXPECT_EQ(core::decode_node(docs.at(0)).taints.size(), 2u);
}

// ValidateAnnotationsSize (apimachinery/pkg/api/validation/objectmeta.go):
// keys and values together at most TotalAnnotationSizeLimitB (256 KiB), for
// every kind's metadata (and a pod template's).
TEST(Validation, AnnotationsOver256KiBAreTooLong) {
  const std::string big(300 * 1024, 'x');
  const std::string msg = "metadata.annotations: Too long: must have at most 262144 bytes";
  for (const auto& [kind, rest, gk] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"apiVersion\":\"v1\",\"kind\":\"Node", "", "Node"},
           {"apiVersion\":\"v1\",\"kind\":\"Namespace", "", "Namespace"},
           {"apiVersion\":\"v1\",\"kind\":\"Pod", R"(,"spec":{"containers":[{"name":"c","image":"i"}]})", "Pod"}}) {
    auto e = decode_error(
        "{\"" + kind + R"(","metadata":{"name":"x","namespace":"d","annotations":{"a":")" + big + "\"}}" + rest + "}",
        "x.json");
    EXPECT_EQ(e.http_status, 422) << kind;
    EXPECT_EQ(e.field(), "metadata.annotations");
    EXPECT_EQ(e.message(), gk + " \"x\" is invalid: " + msg);
    ASSERT_EQ(e.causes.size(), 1u);
    EXPECT_EQ(e.causes[0].reason, "FieldValueTooLong");
    EXPECT_EQ(e.causes[0].message, "Too long: must have at most 262144 bytes");
  }
  auto e = decode_error(replace(kDs, "team: gpu", "team: " + big));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.message(), "DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: " + msg);
  e = decode_error(
      replace(kDs, "        app: nvidia-driver-daemonset\n    spec",
              "        app: nvidia-driver-daemonset\n      annotations:\n        a: " + big + "\n    spec"));
  EXPECT_EQ(e.field(), "spec.template.metadata.annotations");
  // Exactly at the limit is accepted (the rule is "more than").
  auto docs = core::read_documents(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n","annotations":{"a":")" +
                                       std::string(256 * 1024 - 1, 'x') + "\"}}}",
                                   "n.json");
  EXPECT_NO_THROW(core::decode_node(docs.at(0)));
}

// ValidateObjectMeta's namespace rule as a create reaches it: a namespaced
// kind's namespace is a DNS-1123 label (ValidateNamespaceName); an empty one
// is filled from the request; a cluster-scoped kind's is cleared by
// rest.BeforeCreate before validation (dropped, never an error).
TEST(Validation, NamespaceOfANamespacedKindIsADns1123Label) {
  auto e = decode_error(replace(kDs, "namespace: gpu-operator", "namespace: GPU_Operator"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.line(), 5);
  EXPECT_EQ(e.field(), "metadata.namespace");
  EXPECT_EQ(e.message(),
            "DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: metadata.namespace: Invalid value: "
            "\"GPU_Operator\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
            "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')");
  e = decode_error(replace(kDs, "namespace: gpu-operator", "namespace: gpu.operator"));
  EXPECT_EQ(e.message(),
            "DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: metadata.namespace: Invalid value: "
            "\"gpu.operator\": must not contain dots");
  e = decode_error(replace(kDs, "namespace: gpu-operator", "namespace: " + std::string(64, 'n')));
  EXPECT_NE(e.message().find(": must be no more than 63 characters"), std::string::npos) << e.message();
  e = decode_error(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"Bad NS"},)"
                   R"("spec":{"containers":[{"name":"c","image":"i"}]}})",
                   "p.json");
  EXPECT_EQ(e.field(), "metadata.namespace");
  EXPECT_EQ(e.message().rfind("Pod \"p\" is invalid: metadata.namespace: Invalid value: \"Bad NS\": a lowercase RFC "
                              "1123 label",
                              0),
            0u)
      << e.message();
  auto ds =
      core::decode_daemonset(core::read_documents(replace(kDs, "  namespace: gpu-operator\n", ""), "d.yaml").at(0));
  EXPECT_EQ(ds.metadata.namespace_, "");
  // A dotted Namespace name is upstream's "must not contain dots" too.
  EXPECT_EQ(core::validate_dns1123_label("gpu.operator"), "must not contain dots");
  EXPECT_NE(core::validate_dns1123_label("-x").find("a lowercase RFC 1123 label"), std::string::npos);
}

TEST(Validation, NamespaceOfAClusterScopedKindIsDropped) {
  for (const std::string kind : {"Node", "Namespace"}) {
    auto docs = core::read_documents(
        "apiVersion: v1\nkind: " + kind + "\nmetadata:\n  name: gpu-a\n  namespace: Not_A_Label\n", "n.yaml");
    core::Object obj = core::decode_object(docs.at(0));
    const auto& md = kind == "Node" ? std::get<core::Node>(obj).metadata : std::get<core::Namespace>(obj).metadata;
    EXPECT_EQ(md.namespace_, "") << kind;
    EXPECT_EQ(core::encode(obj).at("metadata").as_object().count("namespace"), 0u) << kind;
  }
  auto cp =
      core::decode_cluster_policy(core::read_documents("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  "
                                                       "name: cluster-policy\n  namespace: gpu-operator\n",
                                                       "cp.yaml")
                                      .at(0));
  EXPECT_EQ(cp.metadata.namespace_, "");
}

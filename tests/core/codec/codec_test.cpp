// Codecs: YAML as kubectl turns it into JSON, decoding as strict as the API.
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
  EXPECT_EQ(ds2.template_.spec.containers[0].requests.at("memory"),
            ds.template_.spec.containers[0].requests.at("memory"));
}

// go-yaml v2 (YAML 1.1) plain scalars, as sigs.k8s.io/yaml converts them.
TEST(Codec, Yaml11Scalars) {
  auto docs = core::read_documents(
      "a: yes\nb: \"yes\"\nc: On\nd: n\ne: 123\nf: 1.5\ng: ~\nh: 0x1f\ni: '42'\nj: hello\nk: !!str true\nl: 010\n",
      "x.yaml");
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

// Numbers outside int64 and float64, as go-yaml resolves them: an integer
// above int64 is a uint64 (ParseUint), beyond that a float; a float beyond
// float64's range fails ParseFloat and stays a string; an underflow is 0.
TEST(Codec, Yaml11NumbersOutOfRange) {
  auto docs = core::read_documents(
      "a: 18446744073709551615\nb: 99999999999999999999999\nc: 1e400\nd: 1e-400\ne: -1e400\nf: -9223372036854775809\n",
      "x.yaml");
  const auto& o = docs.at(0).value.as_object();
  EXPECT_EQ(o.at("a"), json::value(static_cast<uint64_t>(18446744073709551615ULL)));
  EXPECT_EQ(o.at("b"), json::value(1e23));
  EXPECT_EQ(o.at("c"), json::value("1e400"));
  EXPECT_EQ(o.at("d"), json::value(0.0));
  EXPECT_EQ(o.at("e"), json::value("-1e400"));
  EXPECT_EQ(o.at("f"), json::value(-9223372036854775809.0));
}

// A JSON file with a number float64 cannot hold is refused at reading, as
// kubectl v1.37.2 refuses to decode it (measured: `kubectl create -f
// ds.json --validate=false` says `error: unable to decode "ds.json": json:
// cannot unmarshal number 1e400 into Go value of type float64`; Boost.JSON
// made it an infinity, which decoding then called a type error). The
// literal as written, its line, whatever the kind and field.
TEST(Codec, JsonNumberBeyondFloat64IsRefusedAtReading) {
  for (const char* lit : {"1e400", "-1e400", "1.5E+309"}) {
    SCOPED_TRACE(lit);
    const std::string text = std::string("{\"apiVersion\": \"apps/v1\", \"kind\": \"DaemonSet\",\n") +
                             "\"spec\": {\"revisionHistoryLimit\": " + lit + "}}\n";
    try {
      core::read_documents(text, "ds.json");
      ADD_FAILURE() << "read";
    } catch (const core::InputError& e) {
      EXPECT_EQ(e.what(),
                "ds.json:2: json: cannot unmarshal number " + std::string(lit) + " into Go value of type float64");
    }
  }
  // An underflow is 0 (strconv.ParseFloat: no error); 1e308 fits.
  auto docs = core::read_documents(R"({"a": 1e-400, "b": 1e308, "c": "1e400"})", "x.json");
  EXPECT_EQ(docs.at(0).value.at("a"), json::value(0.0));
  EXPECT_EQ(docs.at(0).value.at("c"), json::value("1e400"));
}

// Where the first such number is: its text and field path, strings and keys
// that look like numbers skipped.
TEST(Codec, FirstOutOfRangeNumber) {
  auto n = core::first_out_of_range_number(
      R"({"x\"1e400": "1e400", "spec": {"a": [1, {"b": 2e308}], "c": 1e400}, "d": -1e999})");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->literal, "2e308");
  EXPECT_EQ(n->field, "spec.a[1].b");
  n = core::first_out_of_range_number(R"([{"op": "add", "path": "/a", "value": {"b": [0, -1e400]}}])");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->literal, "-1e400");
  EXPECT_EQ(n->field, "[0].value.b[1]");
  EXPECT_FALSE(core::first_out_of_range_number(R"({"a": 1e308, "b": -1e-400, "c": 123456789012345678901234567890})"));
}

// The number forms of go-yaml v2's resolve table are the regular
// expressions of resolve.go; gpuops scans them. Every plain scalar of up to
// four characters over the characters those expressions read resolves as
// the expressions say (int, hex, octal, float or a string).
TEST(Codec, Yaml11NumberFormsAreResolveGosExpressions) {
  const std::regex int_re(R"([-+]?(0|[1-9][0-9_]*))"), hex_re(R"([-+]?0x[0-9a-fA-F_]+)"), oct_re(R"([-+]?0[0-7_]+)"),
      float_re(R"([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?)");
  const std::string alphabet = "0178x.eE_-+a";  // E is also a hex digit
  std::vector<std::string> scalars;
  std::function<void(std::string)> grow = [&](std::string s) {
    if (!s.empty()) scalars.push_back(s);
    if (s.size() == 4) return;
    for (char c : alphabet) grow(s + c);
  };
  grow("");
  // Some are no plain scalar in YAML (a lone "-" starts a sequence): those
  // are refused or read as something else, and are not numbers either.
  auto resolve = [](const std::string& scalar) -> std::optional<json::value> {
    try {
      auto docs = core::read_documents("k: " + scalar + "\n", "x.yaml");
      if (docs.empty() || !docs[0].value.is_object()) return std::nullopt;
      return docs[0].value.as_object().at("k");
    } catch (const core::InputError&) {
      return std::nullopt;
    }
  };
  size_t numbers = 0;
  for (const auto& sc : scalars) {
    auto v = resolve(sc);
    if (!v) continue;
    bool number_form = std::regex_match(sc, int_re) || std::regex_match(sc, hex_re) || std::regex_match(sc, oct_re) ||
                       std::regex_match(sc, float_re);
    // A scalar of a number form is a number, or stays a string only when the
    // number does not parse (a float past float64, a hex of only '_').
    if (number_form) {
      ++numbers;
      if (!v->is_number()) {
        EXPECT_EQ(*v, json::value(sc));
      }
    } else {
      EXPECT_FALSE(v->is_number()) << sc << " -> " << json::serialize(*v);
    }
  }
  EXPECT_GT(numbers, 1000u);
}

// Found by a hostile-input run: a plain scalar of some 26,000 digits or more
// overflowed std::regex's recursion (SIGSEGV) in every YAML reader. It is a
// number past float64, so a string, as go-yaml keeps it.
TEST(Codec, AVeryLongPlainNumberIsReadNotACrash) {
  for (const std::string& scalar :
       {std::string(30000, '1'), "0x" + std::string(30000, 'f'), "." + std::string(30000, '1'),
        std::string(30000, '1') + "abc", std::string(200000, '7')}) {
    auto docs = core::read_documents("k: " + scalar + "\n", "x.yaml");
    ASSERT_EQ(docs.size(), 1u);
    const json::value& v = docs[0].value.as_object().at("k");
    if (scalar[0] == '.') {
      EXPECT_TRUE(v.is_double()) << scalar.substr(0, 10);  // 0.111...: a float
    } else {
      EXPECT_EQ(v, json::value(scalar)) << scalar.substr(0, 10);
    }
  }
}

// encoding/json refuses a number outside its Go field's type: an int32
// field (minReadySeconds, a status counter, an IntOrString's IntVal) given
// 2147483648 is a 400, not a value cast and wrapped to a negative one (a
// hostile-input run found maxUnavailable: 2147483648 accepted as -2^31).
TEST(Codec, NumbersPastTheirGoTypeAreRefused) {
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

// A quantity written as an unquoted number far out of range decodes as
// upstream's would: 1e400 stays the string "1e400", a valid (huge) quantity.
TEST(Codec, UnquotedExtremeQuantities) {
  auto big =
      core::decode_daemonset(core::read_documents(replace(kDs, "memory: 512Mi", "memory: 1e400"), "ds.yaml").at(0));
  EXPECT_GT(big.template_.spec.containers[0].requests.at("memory"), core::Quantity::parse("1Ei"));
  auto tiny = core::decode_daemonset(
      core::read_documents(replace(kDs, "memory: 512Mi", "memory: \"1e-400\""), "ds.yaml").at(0));
  EXPECT_EQ(tiny.template_.spec.containers[0].requests.at("memory").nanos(), 1);
}

TEST(Codec, MultiDocumentYamlAndLines) {
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

TEST(Codec, ListIsExpanded) {
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
  EXPECT_NE(n.message().find(
                "cannot unmarshal number into Go struct field PodSpec.spec.template.spec.nodeSelector of type string"),
            std::string::npos);
}

TEST(Codec, SelectorMustMatchTemplateLabelsIsThe422) {
  auto e = decode_error(replace(kDs, "      app: nvidia-driver-daemonset\n  template", "      app: other\n  template"));
  EXPECT_EQ(e.http_status, 422);
  EXPECT_EQ(e.field(), "spec.template.metadata.labels");
  EXPECT_EQ(e.line(), 14);
  EXPECT_EQ(e.message(),
            "DaemonSet.apps \"nvidia-driver-daemonset\" is invalid: spec.template.metadata.labels: Invalid value: "
            "{\"app\":\"nvidia-driver-daemonset\"}: `selector` does not match template `labels`");
}

TEST(Codec, EmptySelectorIsInvalid) {
  auto e = decode_error(
      replace(kDs, "    matchLabels:\n      app: nvidia-driver-daemonset\n  template", "    {}\n  template"));
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

// ValidateObjectMeta and validateContainerCommon: a DaemonSet's and a Node's
// name is a DNS-1123 subdomain, a Namespace's and a container's a DNS-1123
// label (the API's 422, with the field and the line).
TEST(Codec, InvalidNamesAreThe422) {
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
TEST(Codec, ResourceRequirementsAreValidated) {
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
  EXPECT_EQ(e.message(),
            "no matches for kind \"DaemonSet\" in version \"extensions/v1beta1\" (extensions/v1beta1 "
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

TEST(Codec, WrongShapes) {
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

// time.Parse(time.RFC3339, s), as metav1.Time decodes: the rules and the
// expected instants are worked out from Go's time package.
TEST(Codec, TimesFollowGoRfc3339Parsing) {
  auto ms = [](const std::string& s) { return core::parse_time(s).time_since_epoch().count(); };
  // 2024-01-01 is 19,723 days after the epoch; + 31 (January) + 28 = 2024-02-29.
  EXPECT_EQ(ms("2024-02-29T00:00:00Z"), 19782LL * 86400 * 1000);
  EXPECT_EQ(ms("2000-02-29T00:00:00Z"), 951782400000LL);  // 400-year leap
  EXPECT_EQ(ms("0000-01-01T00:00:00Z"), -62167219200000LL);
  EXPECT_EQ(ms("9999-12-31T23:59:59Z"), 253402300799000LL);
  // Fractions: '.' or ',' then any number of digits, kept to the millisecond.
  EXPECT_EQ(ms("1970-01-01T00:00:00.123456789Z"), 123);
  EXPECT_EQ(ms("1970-01-01T00:00:00.1234567891234Z"), 123);
  EXPECT_EQ(ms("1970-01-01T00:00:00,5Z"), 500);
  EXPECT_EQ(ms("1970-01-01T00:00:00.05Z"), 50);
  // Offsets: the local time minus the offset; Go accepts hh <= 24, mm <= 60.
  EXPECT_EQ(ms("1970-01-01T00:00:00-01:30"), 5400 * 1000);
  EXPECT_EQ(ms("1970-01-02T00:00:00+24:00"), 0);
  EXPECT_EQ(ms("1970-01-01T01:00:00+00:60"), 0);
  EXPECT_EQ(ms("1970-01-01T00:00:00.250+00:00"), 250);
  // The layout parser reads the hour ("15") as one or two digits.
  EXPECT_EQ(ms("1970-01-01T1:00:00Z"), 3600 * 1000);
  for (const char* bad : {"",
                          "yesterday",
                          "2026-11-20",
                          "2026-11-20T08:00:00",  // no zone
                          "2026-11-20T08:00:00z",
                          "2026-11-20t08:00:00Z",  // lower case
                          "2026-11-20 08:00:00Z",
                          "2026-11-20T08:00:00 Z",  // spaces
                          "2023-02-29T00:00:00Z",
                          "2100-02-29T00:00:00Z",  // not leap years
                          "2026-04-31T00:00:00Z",
                          "2026-13-01T00:00:00Z",
                          "2026-00-01T00:00:00Z",
                          "2026-11-00T00:00:00Z",
                          "2026-1-20T08:00:00Z",
                          "2026-11-2T08:00:00Z",
                          "26-11-20T08:00:00Z",
                          "+2026-11-20T08:00:00Z",
                          "12026-11-20T08:00:00Z",
                          "2026-11-20T24:00:00Z",
                          "2026-11-20T08:60:00Z",
                          "2026-11-20T08:00:60Z",  // no leap second
                          "2026-11-20T08:0:00Z",
                          "2026-11-20T08:00:0Z",
                          "2026-11-20T123:00:00Z",
                          "2026-11-20T08:00:00.Z",
                          "2026-11-20T08:00:00.5",
                          "2026-11-20T08:00:00.5.5Z",
                          "2026-11-20T08:00:00+25:00",
                          "2026-11-20T08:00:00+00:61",
                          "2026-11-20T08:00:00+0100",
                          "2026-11-20T08:00:00+01",
                          "2026-11-20T08:00:00*01:00",
                          "2026-11-20T08:00:00+1:00",
                          "2026-11-20T08:00:00ZZ",
                          "2026-11-20T08:00:00+01:00Z",
                          "2026-11-20T08:00:00Z "}) {
    EXPECT_THROW(core::parse_time(bad), std::invalid_argument) << bad;
  }
  try {
    core::parse_time("2026-11-20T08:00:00z");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "not an RFC 3339 time: 2026-11-20T08:00:00z");
  }
}

// IsQualifiedName and IsValidLabelValue (apimachinery/pkg/util/validation).
TEST(Codec, LabelValidationEdges) {
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

// Requirement::op is an enum; an operator the enum does not name (not
// validated for a DaemonSet's selector) is kept as written and written back.
TEST(Codec, SelectorOperatorsRoundTrip) {
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

TEST(Codec, NodeTaintEffectIsRequiredAndEnumerated) {
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

TEST(Codec, NodeTaintKeyIsAQualifiedName) {
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

TEST(Codec, NodeTaintsAreUniqueByKeyAndEffect) {
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
TEST(Codec, AnnotationsOver256KiBAreTooLong) {
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
TEST(Codec, NamespaceOfANamespacedKindIsADns1123Label) {
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

TEST(Codec, NamespaceOfAClusterScopedKindIsDropped) {
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

// lint's kinds: the four decode_object handles and the GPU Operator's two
// custom resources, at the versions their CRDs serve; their metadata as
// apiextensions-apiserver checks a custom resource's.
TEST(Codec, DecodeManifestTakesTheOperatorsResources) {
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

// A template told from a manifest (core/codec/templates.h): a Go action outside a
// comment line; the operator's placeholder in any string, with its line.
TEST(Codec, TemplatesAreToldFromManifests) {
  EXPECT_EQ(core::template_action_line("a: 1\n# {{ not this }}\n  b: {{ .Values.b }}\n"), 3);
  EXPECT_EQ(core::template_action_line("{{- if .Values.x }}\n"), 1);
  EXPECT_EQ(core::template_action_line("a: '{{'\nb: '}}'\n"), 0);
  EXPECT_EQ(core::template_action_line(""), 0);
  // Strings, not structure: quoted, a plain scalar's text, a block scalar's.
  EXPECT_EQ(core::template_action_line("args: [\"--format={{.ID}}\", '{{ it''s }}']\nx: --f={{.ID}}\ny: a-{{ b }}\n"
                                       "d: |\n  {{ $labels.node }}\n\n  more {{ x }}\ne: 1 # {{ c }}\n"),
            0);
  EXPECT_EQ(core::template_action_line("d: >-\n  {{ x }}\nname: {{ .Release.Name }}\n"), 3);
  EXPECT_EQ(core::template_action_line("list:\n- {{ .X }}\n"), 2);
  EXPECT_EQ(core::template_action_line("m: [a, {{ .X }}]\n"), 1);
  auto docs = core::read_documents(
      "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n"
      "      - name: c\n        image: \"FILLED BY THE OPERATOR\"\n",
      "asset.yaml");
  EXPECT_EQ(core::operator_placeholder_line(docs.at(0)), 10);
  EXPECT_EQ(core::operator_placeholder_line(core::read_documents(kDs, "d.yaml").at(0)), -1);
  EXPECT_EQ(
      core::operator_placeholder_line(core::read_documents(R"({"a":["FILLED BY THE OPERATOR"]})", "a.json").at(0)), 0);
  EXPECT_EQ(std::string(core::go_template_error("t.yaml", 3).what()),
            "t.yaml:3: this is a template (Helm/Go \"{{ }}\"), not a manifest: render it first (helm template ...)");
}

// Every expected text is what go1.26's strconv.Quote returns for the same
// bytes (a Go program printing strconv.Quote(s)): what the API server's %q
// shows in a field error's value.
TEST(Codec, QuotesAsGoStrconvQuote) {
  using core::go_quote;
  EXPECT_EQ(go_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(go_quote("\a\b\f\v\n\r\t"), "\"\\a\\b\\f\\v\\n\\r\\t\"");
  EXPECT_EQ(go_quote("\x01\x1b\x7f"), "\"\\x01\\x1b\\x7f\"");
  EXPECT_EQ(go_quote("a\u2028b"), "\"a\\u2028b\"");      // line separator
  EXPECT_EQ(go_quote("\u202e"), "\"\\u202e\"");          // right-to-left override
  EXPECT_EQ(go_quote("\u00a0"), "\"\\u00a0\"");          // no-break space
  EXPECT_EQ(go_quote("\u3000"), "\"\\u3000\"");          // ideographic space
  EXPECT_EQ(go_quote("\u00ad"), "\"\\u00ad\"");          // soft hyphen
  EXPECT_EQ(go_quote("\u0085"), "\"\\u0085\"");          // C1 control
  EXPECT_EQ(go_quote("\ufeff"), "\"\\ufeff\"");          // byte order mark
  EXPECT_EQ(go_quote("\ue000"), "\"\\ue000\"");          // private use
  EXPECT_EQ(go_quote("\uffff"), "\"\\uffff\"");          // noncharacter
  EXPECT_EQ(go_quote("\u0378"), "\"\\u0378\"");          // unassigned
  EXPECT_EQ(go_quote("\u1f7f"), "\"\\u1f7f\"");          // unassigned
  EXPECT_EQ(go_quote("\U000E0001"), "\"\\U000e0001\"");  // language tag
  EXPECT_EQ(go_quote("\U0010FFFF"), "\"\\U0010ffff\"");
  // Printable: kept as they are, a literal U+FFFD too.
  EXPECT_EQ(go_quote("é"), "\"é\"");
  EXPECT_EQ(go_quote("\U0001F600"), "\"\U0001F600\"");
  EXPECT_EQ(go_quote("\ufffd"), "\"\ufffd\"");
  // Not UTF-8, byte by byte: a lone byte, a sequence cut short, an overlong
  // form, an encoded surrogate, past U+10FFFF.
  EXPECT_EQ(go_quote("\xff"), "\"\\xff\"");
  EXPECT_EQ(go_quote("\xe2\x80"), "\"\\xe2\\x80\"");
  EXPECT_EQ(go_quote("\xc0\xaf"), "\"\\xc0\\xaf\"");
  EXPECT_EQ(go_quote("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");
  EXPECT_EQ(go_quote("\xf4\x90\x80\x80"), "\"\\xf4\\x90\\x80\\x80\"");
}

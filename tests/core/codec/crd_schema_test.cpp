// A ClusterPolicy's spec judged by the CRD's structural schema
// (core/codec/crd_schema.h). Every expected message is what a v1.37.2 API server
// with the GPU Operator's ClusterPolicy CRD (v25.3.4, applied from the
// module scripts/operator-build.sh fetches) answered `kubectl patch
// clusterpolicy cluster-policy --type merge -p PATCH` with, read from the
// Status body (`kubectl -v=9`), measured 2026-12-05 with scripts/cluster-up.sh.
// The fields these cases touch have the same facts in v25.3.4 and in the
// v26.7.0 schema gpuops carries.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <string>
#include <vector>

#include "core/codec/crd_schema.h"

namespace gpuops {
namespace {

namespace json = boost::json;

// RFC 7386 merge patch, as kubectl patch --type merge applies it.
void merge(json::object& target, const json::object& patch) {
  for (const auto& [k, v] : patch) {
    if (v.is_null()) {
      target.erase(k);
    } else if (v.is_object() && target.contains(k) && target.at(k).is_object()) {
      merge(target.at(k).as_object(), v.as_object());
    } else if (v.is_object()) {
      json::object fresh;
      merge(fresh, v.as_object());
      target[k] = std::move(fresh);
    } else {
      target[k] = v;
    }
  }
}

// The stored policy (every required spec field, empty) after `patch`.
json::object patched(const std::string& patch) {
  json::object cp = json::parse(R"({"apiVersion":"nvidia.com/v1","kind":"ClusterPolicy",
    "metadata":{"name":"cluster-policy"},"spec":{"daemonsets":{},"dcgm":{},"dcgmExporter":{},"devicePlugin":{},
    "driver":{},"gfd":{},"nodeStatusExporter":{},"operator":{},"toolkit":{}}})")
                        .as_object();
  json::parse_options deep;
  deep.max_depth = 10000;
  merge(cp, json::parse(patch, {}, deep).as_object());
  return cp;
}

struct Answer {
  std::string message;              // Status.message
  std::vector<std::string> causes;  // "field|reason|message" of Status.details.causes
};

// What the API server answers the patch with; an empty message when it
// takes it.
Answer answer(const std::string& patch) {
  try {
    core::validate_cluster_policy_spec("cluster-policy", patched(patch));
  } catch (const core::InputError& e) {
    EXPECT_EQ(e.http_status, 422);
    Answer a;
    std::string what = e.what();
    a.message = what.substr(what.find("ClusterPolicy.nvidia.com"));
    for (const auto& c : e.causes) a.causes.push_back(c.field + "|" + c.reason + "|" + c.message);
    return a;
  }
  return {};
}

const char* kPrefix = "ClusterPolicy.nvidia.com \"cluster-policy\" is invalid: ";

TEST(ClusterPolicySchema, TypesOfObjectsBooleansStringsArrays) {
  EXPECT_EQ(answer(R"({"spec":"x"})").message,
            std::string(kPrefix) + R"(spec: Invalid value: "string": spec in body must be of type object: "string")");
  EXPECT_EQ(answer(R"({"spec":[]})").message,
            std::string(kPrefix) + R"(spec: Invalid value: "array": spec in body must be of type object: "array")");
  Answer a = answer(R"({"spec":{"driver":"x"}})");
  EXPECT_EQ(a.message,
            std::string(kPrefix) +
                R"(spec.driver: Invalid value: "string": spec.driver in body must be of type object: "string")");
  EXPECT_EQ(
      a.causes,
      (std::vector<std::string>{
          R"(spec.driver|FieldValueTypeInvalid|Invalid value: "string": spec.driver in body must be of type object: "string")"}));
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"enabled":"yes"}}})").message,
      std::string(kPrefix) +
          R"(spec.driver.enabled: Invalid value: "string": spec.driver.enabled in body must be of type boolean: "string")");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"repository":5}}})").message,
      std::string(kPrefix) +
          R"(spec.driver.repository: Invalid value: "integer": spec.driver.repository in body must be of type string: "integer")");
  EXPECT_EQ(answer(R"({"spec":{"driver":{"env":"x"}}})").message,
            std::string(kPrefix) +
                R"(spec.driver.env: Invalid value: "string": spec.driver.env in body must be of type array: "string")");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"env":[5]}}})").message,
      std::string(kPrefix) +
          R"(spec.driver.env[0]: Invalid value: "integer": spec.driver.env[0] in body must be of type object: "integer")");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"env":[{"name":5}]}}})").message,
      std::string(kPrefix) +
          R"(spec.driver.env[0].name: Invalid value: "integer": spec.driver.env[0].name in body must be of type string: "integer")");
  EXPECT_EQ(
      answer(R"({"spec":{"daemonsets":{"labels":{"a":5}}}})").message,
      std::string(kPrefix) +
          R"(spec.daemonsets.labels.a: Invalid value: "integer": spec.daemonsets.labels.a in body must be of type string: "integer")");
  EXPECT_EQ(
      answer(R"({"spec":{"daemonsets":{"tolerations":[{"tolerationSeconds":"a"}]}}})").message,
      std::string(kPrefix) +
          R"(spec.daemonsets.tolerations[0].tolerationSeconds: Invalid value: "string": spec.daemonsets.tolerations[0].tolerationSeconds in body must be of type integer: "string")");
}

TEST(ClusterPolicySchema, EnumsAndMinimums) {
  Answer a = answer(R"({"spec":{"mig":{"strategy":"bogus"}}})");
  EXPECT_EQ(a.message,
            std::string(kPrefix) +
                R"(spec.mig.strategy: Unsupported value: "bogus": supported values: "none", "single", "mixed")");
  EXPECT_EQ(
      a.causes,
      (std::vector<std::string>{
          R"(spec.mig.strategy|FieldValueNotSupported|Unsupported value: "bogus": supported values: "none", "single", "mixed")"}));
  // The wrong type and the enum, both.
  EXPECT_EQ(
      answer(R"({"spec":{"mig":{"strategy":5}}})").message,
      std::string(kPrefix) +
          R"([spec.mig.strategy: Invalid value: "integer": spec.mig.strategy in body must be of type string: "integer", spec.mig.strategy: Unsupported value: 5: supported values: "none", "single", "mixed"])");
  EXPECT_EQ(
      answer(R"({"spec":{"daemonsets":{"updateStrategy":"Bogus"}}})").message,
      std::string(kPrefix) +
          R"(spec.daemonsets.updateStrategy: Unsupported value: "Bogus": supported values: "RollingUpdate", "OnDelete")");
  a = answer(R"({"spec":{"driver":{"startupProbe":{"periodSeconds":0}}}})");
  EXPECT_EQ(
      a.message,
      std::string(kPrefix) +
          R"(spec.driver.startupProbe.periodSeconds: Invalid value: 0: spec.driver.startupProbe.periodSeconds in body should be greater than or equal to 1)");
  EXPECT_EQ(a.causes[0].substr(0, a.causes[0].find('|', a.causes[0].find('|') + 1)),
            "spec.driver.startupProbe.periodSeconds|FieldValueInvalid");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"upgradePolicy":{"maxParallelUpgrades":-1}}}})").message,
      std::string(kPrefix) +
          R"(spec.driver.upgradePolicy.maxParallelUpgrades: Invalid value: -1: spec.driver.upgradePolicy.maxParallelUpgrades in body should be greater than or equal to 0)");
}

TEST(ClusterPolicySchema, IntegersFormatsAndIntOrString) {
  // 2.0 is an integer; 1.5 and "2" are not.
  EXPECT_EQ(answer(R"({"spec":{"driver":{"upgradePolicy":{"maxParallelUpgrades":2.0}}}})").message, "");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"upgradePolicy":{"maxParallelUpgrades":"2"}}}})").message,
      std::string(kPrefix) +
          R"(spec.driver.upgradePolicy.maxParallelUpgrades: Invalid value: "string": spec.driver.upgradePolicy.maxParallelUpgrades in body must be of type integer: "string")");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"upgradePolicy":{"maxParallelUpgrades":1.5}}}})").causes,
      (std::vector<std::string>{
          R"(spec.driver.upgradePolicy.maxParallelUpgrades|FieldValueTypeInvalid|Invalid value: "number": spec.driver.upgradePolicy.maxParallelUpgrades in body must be of type integer: "number")",
          R"(<nil>|FieldValueInvalid|Invalid value: "": Checked value must be of type integer (default format) in spec.driver.upgradePolicy.maxParallelUpgrades)"}));
  EXPECT_EQ(
      answer(R"({"spec":{"dcgm":{"hostPort":99999999999}}})").message,
      std::string(kPrefix) +
          R"(<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.dcgm.hostPort)");
  EXPECT_EQ(answer(R"({"spec":{"driver":{"upgradePolicy":{"maxUnavailable":"25%"}}}})").message, "");
  EXPECT_EQ(answer(R"({"spec":{"driver":{"upgradePolicy":{"maxUnavailable":3}}}})").message, "");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"upgradePolicy":{"maxUnavailable":1.5}}}})").message,
      std::string(kPrefix) +
          R"([spec.driver.upgradePolicy.maxUnavailable: Invalid value: "number": spec.driver.upgradePolicy.maxUnavailable in body must be of type integer,string: "number", <nil>: Invalid value: "": "spec.driver.upgradePolicy.maxUnavailable" must validate at least one schema (anyOf), spec.driver.upgradePolicy.maxUnavailable: Invalid value: "number": spec.driver.upgradePolicy.maxUnavailable in body must be of type integer: "number", <nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.driver.upgradePolicy.maxUnavailable])");
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"resources":{"limits":{"cpu":true}}}}})").causes,
      (std::vector<std::string>{
          R"(spec.driver.resources.limits.cpu|FieldValueTypeInvalid|Invalid value: "boolean": spec.driver.resources.limits.cpu in body must be of type integer,string: "boolean")",
          R"(<nil>|FieldValueInvalid|Invalid value: "": "spec.driver.resources.limits.cpu" must validate at least one schema (anyOf))",
          R"(spec.driver.resources.limits.cpu|FieldValueTypeInvalid|Invalid value: "boolean": spec.driver.resources.limits.cpu in body must be of type integer: "boolean")"}));
}

// The CRDs' patterns, each value as the API server took it or refused it
// ("should match '<pattern>'").
TEST(ClusterPolicySchema, Patterns) {
  const std::string quantity =
      R"(^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$)";
  for (const char* ok : {"1.", ".5", "1.5e3", "5Ki", "1e3.5", "+1E+2", "1Ei", "1.5Gi", "+.5e-3"})
    EXPECT_EQ(answer(R"({"spec":{"driver":{"resources":{"limits":{"cpu":")" + std::string(ok) + "\"}}}}}").message, "")
        << ok;
  for (const char* bad : {"5ki", "-.", "1mi", "abc", "1e", ""})
    EXPECT_EQ(answer(R"({"spec":{"driver":{"resources":{"limits":{"cpu":")" + std::string(bad) + "\"}}}}}").message,
              std::string(kPrefix) + "spec.driver.resources.limits.cpu: Invalid value: \"" + bad +
                  "\": spec.driver.resources.limits.cpu in body should match '" + quantity + "'")
        << bad;
  // Not anchored: one letter, digit or '-' anywhere will do.
  EXPECT_EQ(answer(R"({"spec":{"driver":{"image":"a"}}})").message, "");
  for (const char* bad : {"...", "", "é"})
    EXPECT_EQ(answer(R"({"spec":{"driver":{"image":")" + std::string(bad) + "\"}}}").message,
              std::string(kPrefix) + "spec.driver.image: Invalid value: \"" + bad +
                  "\": spec.driver.image in body should match '[a-zA-Z0-9\\-]+'")
        << bad;
  const std::string interval = "{\"spec\":{\"dcgmExporter\":{\"serviceMonitor\":{\"interval\":\"";
  for (const char* ok : {"5ms", "", "0", "1y2w3d4h5m6s7ms"})
    EXPECT_EQ(answer(interval + ok + "\"}}}}").message, "") << ok;
  for (const char* bad : {"5s1m", "00", "1h1h", "m"})
    EXPECT_NE(answer(interval + bad + "\"}}}}").message.find("should match '^(0|(([0-9]+)y)?"), std::string::npos)
        << bad;
}

// JSON numbers as the API server decodes them: an int64 when the text is
// an integer that fits, else a float64, an integer only within
// ±(2^53 - 1); the formats' own checks; float64 values printed as Go's %v.
TEST(ClusterPolicySchema, NumbersAsGoDecodesThem) {
  const std::string ts = "spec.daemonsets.tolerations[0].tolerationSeconds";
  for (const char* v : {"9223372036854775808", "1e19", "-9223372036854775809", "1.5"})
    EXPECT_EQ(
        answer(R"({"spec":{"daemonsets":{"tolerations":[{"key":"a","tolerationSeconds":)" + std::string(v) + "}]}}}")
            .message,
        std::string(kPrefix) + "[" + ts + ": Invalid value: \"float64\": " + ts +
            " in body must be of type int64: \"float64\", <nil>: Invalid value: \"\": Checked value must be of "
            "type integer with format int64 in " +
            ts + "]")
        << v;
  EXPECT_EQ(answer(R"({"spec":{"daemonsets":{"tolerations":[{"key":"a","tolerationSeconds":9223372036854775807}]}}})")
                .message,
            "");
  const std::string hp = "spec.dcgm.hostPort";
  for (const char* v : {"1e19", "1.5"})
    EXPECT_EQ(answer(R"({"spec":{"dcgm":{"hostPort":)" + std::string(v) + "}}}").message,
              std::string(kPrefix) + "[" + hp + ": Invalid value: \"float64\": " + hp +
                  " in body must be of type int32: \"float64\", <nil>: Invalid value: \"\": Checked value must be of "
                  "type integer with format int32 in " +
                  hp + "]")
        << v;
  EXPECT_EQ(answer(R"({"spec":{"dcgm":{"hostPort":2.0}}})").message, "");
  EXPECT_EQ(answer(R"({"spec":{"dcgm":{"hostPort":2147483648}}})").message,
            std::string(kPrefix) +
                "<nil>: Invalid value: \"\": Checked value must be of type integer with format int32 in " + hp);
  const std::string mp = "spec.driver.upgradePolicy.maxParallelUpgrades";
  const std::string not_integer = mp + ": Invalid value: \"number\": " + mp +
                                  " in body must be of type integer: \"number\", <nil>: Invalid value: \"\": Checked "
                                  "value must be of type integer (default format) in " +
                                  mp;
  auto mpu = [&](const std::string& v) {
    return answer(R"({"spec":{"driver":{"upgradePolicy":{"maxParallelUpgrades":)" + v + "}}}}").message;
  };
  EXPECT_EQ(mpu("1e19"), std::string(kPrefix) + "[" + not_integer + "]");
  EXPECT_EQ(mpu("9223372036854775808"), std::string(kPrefix) + "[" + not_integer + "]");
  EXPECT_EQ(mpu("9007199254740992.0"), std::string(kPrefix) + "[" + not_integer + "]");
  EXPECT_EQ(mpu("-9223372036854775809"), std::string(kPrefix) + "[" + not_integer + ", " + mp +
                                             ": Invalid value: -9.223372036854776e+18: " + mp +
                                             " in body should be greater than or equal to 0]");
  EXPECT_EQ(mpu("-1.5"), std::string(kPrefix) + "[" + not_integer + ", " + mp + ": Invalid value: -1.5: " + mp +
                             " in body should be greater than or equal to 0]");
  EXPECT_EQ(mpu("-1e300"), std::string(kPrefix) + "[" + not_integer + ", " + mp + ": Invalid value: -1e+300: " + mp +
                               " in body should be greater than or equal to 0]");
  EXPECT_EQ(mpu("-9007199254740993"), std::string(kPrefix) + mp + ": Invalid value: -9007199254740993: " + mp +
                                          " in body should be greater than or equal to 0");
  // A null item of an array is not pruned: it is of type "null".
  EXPECT_EQ(
      answer(R"({"spec":{"driver":{"env":[null,{"name":"a"}]}}})").message,
      std::string(kPrefix) +
          R"(spec.driver.env[0]: Invalid value: "null": spec.driver.env[0] in body must be of type object: "null")");
}

TEST(ClusterPolicySchema, RequiredUnknownAndNull) {
  // A required field removed; the property errors come before the
  // required ones, which follow the CRD's order.
  EXPECT_EQ(answer(R"({"spec":{"driver":null}})").message, std::string(kPrefix) + "spec.driver: Required value");
  EXPECT_EQ(answer(R"({"spec":{"driver":{"env":[{"value":"a"}]},"toolkit":null}})").message,
            std::string(kPrefix) + "[spec.driver.env[0].name: Required value, spec.toolkit: Required value]");
  // Unknown fields are pruned, not refused (kubectl warns); null is pruned
  // too; a whole spec removed leaves nothing to check.
  EXPECT_EQ(answer(R"({"spec":{"driver":{"enabeld":false}}})").message, "");
  EXPECT_EQ(answer(R"({"spec":{"dcgmExporter":{"enabled":null}}})").message, "");
  EXPECT_EQ(answer(R"({"spec":null})").message, "");
  // A required field with a default is filled before validation.
  EXPECT_EQ(answer(R"({"spec":{"operator":{}}})").message, "");
}

// Whatever the value (deep, wide, of any type), the check ends and only
// names fields: depth is the schema's, not the value's.
TEST(ClusterPolicySchema, AnyValueEnds) {
  std::string deep = "1";
  for (int i = 0; i < 5000; ++i) deep = "{\"a\":" + deep + "}";
  EXPECT_EQ(answer(R"({"spec":{"driver":{"enabeld":)" + deep + "}}}").message, "");
  std::string arr = "[";
  for (int i = 0; i < 5000; ++i) arr += std::string(i ? "," : "") + "[[[1]]]";
  arr += "]";
  EXPECT_NE(answer(R"({"spec":{"driver":{"env":)" + arr + "}}}").message, "");
}

}  // namespace
}  // namespace gpuops

namespace gpuops {
namespace {

// NVIDIADriver (v1alpha1): the schema, then the CRD's CEL rules. Measured
// the same way, 2026-12-05, with v26.7.0's nvidia.com_nvidiadrivers.yaml
// applied: `kubectl create` of `spec: {}` stored default: false,
// driverType: gpu, image: nvcr.io/nvidia/driver, kernelModuleType: auto.
std::string driver_answer(const std::string& spec, const std::string* old_spec = nullptr) {
  auto wrap = [](const std::string& s) {
    return json::parse(R"({"apiVersion":"nvidia.com/v1alpha1","kind":"NVIDIADriver","metadata":{"name":"d"},"spec":)" +
                       s + "}")
        .as_object();
  };
  json::object old = old_spec ? wrap(*old_spec) : json::object();
  try {
    core::validate_nvidia_driver_spec("d", wrap(spec), old_spec ? &old : nullptr);
  } catch (const core::InputError& e) {
    std::string what = e.what();
    std::string out = what.substr(what.find("NVIDIADriver.nvidia.com"));
    for (const auto& c : e.causes) out += "\n" + c.field + "|" + c.reason;
    return out;
  }
  return "";
}

TEST(NVIDIADriverSchema, SchemaThenTheCelRules) {
  const std::string not_checked =
      "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct "
      "the existing errors to complete validation";
  EXPECT_EQ(driver_answer("{}"), "");
  EXPECT_EQ(
      driver_answer(R"({"image":5})"),
      "NVIDIADriver.nvidia.com \"d\" is invalid: [spec.image: Invalid value: \"integer\": spec.image in body must "
      "be of type string: \"integer\", " +
          not_checked + "]\nspec.image|FieldValueTypeInvalid\n<nil>|FieldValueInvalid");
  EXPECT_EQ(driver_answer(R"({"driverType":"bogus"})"),
            "NVIDIADriver.nvidia.com \"d\" is invalid: [spec.driverType: Unsupported value: \"bogus\": supported "
            "values: \"gpu\", \"vgpu\", \"vgpu-host-manager\", " +
                not_checked + "]\nspec.driverType|FieldValueNotSupported\n<nil>|FieldValueInvalid");
  EXPECT_EQ(driver_answer(R"("x")"),
            "NVIDIADriver.nvidia.com \"d\" is invalid: [spec: Invalid value: \"string\": spec in body must be of type "
            "object: \"string\", " +
                not_checked + "]\nspec|FieldValueTypeInvalid\n<nil>|FieldValueInvalid");
  // has(self.default) && self.default ? !has(self.nodeSelector) || size(self.nodeSelector) == 0 : true
  EXPECT_EQ(driver_answer(R"({"default":true,"nodeSelector":{"a":"b"}})"),
            "NVIDIADriver.nvidia.com \"d\" is invalid: spec: Invalid value: default NVIDIADriver must not use "
            "nodeSelector\nspec|FieldValueInvalid");
  EXPECT_EQ(driver_answer(R"({"default":true,"nodeSelector":{}})"), "");
  EXPECT_EQ(driver_answer(R"({"nodeSelector":{"a":"b"}})"), "");
  // self == oldSelf: driverType (defaulted to gpu when left out) and
  // usePrecompiled (only when both have it).
  const std::string stored = "{}";
  EXPECT_EQ(driver_answer(R"({"driverType":"vgpu"})", &stored),
            "NVIDIADriver.nvidia.com \"d\" is invalid: spec.driverType: Invalid value: \"vgpu\": driverType is an "
            "immutable field. Please create a new NvidiaDriver resource instead when you want to change this "
            "setting.\nspec.driverType|FieldValueInvalid");
  EXPECT_EQ(driver_answer(R"({"driverType":"gpu"})", &stored), "");
  EXPECT_EQ(driver_answer(R"({"usePrecompiled":true})", &stored), "");
  const std::string precompiled = R"({"usePrecompiled":false})";
  EXPECT_EQ(driver_answer(R"({"usePrecompiled":true})", &precompiled),
            "NVIDIADriver.nvidia.com \"d\" is invalid: spec.usePrecompiled: Invalid value: true: usePrecompiled is an "
            "immutable field. Please create a new NvidiaDriver resource instead when you want to change this "
            "setting.\nspec.usePrecompiled|FieldValueInvalid");
  EXPECT_EQ(driver_answer(R"({})", &precompiled), "");
}

}  // namespace
}  // namespace gpuops

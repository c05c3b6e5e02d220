// core/codec/validate_kinds.cpp: the kinds of core/codec/validate_kinds.h that the core
// and apps API groups serve (Deployment, Service, ServiceAccount), and the
// dispatch to the RBAC (core/codec/validate_rbac.cpp) and Prometheus Operator
// (core/codec/validate_monitoring.cpp) kinds.
#include "core/codec/validate_kinds.h"

#include <boost/json.hpp>

#include <set>
#include <string>
#include <string_view>

#include "core/base/errors.h"
#include "core/codec/codec_internal.h"
#include "core/kube/names.h"

namespace gpuops::core {

namespace json = boost::json;

namespace {

using codec_internal::Decoder;
using codec_internal::get;
using codec_internal::not_supported;
using codec_internal::Path;
using codec_internal::validate_object_meta;

// mirrors ValidateDeployment and ValidateDeploymentSpec
// (k8s.io/kubernetes pkg/apis/apps/validation/validation.go), after the
// defaults of SetDefaults_Deployment (pkg/apis/apps/v1/defaults.go: one
// replica, RollingUpdate 25%/25%, progressDeadlineSeconds 600, the template's
// restartPolicy Always).
void validate_deployment(const Document& doc) {
  Decoder d(doc, "Deployment", "v1", "Deployment.apps");
  const json::object& root = doc.value.as_object();
  const Path top;
  d.known_fields(root, top, {"apiVersion", "kind", "metadata", "spec", "status"});
  validate_object_meta(d, root, validate_dns1123_subdomain, true);
  const Path sp = top.child("spec");
  const json::object* spec = d.object(get(&root, "spec"), sp, "Deployment", "v1.DeploymentSpec");
  const Path selp = sp.child("selector");
  if (!spec) d.invalid(selp, "Required value");
  d.known_fields(*spec, sp,
                 {"replicas", "selector", "template", "strategy", "minReadySeconds", "revisionHistoryLimit", "paused",
                  "progressDeadlineSeconds"});
  auto int32_field = [&](const char* key, int64_t dflt) {
    return d.integer(get(spec, key), sp.child(key), "DeploymentSpec", "int32").value_or(dflt);
  };
  int64_t replicas = int32_field("replicas", 1);
  if (replicas < 0)
    d.invalid(sp.child("replicas"),
              "Invalid value: " + std::to_string(replicas) + ": must be greater than or equal to 0");
  const json::object* sel = d.object(get(spec, "selector"), selp, "DeploymentSpec", "v1.LabelSelector");
  if (!sel) d.invalid(selp, "Required value");
  LabelSelector selector;
  selector.match_labels = d.string_map(get(sel, "matchLabels"), selp.child("matchLabels"), "LabelSelector");
  selector.match_expressions =
      codec_internal::decode_requirements(d, get(sel, "matchExpressions"), selp.child("matchExpressions"),
                                          "LabelSelector", "[]v1.LabelSelectorRequirement");
  codec_internal::validate_selector_not_empty(d, selector, "deployment", selp);

  const Path tp = sp.child("template");
  const Path tmp = tp.child("metadata");
  const Path tsp = tp.child("spec");
  const json::object* tmpl = d.object(get(spec, "template"), tp, "DeploymentSpec", "v1.PodTemplateSpec");
  if (!tmpl) d.invalid(tsp.child("containers"), "Required value");
  Labels labels, annotations;
  if (const json::object* tm = d.object(get(tmpl, "metadata"), tmp, "PodTemplateSpec", "v1.ObjectMeta")) {
    labels = d.string_map(get(tm, "labels"), tmp.child("labels"), "ObjectMeta");
    annotations = d.string_map(get(tm, "annotations"), tmp.child("annotations"), "ObjectMeta");
  }
  const json::object* pod_spec = d.object(get(tmpl, "spec"), tsp, "PodTemplateSpec", "v1.PodSpec");
  PodSpec ps = codec_internal::decode_pod_spec(d, pod_spec, tsp, true);
  codec_internal::validate_meta_labels(d, labels, tmp.child("labels"));
  codec_internal::validate_meta_annotations(d, annotations, tmp.child("annotations"));
  codec_internal::validate_selector_matches_template(d, selector, labels, tmp.child("labels"));
  codec_internal::validate_pod_spec(d, ps, tsp, pod_spec);
  codec_internal::validate_template_restart(d, pod_spec, tsp, "ReplicaSet");

  // ValidateDeploymentStrategy and ValidateRollingUpdateDeployment.
  const Path stp = sp.child("strategy");
  if (const json::object* st = d.object(get(spec, "strategy"), stp, "DeploymentSpec", "v1.DeploymentStrategy")) {
    std::string type = d.string(get(st, "type"), stp.child("type"), "DeploymentStrategy");
    if (type.empty()) type = "RollingUpdate";
    const Path rup = stp.child("rollingUpdate");
    const json::object* ru =
        d.object(get(st, "rollingUpdate"), rup, "DeploymentStrategy", "v1.RollingUpdateDeployment");
    if (type == "Recreate") {
      if (ru) d.invalid(rup, "Forbidden: may not be specified when strategy `type` is 'Recreate'");
    } else if (type != "RollingUpdate") {
      // The whole strategy is the value: an internal type without json tags,
      // rendered as JSON, after SetDefaults_Deployment (a given
      // rollingUpdate gets 25% for what it leaves out).
      json::object value{{"Type", type}, {"RollingUpdate", nullptr}};
      if (ru) {
        auto given = [&](const char* key) -> json::value {
          const json::value* v = get(ru, key);
          return v && !v->is_null() ? *v : json::value("25%");
        };
        value["RollingUpdate"] =
            json::object{{"MaxUnavailable", given("maxUnavailable")}, {"MaxSurge", given("maxSurge")}};
      }
      d.invalid(stp,
                "Unsupported value: " + json::serialize(value) + ": supported values: \"Recreate\", \"RollingUpdate\"");
    } else if (ru) {
      // An IntOrString: a count, or "N%" (ValidatePositiveIntOrPercent,
      // IsNotMoreThan100Percent); the defaults are 25%.
      auto amount = [&](const char* key, bool& zero) {
        const Path kp = rup.child(key);
        const json::value* v = get(ru, key);
        zero = false;
        if (!v || v->is_null()) return;
        if (v->is_int64()) {
          if (v->as_int64() < 0)
            d.invalid(kp, "Invalid value: " + std::to_string(v->as_int64()) + ": must be greater than or equal to 0");
          zero = v->as_int64() == 0;
          return;
        }
        if (!v->is_string()) d.type_error(kp, *v, "RollingUpdateDeployment", "intstr.IntOrString");
        std::string text(v->as_string());
        bool ok = text.size() >= 2 && text.size() <= 10 && text.back() == '%';
        for (size_t i = 0; ok && i + 1 < text.size(); ++i) ok = text[i] >= '0' && text[i] <= '9';
        if (!ok)
          d.invalid(kp, "Invalid value: \"" + text +
                            "\": a valid percent string must be a numeric string followed by "
                            "an ending '%' (e.g. '1%',  or '93%', regex used for validation is "
                            "'[0-9]+%')");
        int percent = std::stoi(text.substr(0, text.size() - 1));
        if (std::string_view(key) == "maxUnavailable" && percent > 100)
          d.invalid(kp, "Invalid value: \"" + text + "\": must not be greater than 100%");
        zero = percent == 0;
      };
      bool unavailable_zero = false, surge_zero = false;
      bool has_unavailable = get(ru, "maxUnavailable") && !get(ru, "maxUnavailable")->is_null();
      bool has_surge = get(ru, "maxSurge") && !get(ru, "maxSurge")->is_null();
      amount("maxUnavailable", unavailable_zero);
      amount("maxSurge", surge_zero);
      if (has_unavailable && unavailable_zero && has_surge && surge_zero)
        d.invalid(rup.child("maxUnavailable"), "Invalid value: " + json::serialize(*get(ru, "maxUnavailable")) +
                                                   ": may not be 0 when `maxSurge` is 0");
    }
  }
  int64_t min_ready = int32_field("minReadySeconds", 0);
  for (auto [key, v] :
       {std::pair{"minReadySeconds", min_ready}, {"revisionHistoryLimit", int32_field("revisionHistoryLimit", 0)}})
    if (v < 0) d.invalid(sp.child(key), "Invalid value: " + std::to_string(v) + ": must be greater than or equal to 0");
  int64_t progress = int32_field("progressDeadlineSeconds", 600);
  if (progress < 0)
    d.invalid(sp.child("progressDeadlineSeconds"),
              "Invalid value: " + std::to_string(progress) + ": must be greater than or equal to 0");
  if (progress <= min_ready)
    d.invalid(sp.child("progressDeadlineSeconds"),
              "Invalid value: " + std::to_string(progress) + ": must be greater than minReadySeconds");
  d.boolean(get(spec, "paused"), sp.child("paused"), "DeploymentSpec");
}

// mirrors ValidateService (k8s.io/kubernetes pkg/apis/core/validation/
// validation.go) for what a manifest sets: the type, the ports
// (validateServicePort) and the selector, after SetDefaults_Service and
// SetDefaults_ServicePort (type ClusterIP, protocol TCP, targetPort = port).
void validate_service(const Document& doc) {
  Decoder d(doc, "Service", "v1", "Service");
  const json::object& root = doc.value.as_object();
  const Path top;
  d.known_fields(root, top, {"apiVersion", "kind", "metadata", "spec", "status"});
  // ValidateServiceName: a DNS-1123 label since RelaxedServiceNameValidation
  // (KEP-5311, on by default in the v1.37 API server; a DNS-1035 label
  // before, which also refused a digit first).
  validate_object_meta(d, root, validate_dns1123_label, true);
  const Path sp = top.child("spec");
  const json::object* spec = d.object(get(&root, "spec"), sp, "Service", "v1.ServiceSpec");
  if (spec)
    d.known_fields(*spec, sp,
                   {"ports",
                    "selector",
                    "clusterIP",
                    "clusterIPs",
                    "type",
                    "externalIPs",
                    "sessionAffinity",
                    "loadBalancerIP",
                    "loadBalancerSourceRanges",
                    "externalName",
                    "externalTrafficPolicy",
                    "healthCheckNodePort",
                    "publishNotReadyAddresses",
                    "sessionAffinityConfig",
                    "ipFamilies",
                    "ipFamilyPolicy",
                    "allocateLoadBalancerNodePorts",
                    "loadBalancerClass",
                    "internalTrafficPolicy",
                    "trafficDistribution"});
  std::string type = d.string(get(spec, "type"), sp.child("type"), "ServiceSpec");
  if (type.empty()) type = "ClusterIP";
  if (type != "ClusterIP" && type != "ExternalName" && type != "LoadBalancer" && type != "NodePort")
    d.invalid(sp.child("type"), not_supported(type, {"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}));
  bool headless = d.string(get(spec, "clusterIP"), sp.child("clusterIP"), "ServiceSpec") == "None";
  const Path pp = sp.child("ports");
  const json::array* ports = d.array(get(spec, "ports"), pp, "ServiceSpec", "[]v1.ServicePort");
  if ((!ports || ports->empty()) && !headless && type != "ExternalName") d.invalid(pp, "Required value");
  std::set<std::string> names;
  for (size_t i = 0; ports && i < ports->size(); ++i) {
    const Path ip = pp.index(i);
    const json::object* port = d.object(&(*ports)[i], ip, "ServiceSpec", "v1.ServicePort");
    if (!port) continue;
    d.known_fields(*port, ip, {"name", "protocol", "appProtocol", "port", "targetPort", "nodePort"});
    std::string name = d.string(get(port, "name"), ip.child("name"), "ServicePort");
    if (ports->size() > 1 && name.empty()) d.invalid(ip.child("name"), "Required value");
    if (!name.empty()) {
      if (std::string e = validate_dns1123_label(name); !e.empty())
        d.invalid(ip.child("name"), "Invalid value: \"" + name + "\": " + e);
      if (!names.insert(name).second) d.invalid(ip.child("name"), "Duplicate value: \"" + name + "\"");
    }
    int64_t number = d.integer(get(port, "port"), ip.child("port"), "ServicePort", "int32").value_or(0);
    if (std::string e = codec_internal::validate_port_number(number); !e.empty())
      d.invalid(ip.child("port"), "Invalid value: " + std::to_string(number) + ": " + e);
    std::string protocol = d.string(get(port, "protocol"), ip.child("protocol"), "ServicePort");
    if (!protocol.empty() && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP")
      d.invalid(ip.child("protocol"), not_supported(protocol, {"SCTP", "TCP", "UDP"}));
    codec_internal::validate_port_num_or_name(d, get(port, "targetPort"), ip.child("targetPort"), "ServicePort");
  }
  Labels selector = d.string_map(get(spec, "selector"), sp.child("selector"), "ServiceSpec");
  codec_internal::validate_meta_labels(d, selector, sp.child("selector"));
}

// mirrors ValidateServiceAccount (pkg/apis/core/validation): the metadata
// (ValidateServiceAccountName = NameIsDNSSubdomain).
void validate_service_account(const Document& doc) {
  Decoder d(doc, "ServiceAccount", "v1", "ServiceAccount");
  const json::object& root = doc.value.as_object();
  const Path top;
  d.known_fields(root, top,
                 {"apiVersion", "kind", "metadata", "secrets", "imagePullSecrets", "automountServiceAccountToken"});
  validate_object_meta(d, root, validate_dns1123_subdomain, true);
  d.boolean(get(&root, "automountServiceAccountToken"), top.child("automountServiceAccountToken"), "ServiceAccount");
}

struct KindRule {
  const char* kind;
  const char* api_version;
  void (*validate)(const Document&);
};

const KindRule kKinds[] = {
    {"Deployment", "apps/v1", validate_deployment},
    {"Service", "v1", validate_service},
    {"ServiceAccount", "v1", validate_service_account},
    {"ClusterRole", "rbac.authorization.k8s.io/v1", codec_internal::validate_cluster_role},
    {"Role", "rbac.authorization.k8s.io/v1", codec_internal::validate_role},
    {"ClusterRoleBinding", "rbac.authorization.k8s.io/v1", codec_internal::validate_cluster_role_binding},
    {"RoleBinding", "rbac.authorization.k8s.io/v1", codec_internal::validate_role_binding},
    {"ServiceMonitor", "monitoring.coreos.com/v1", codec_internal::validate_service_monitor},
    {"PrometheusRule", "monitoring.coreos.com/v1", codec_internal::validate_prometheus_rule},
    {"ValidatingAdmissionPolicy", "admissionregistration.k8s.io/v1",
     codec_internal::validate_validating_admission_policy},
    {"ValidatingAdmissionPolicyBinding", "admissionregistration.k8s.io/v1",
     codec_internal::validate_validating_admission_policy_binding},
};

}  // namespace

std::vector<std::string_view> validated_kinds() {
  std::vector<std::string_view> out;
  for (const auto& k : kKinds) out.push_back(k.kind);
  return out;
}

bool is_validated_kind(std::string_view kind) {
  for (const auto& k : kKinds)
    if (kind == k.kind) return true;
  return false;
}

void validate_kind(const Document& doc) {
  const json::object* o = doc.value.if_object();
  const json::value* kind = o ? o->if_contains("kind") : nullptr;
  const json::value* version = o ? o->if_contains("apiVersion") : nullptr;
  for (const auto& k : kKinds) {
    if (!kind || !kind->is_string() || kind->get_string() != k.kind) continue;
    std::string v = version && version->is_string() ? std::string(version->get_string()) : "";
    if (v.empty())
      throw InputError(doc.file, doc.line_of({"apiVersion"}), "apiVersion", "Object 'apiVersion' is missing");
    if (v != k.api_version)
      throw InputError::with_status(404, doc.file, doc.line_of({"apiVersion"}), "apiVersion",
                                    "no matches for kind \"" + std::string(k.kind) + "\" in version \"" + v + "\"");
    k.validate(doc);
    return;
  }
  throw InputError(doc.file, doc.line_of({"kind"}), "kind", "not a kind of core/codec/validate_kinds.h");
}

}  // namespace gpuops::core

// core/codec/decode.cpp: JSON documents -> typed objects, with the API server's
// errors (core/codec/decode.h).
#include "core/codec/decode.h"

#include <boost/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/base/errors.h"
#include "core/codec/codec_internal.h"
#include "core/codec/crd_schema.h"
#include "core/codec/documents.h"
#include "core/kube/names.h"
#include "core/model/quantity.h"
#include "core/model/rfc3339.h"

namespace gpuops::core {

namespace json = boost::json;

using codec_internal::Decoder;
using codec_internal::json_kind;
using codec_internal::Path;
using codec_internal::validate_meta_annotations;
using codec_internal::validate_meta_labels;
using codec_internal::validate_meta_namespace;
using codec_internal::validate_node_taints;
using codec_internal::validate_pod_spec;

// ---------------------------------------------------------------- decoding

namespace codec_internal {

ObjectMeta decode_meta(Decoder& d, const json::object& root, const Path& root_path) {
  ObjectMeta m;
  Path p = root_path.child("metadata");
  const json::object* o = d.object(get(&root, "metadata"), p, "ObjectMeta", "v1.ObjectMeta");
  if (!o) return m;
  m.name = d.string(get(o, "name"), p.child("name"), "ObjectMeta");
  d.set_name(m.name);
  m.namespace_ = d.string(get(o, "namespace"), p.child("namespace"), "ObjectMeta");
  m.uid = d.string(get(o, "uid"), p.child("uid"), "ObjectMeta");
  m.resource_version = d.string(get(o, "resourceVersion"), p.child("resourceVersion"), "ObjectMeta");
  m.generation = d.integer(get(o, "generation"), p.child("generation"), "ObjectMeta", "int64").value_or(0);
  m.creation_timestamp = d.time(get(o, "creationTimestamp"), p.child("creationTimestamp"), "ObjectMeta");
  m.deletion_timestamp = d.time(get(o, "deletionTimestamp"), p.child("deletionTimestamp"), "ObjectMeta");
  m.deletion_grace_period_seconds =
      d.integer(get(o, "deletionGracePeriodSeconds"), p.child("deletionGracePeriodSeconds"), "ObjectMeta", "int64");
  m.labels = d.string_map(get(o, "labels"), p.child("labels"), "ObjectMeta");
  m.annotations = d.string_map(get(o, "annotations"), p.child("annotations"), "ObjectMeta");
  Path orp = p.child("ownerReferences");
  if (const json::array* refs = d.array(get(o, "ownerReferences"), orp, "ObjectMeta", "[]v1.OwnerReference")) {
    for (size_t i = 0; i < refs->size(); ++i) {
      Path rp = orp.index(i);
      const json::object* r = d.object(&(*refs)[i], rp, "ObjectMeta", "v1.OwnerReference");
      if (!r) continue;
      OwnerReference ref;
      ref.api_version = d.string(get(r, "apiVersion"), rp.child("apiVersion"), "OwnerReference");
      ref.kind = d.string(get(r, "kind"), rp.child("kind"), "OwnerReference");
      ref.name = d.string(get(r, "name"), rp.child("name"), "OwnerReference");
      ref.uid = d.string(get(r, "uid"), rp.child("uid"), "OwnerReference");
      ref.controller = d.boolean(get(r, "controller"), rp.child("controller"), "OwnerReference");
      m.owner_references.push_back(ref);
    }
  }
  Path fp = p.child("finalizers");
  if (const json::array* fs = d.array(get(o, "finalizers"), fp, "ObjectMeta", "[]string"))
    for (size_t i = 0; i < fs->size(); ++i) m.finalizers.push_back(d.string(&(*fs)[i], fp.index(i), "ObjectMeta"));
  return m;
}

// mirrors ValidateObjectMeta (k8s.io/apimachinery pkg/api/validation/
// objectmeta.go): the name required, then `name_rule`'s message, the
// namespace of a namespaced kind, the labels and annotations.
ObjectMeta validate_object_meta(Decoder& d, const json::object& root, std::string (*name_rule)(const std::string&),
                                bool namespaced) {
  const Path top;
  const Path mp = top.child("metadata");
  ObjectMeta m = decode_meta(d, root, top);
  if (m.name.empty()) d.invalid(mp.child("name"), "Required value: name or generateName is required");
  if (std::string e = name_rule(m.name); !e.empty())
    d.invalid(mp.child("name"), "Invalid value: \"" + m.name + "\": " + e);
  m.namespace_ = validate_meta_namespace(d, m.namespace_, namespaced, mp.child("namespace"));
  validate_meta_labels(d, m.labels, mp.child("labels"));
  validate_meta_annotations(d, m.annotations, mp.child("annotations"));
  return m;
}

std::vector<Requirement> decode_requirements(Decoder& d, const json::value* v, const Path& p, const char* st,
                                             const char* type) {
  std::vector<Requirement> out;
  const json::array* a = d.array(v, p, st, type);
  if (!a) return out;
  for (size_t i = 0; i < a->size(); ++i) {
    Path rp = p.index(i);
    const json::object* r = d.object(&(*a)[i], rp, st, type);
    if (!r) continue;
    Requirement req;
    req.key = d.string(get(r, "key"), rp.child("key"), st);
    std::string op = d.string(get(r, "operator"), rp.child("operator"), st);
    req.op = parse_selector_operator(op);
    if (req.op == SelectorOperator::kUnknown) req.unknown_op = std::move(op);
    Path vp = rp.child("values");
    if (const json::array* vals = d.array(get(r, "values"), vp, st, "[]string")) {
      for (size_t j = 0; j < vals->size(); ++j) req.values.push_back(d.string(&(*vals)[j], vp.index(j), st));
    }
    out.push_back(std::move(req));
  }
  return out;
}

std::vector<Taint> decode_taints(Decoder& d, const json::value* v, const Path& p) {
  std::vector<Taint> out;
  const json::array* a = d.array(v, p, "NodeSpec", "[]v1.Taint");
  if (!a) return out;
  for (size_t i = 0; i < a->size(); ++i) {
    Path tp = p.index(i);
    const json::object* t = d.object(&(*a)[i], tp, "NodeSpec", "v1.Taint");
    if (!t) continue;
    Taint taint;
    taint.key = d.string(get(t, "key"), tp.child("key"), "Taint");
    taint.value = d.string(get(t, "value"), tp.child("value"), "Taint");
    taint.effect = d.string(get(t, "effect"), tp.child("effect"), "Taint");
    taint.time_added = d.time(get(t, "timeAdded"), tp.child("timeAdded"), "Taint");
    out.push_back(std::move(taint));
  }
  return out;
}

std::map<std::string, Quantity> decode_resource_list(Decoder& d, const json::value* v, const Path& p, const char* st) {
  std::map<std::string, Quantity> out;
  const json::object* o = d.object(v, p, st, "v1.ResourceList");
  if (!o) return out;
  for (const auto& kv : *o) {
    std::string k(kv.key());
    out[k] = d.quantity(&kv.value(), p.map_key(k), st);
  }
  return out;
}

std::vector<Container> decode_containers(Decoder& d, const json::value* v, const Path& p) {
  std::vector<Container> out;
  const json::array* a = d.array(v, p, "PodSpec", "[]v1.Container");
  if (!a) return out;
  for (size_t i = 0; i < a->size(); ++i) {
    Path cp = p.index(i);
    const json::object* c = d.object(&(*a)[i], cp, "PodSpec", "v1.Container");
    if (!c) continue;
    Container ct;
    ct.name = d.string(get(c, "name"), cp.child("name"), "Container");
    ct.image = d.string(get(c, "image"), cp.child("image"), "Container");
    Path rp = cp.child("resources");
    if (const json::object* r = d.object(get(c, "resources"), rp, "Container", "v1.ResourceRequirements")) {
      ct.requests = decode_resource_list(d, get(r, "requests"), rp.child("requests"), "ResourceRequirements");
      ct.limits = decode_resource_list(d, get(r, "limits"), rp.child("limits"), "ResourceRequirements");
    }
    out.push_back(std::move(ct));
  }
  return out;
}

PodSpec decode_pod_spec(Decoder& d, const json::object* o, const Path& p, bool strict) {
  PodSpec s;
  if (!o) return s;
  if (strict) {
    d.known_fields(*o, p,
                   {"activeDeadlineSeconds",
                    "affinity",
                    "automountServiceAccountToken",
                    "containers",
                    "dnsConfig",
                    "dnsPolicy",
                    "enableServiceLinks",
                    "ephemeralContainers",
                    "hostAliases",
                    "hostIPC",
                    "hostNetwork",
                    "hostPID",
                    "hostUsers",
                    "hostname",
                    "hostnameOverride",
                    "imagePullSecrets",
                    "initContainers",
                    "nodeName",
                    "nodeSelector",
                    "os",
                    "overhead",
                    "preemptionPolicy",
                    "priority",
                    "priorityClassName",
                    "readinessGates",
                    "resourceClaims",
                    "resources",
                    "restartPolicy",
                    "runtimeClassName",
                    "schedulerName",
                    "schedulingGates",
                    "securityContext",
                    "serviceAccount",
                    "serviceAccountName",
                    "setHostnameAsFQDN",
                    "shareProcessNamespace",
                    "subdomain",
                    "terminationGracePeriodSeconds",
                    "tolerations",
                    "topologySpreadConstraints",
                    "volumes"});
  }
  s.node_name = d.string(get(o, "nodeName"), p.child("nodeName"), "PodSpec");
  s.node_selector = d.string_map(get(o, "nodeSelector"), p.child("nodeSelector"), "PodSpec");
  s.host_network = d.boolean(get(o, "hostNetwork"), p.child("hostNetwork"), "PodSpec");
  s.termination_grace_period_seconds =
      d.integer(get(o, "terminationGracePeriodSeconds"), p.child("terminationGracePeriodSeconds"), "PodSpec", "int64");
  Path ap = p.child("affinity");
  if (const json::object* aff = d.object(get(o, "affinity"), ap, "PodSpec", "v1.Affinity")) {
    Path nap = ap.child("nodeAffinity");
    if (const json::object* na = d.object(get(aff, "nodeAffinity"), nap, "Affinity", "v1.NodeAffinity")) {
      Path rp = nap.child("requiredDuringSchedulingIgnoredDuringExecution");
      if (const json::object* req = d.object(get(na, "requiredDuringSchedulingIgnoredDuringExecution"), rp,
                                             "NodeAffinity", "v1.NodeSelector")) {
        std::vector<NodeSelectorTerm> terms;
        Path tp = rp.child("nodeSelectorTerms");
        if (const json::array* ta =
                d.array(get(req, "nodeSelectorTerms"), tp, "NodeSelector", "[]v1.NodeSelectorTerm")) {
          for (size_t i = 0; i < ta->size(); ++i) {
            Path ip = tp.index(i);
            const json::object* t = d.object(&(*ta)[i], ip, "NodeSelector", "v1.NodeSelectorTerm");
            NodeSelectorTerm term;
            if (t) {
              term.match_expressions = decode_requirements(d, get(t, "matchExpressions"), ip.child("matchExpressions"),
                                                           "NodeSelectorTerm", "[]v1.NodeSelectorRequirement");
              term.match_fields = decode_requirements(d, get(t, "matchFields"), ip.child("matchFields"),
                                                      "NodeSelectorTerm", "[]v1.NodeSelectorRequirement");
            }
            terms.push_back(std::move(term));
          }
        }
        s.required_node_affinity = std::move(terms);
      }
    }
  }
  Path tolp = p.child("tolerations");
  if (const json::array* ta = d.array(get(o, "tolerations"), tolp, "PodSpec", "[]v1.Toleration")) {
    for (size_t i = 0; i < ta->size(); ++i) {
      Path ip = tolp.index(i);
      const json::object* t = d.object(&(*ta)[i], ip, "PodSpec", "v1.Toleration");
      if (!t) continue;
      Toleration tol;
      tol.key = d.string(get(t, "key"), ip.child("key"), "Toleration");
      tol.op = d.string(get(t, "operator"), ip.child("operator"), "Toleration");
      tol.value = d.string(get(t, "value"), ip.child("value"), "Toleration");
      tol.effect = d.string(get(t, "effect"), ip.child("effect"), "Toleration");
      tol.toleration_seconds =
          d.integer(get(t, "tolerationSeconds"), ip.child("tolerationSeconds"), "Toleration", "int64");
      s.tolerations.push_back(std::move(tol));
    }
  }
  s.init_containers = decode_containers(d, get(o, "initContainers"), p.child("initContainers"));
  s.containers = decode_containers(d, get(o, "containers"), p.child("containers"));
  return s;
}

// mirrors ValidateDaemonSetSpec's and ValidateDeploymentSpec's selector
// checks (k8s.io/kubernetes pkg/apis/apps/validation).
void validate_selector_not_empty(const Decoder& d, const LabelSelector& selector, const char* what,
                                 const Path& selector_path) {
  if (selector.empty())
    // The value is the *metav1.LabelSelector, rendered as JSON: with no
    // requirement (omitempty), {}.
    d.invalid(selector_path, std::string("Invalid value: {}: empty selector is invalid for ") + what);
}

// mirrors the end of ValidateDaemonSetSpec and ValidatePodTemplateSpecForReplicaSet
// (pkg/apis/apps/validation, pkg/apis/core/validation): a template's
// restartPolicy Always (the default when empty), and no activeDeadlineSeconds
// ("activeDeadlineSeconds in <owner> is not Supported").
void validate_template_restart(const Decoder& d, const json::object* pod_spec, const Path& p, const char* owner) {
  const Path rp = p.child("restartPolicy");
  std::string restart = d.string(get(pod_spec, "restartPolicy"), rp, "PodSpec");
  if (!restart.empty() && restart != "Always") d.invalid(rp, not_supported(restart, {"Always"}));
  const json::value* deadline = get(pod_spec, "activeDeadlineSeconds");
  const Path ap = p.child("activeDeadlineSeconds");
  if (deadline && !deadline->is_null())
    d.invalid(ap, std::string("Forbidden: activeDeadlineSeconds in ") + owner + " is not Supported");
}

void validate_selector_matches_template(const Decoder& d, const LabelSelector& selector, const Labels& labels,
                                        const Path& labels_path) {
  bool matches = true;
  for (const auto& [k, v] : selector.match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) matches = false;
  }
  for (const auto& r : selector.match_expressions) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    bool in = has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    if ((r.op == SelectorOperator::kIn && !in) || (r.op == SelectorOperator::kNotIn && in) ||
        (r.op == SelectorOperator::kExists && !has) || (r.op == SelectorOperator::kDoesNotExist && has))
      matches = false;
  }
  if (!matches) {
    // field.Error renders a map value as its JSON (ErrorBody,
    // k8s.io/apimachinery pkg/util/validation/field/errors.go, since 1.34).
    json::object rendered;
    for (const auto& [k, v] : labels) rendered[k] = v;
    d.invalid(labels_path,
              "Invalid value: " + json::serialize(rendered) + ": `selector` does not match template `labels`");
  }
}

}  // namespace codec_internal

namespace {

using codec_internal::decode_meta;
using codec_internal::decode_pod_spec;
using codec_internal::decode_requirements;
using codec_internal::decode_taints;
using codec_internal::get;
using codec_internal::not_supported;

// apiVersion/kind check: what the API serves for each kind gpuops handles.
struct KindInfo {
  std::string api_version, kind;
};

KindInfo kind_of(const Document& doc) {
  if (!doc.value.is_object())
    throw InputError(doc.file, doc.line, "",
                     "a Kubernetes object must be a map, not " + std::string(json_kind(doc.value)));
  const auto& o = doc.value.as_object();
  KindInfo k;
  auto av = o.if_contains("apiVersion");
  auto kd = o.if_contains("kind");
  if (!kd || !kd->is_string() || kd->as_string().empty())
    throw InputError(doc.file, doc.line_of({"kind"}), "kind", "Object 'Kind' is missing");
  if (!av || !av->is_string() || av->as_string().empty())
    throw InputError(doc.file, doc.line_of({"apiVersion"}), "apiVersion", "Object 'apiVersion' is missing");
  k.api_version = std::string(av->as_string());
  k.kind = std::string(kd->as_string());
  return k;
}

[[noreturn]] void no_match(const Document& doc, const KindInfo& k) {
  std::string hint;
  if (k.kind == "DaemonSet" &&
      (k.api_version == "extensions/v1beta1" || k.api_version == "apps/v1beta1" || k.api_version == "apps/v1beta2"))
    hint = " (" + k.api_version + " DaemonSets were removed in Kubernetes 1.16; use apps/v1)";
  throw InputError::with_status(404, doc.file, doc.line_of({"apiVersion"}), "apiVersion",
                                "no matches for kind \"" + k.kind + "\" in version \"" + k.api_version + "\"" + hint);
}

}  // namespace

// ---------------------------------------------------------------- public

// Decodes `doc` with `typed`, then keeps the document as the object's raw
// JSON: copied from a const Document, moved out of a Document&& (after the
// typed decoding has read it).
template <class T>
static T with_raw(T (*typed)(const Document&), const Document& doc) {
  T x = typed(doc);
  x.raw = doc.value.as_object();
  return x;
}

template <class T>
static T with_raw(T (*typed)(const Document&), Document&& doc) {
  T x = typed(doc);
  x.raw = std::move(doc.value.as_object());
  return x;
}

static Namespace decode_namespace_typed(const Document& doc) {
  Decoder d(doc, "Namespace", "v1", "Namespace");
  Namespace ns;
  // ValidateObjectMeta with the kind's name rule (NameIsDNSLabel).
  ns.metadata = codec_internal::validate_object_meta(d, doc.value.as_object(), validate_dns1123_label, false);
  return ns;
}

// The GPU Operator's resources: metadata as every object's, status.state and
// status.conditions (metav1.Condition) typed, the rest kept in raw for
// core/cluster_policy.h. Not strict about spec fields: the CRD's schema is the
// operator's, and gpuops reads only what its rules need.
namespace {

std::vector<Condition> decode_conditions(Decoder& d, const json::object* status, const Path& sp, const char* st) {
  std::vector<Condition> out;
  const Path cp = sp.child("conditions");
  const json::array* a = d.array(get(status, "conditions"), cp, st, "[]v1.Condition");
  if (!a) return out;
  for (size_t i = 0; i < a->size(); ++i) {
    const Path ip = cp.index(i);
    const json::object* c = d.object(&(*a)[i], ip, st, "v1.Condition");
    if (!c) continue;
    Condition cond;
    cond.type = d.string(get(c, "type"), ip.child("type"), "Condition");
    cond.status = d.string(get(c, "status"), ip.child("status"), "Condition");
    cond.reason = d.string(get(c, "reason"), ip.child("reason"), "Condition");
    cond.message = d.string(get(c, "message"), ip.child("message"), "Condition");
    cond.last_transition_time = d.time(get(c, "lastTransitionTime"), ip.child("lastTransitionTime"), "Condition");
    out.push_back(std::move(cond));
  }
  return out;
}

// The custom resources' metadata as apiextensions-apiserver's
// customResourceValidator.Validate checks it: ValidateObjectMetaAccessor with
// NameIsDNSSubdomain, the 422 naming the GroupKind ("ClusterPolicy.nvidia.com").
template <typename R>
R decode_operator_resource(const Document& doc, const char* kind, const char* version, const char* status_struct) {
  Decoder d(doc, kind, version, std::string(kind) + ".nvidia.com");
  R r;
  const Path top;
  // Both CRDs are scope: Cluster.
  r.metadata = codec_internal::validate_object_meta(d, doc.value.as_object(), validate_dns1123_subdomain, false);
  const Path sp = top.child("status");
  const json::object* status = d.object(get(&doc.value.as_object(), "status"), sp, kind, status_struct);
  r.state = d.string(get(status, "state"), sp.child("state"), status_struct);
  r.conditions = decode_conditions(d, status, sp, status_struct);
  // A copy in the default memory resource: the document may live in a
  // caller's arena (the real client parses each page into one).
  r.raw = json::object(doc.value.as_object(), json::storage_ptr());
  return r;
}

}  // namespace

ClusterPolicy decode_cluster_policy(const Document& doc) {
  return decode_operator_resource<ClusterPolicy>(doc, "ClusterPolicy", "nvidia.com/v1", "ClusterPolicyStatus");
}

NVIDIADriver decode_nvidia_driver(const Document& doc) {
  NVIDIADriver n =
      decode_operator_resource<NVIDIADriver>(doc, "NVIDIADriver", "nvidia.com/v1alpha1", "NVIDIADriverStatus");
  Decoder d(doc, "NVIDIADriver", "nvidia.com/v1alpha1", "NVIDIADriver");
  const Path top;
  const Path sp = top.child("spec");
  const json::object* spec = d.object(get(&doc.value.as_object(), "spec"), sp, "NVIDIADriver", "NVIDIADriverSpec");
  n.driver_type = d.string(get(spec, "driverType"), sp.child("driverType"), "NVIDIADriverSpec");
  if (n.driver_type.empty()) n.driver_type = "gpu";  // +kubebuilder:default=gpu
  n.node_selector = d.string_map(get(spec, "nodeSelector"), sp.child("nodeSelector"), "NVIDIADriverSpec");
  return n;
}

Namespace decode_namespace(const Document& doc) { return with_raw(decode_namespace_typed, doc); }
Namespace decode_namespace(Document&& doc) { return with_raw(decode_namespace_typed, std::move(doc)); }

Node decode_node_typed(const Document& doc) {
  Decoder d(doc, "Node", "v1", "Node");
  const json::object& root = doc.value.as_object();
  Node n;
  const Path top;
  const Path mp = top.child("metadata");
  // ValidateObjectMeta with the kind's name rule (NameIsDNSSubdomain).
  n.metadata = codec_internal::validate_object_meta(d, root, validate_dns1123_subdomain, false);
  Path sp = top.child("spec");
  if (const json::object* spec = d.object(get(&root, "spec"), sp, "Node", "v1.NodeSpec")) {
    n.unschedulable = d.boolean(get(spec, "unschedulable"), sp.child("unschedulable"), "NodeSpec");
    n.taints = decode_taints(d, get(spec, "taints"), sp.child("taints"));
  }
  d.invalid_all(validate_node_taints(n.taints, mp.child("taints")));
  Path stp = top.child("status");
  if (const json::object* st = d.object(get(&root, "status"), stp, "Node", "v1.NodeStatus")) {
    n.allocatable = decode_resource_list(d, get(st, "allocatable"), stp.child("allocatable"), "NodeStatus");
    Path cp = stp.child("conditions");
    if (const json::array* cs = d.array(get(st, "conditions"), cp, "NodeStatus", "[]v1.NodeCondition")) {
      for (size_t i = 0; i < cs->size(); ++i) {
        const Path ip = cp.index(i);
        const json::object* c = d.object(&(*cs)[i], ip, "NodeStatus", "v1.NodeCondition");
        if (!c) continue;
        NodeCondition nc;
        nc.type = d.string(get(c, "type"), ip.child("type"), "NodeCondition");
        nc.status = d.string(get(c, "status"), ip.child("status"), "NodeCondition");
        nc.reason = d.string(get(c, "reason"), ip.child("reason"), "NodeCondition");
        nc.message = d.string(get(c, "message"), ip.child("message"), "NodeCondition");
        n.conditions.push_back(std::move(nc));
      }
    }
  }
  return n;
}

Node decode_node(const Document& doc) { return with_raw(decode_node_typed, doc); }
Node decode_node(Document&& doc) { return with_raw(decode_node_typed, std::move(doc)); }

Pod decode_pod_typed(const Document& doc) {
  Decoder d(doc, "Pod", "v1", "Pod");
  const json::object& root = doc.value.as_object();
  Pod pod;
  const Path top;
  pod.metadata = decode_meta(d, root, top);
  const Path pmp = top.child("metadata");
  pod.metadata.namespace_ = validate_meta_namespace(d, pod.metadata.namespace_, true, pmp.child("namespace"));
  validate_meta_annotations(d, pod.metadata.annotations, pmp.child("annotations"));
  Path sp = top.child("spec");
  pod.spec = decode_pod_spec(d, d.object(get(&root, "spec"), sp, "Pod", "v1.PodSpec"), sp, false);
  Path stp = top.child("status");
  if (const json::object* st = d.object(get(&root, "status"), stp, "Pod", "v1.PodStatus")) {
    pod.status.phase = d.string(get(st, "phase"), stp.child("phase"), "PodStatus");
    pod.status.reason = d.string(get(st, "reason"), stp.child("reason"), "PodStatus");
    pod.status.message = d.string(get(st, "message"), stp.child("message"), "PodStatus");
    pod.status.start_time = d.time(get(st, "startTime"), stp.child("startTime"), "PodStatus");
    Path cp = stp.child("conditions");
    if (const json::array* cs = d.array(get(st, "conditions"), cp, "PodStatus", "[]v1.PodCondition")) {
      for (size_t i = 0; i < cs->size(); ++i) {
        const Path ip = cp.index(i);
        const json::object* c = d.object(&(*cs)[i], ip, "PodStatus", "v1.PodCondition");
        if (!c) continue;
        PodCondition pc;
        pc.type = d.string(get(c, "type"), ip.child("type"), "PodCondition");
        pc.status = d.string(get(c, "status"), ip.child("status"), "PodCondition");
        pc.reason = d.string(get(c, "reason"), ip.child("reason"), "PodCondition");
        pc.message = d.string(get(c, "message"), ip.child("message"), "PodCondition");
        pc.last_transition_time = d.time(get(c, "lastTransitionTime"), ip.child("lastTransitionTime"), "PodCondition");
        pod.status.conditions.push_back(std::move(pc));
      }
    }
    auto read_statuses = [&](const char* key, std::vector<ContainerStatus>& out) {
      Path p = stp.child(key);
      const json::array* a = d.array(get(st, key), p, "PodStatus", "[]v1.ContainerStatus");
      if (!a) return;
      for (size_t i = 0; i < a->size(); ++i) {
        const Path ip = p.index(i);
        const json::object* c = d.object(&(*a)[i], ip, "PodStatus", "v1.ContainerStatus");
        if (!c) continue;
        ContainerStatus cs;
        cs.name = d.string(get(c, "name"), ip.child("name"), "ContainerStatus");
        cs.ready = d.boolean(get(c, "ready"), ip.child("ready"), "ContainerStatus");
        cs.restart_count = static_cast<int32_t>(
            d.integer(get(c, "restartCount"), ip.child("restartCount"), "ContainerStatus", "int32").value_or(0));
        Path stp2 = ip.child("state");
        if (const json::object* state = d.object(get(c, "state"), stp2, "ContainerStatus", "v1.ContainerState")) {
          for (const char* k : {"waiting", "running", "terminated"}) {
            const Path kp = stp2.child(k);
            if (const json::object* s = d.object(get(state, k), kp, "ContainerState", "v1.ContainerState")) {
              cs.state = k;
              cs.reason = d.string(get(s, "reason"), kp.child("reason"), "ContainerState");
              cs.message = d.string(get(s, "message"), kp.child("message"), "ContainerState");
              if (auto ec = d.integer(get(s, "exitCode"), kp.child("exitCode"), "ContainerState", "int32"))
                cs.exit_code = static_cast<int32_t>(*ec);
              if (cs.state == "running")
                cs.started_at = d.time(get(s, "startedAt"), kp.child("startedAt"), "ContainerStateRunning");
            }
          }
        }
        // lastState: only how the previous run ended is kept (what
        // `kubectl logs --previous` shows).
        Path lp = ip.child("lastState");
        if (const json::object* last = d.object(get(c, "lastState"), lp, "ContainerStatus", "v1.ContainerState")) {
          const Path tp = lp.child("terminated");
          if (const json::object* t =
                  d.object(get(last, "terminated"), tp, "ContainerState", "v1.ContainerStateTerminated")) {
            ContainerStatus::Termination term;
            term.reason = d.string(get(t, "reason"), tp.child("reason"), "ContainerStateTerminated");
            term.message = d.string(get(t, "message"), tp.child("message"), "ContainerStateTerminated");
            if (auto ec = d.integer(get(t, "exitCode"), tp.child("exitCode"), "ContainerStateTerminated", "int32"))
              term.exit_code = static_cast<int32_t>(*ec);
            cs.last_terminated = std::move(term);
          }
        }
        out.push_back(std::move(cs));
      }
    };
    read_statuses("initContainerStatuses", pod.status.init_container_statuses);
    read_statuses("containerStatuses", pod.status.container_statuses);
  }
  return pod;
}

// Keep in step with decode_node_typed, decode_pod_typed and the helpers they
// call: a member they read and these leave out would be lost for snapshots
// (SnapshotStream.ShapedReadingDecodesTheSame compares both readings).
const JsonShape* typed_shape(std::string_view kind) {
  // Maps, selectors and small structs are kept whole (nullptr): the
  // decoders read any of their keys.
  static const JsonShape container{{{"name", nullptr}, {"image", nullptr}, {"resources", nullptr}}};
  static const JsonShape pod_spec{{{"nodeName", nullptr},
                                   {"nodeSelector", nullptr},
                                   {"hostNetwork", nullptr},
                                   {"terminationGracePeriodSeconds", nullptr},
                                   {"affinity", nullptr},
                                   {"tolerations", nullptr},
                                   {"initContainers", &container},
                                   {"containers", &container}}};
  static const JsonShape container_status{
      {{"name", nullptr}, {"ready", nullptr}, {"restartCount", nullptr}, {"state", nullptr}, {"lastState", nullptr}}};
  static const JsonShape pod_status{{{"phase", nullptr},
                                     {"reason", nullptr},
                                     {"message", nullptr},
                                     {"startTime", nullptr},
                                     {"conditions", nullptr},
                                     {"initContainerStatuses", &container_status},
                                     {"containerStatuses", &container_status}}};
  static const JsonShape pod{{{"apiVersion", nullptr},
                              {"kind", nullptr},
                              {"metadata", nullptr},
                              {"spec", &pod_spec},
                              {"status", &pod_status}}};
  static const JsonShape node_status{{{"allocatable", nullptr}, {"conditions", nullptr}}};
  static const JsonShape node{
      {{"apiVersion", nullptr}, {"kind", nullptr}, {"metadata", nullptr}, {"spec", nullptr}, {"status", &node_status}}};
  if (kind == "Pod") return &pod;
  if (kind == "Node") return &node;
  return nullptr;
}

Pod decode_pod(const Document& doc) { return with_raw(decode_pod_typed, doc); }
Pod decode_pod(Document&& doc) { return with_raw(decode_pod_typed, std::move(doc)); }

DaemonSet decode_daemonset_typed(const Document& doc) {
  Decoder d(doc, "DaemonSet", "v1", "DaemonSet.apps");
  const json::object& root = doc.value.as_object();
  DaemonSet ds;
  const Path top;
  // ValidateObjectMeta with the kind's name rule (NameIsDNSSubdomain).
  ds.metadata = codec_internal::validate_object_meta(d, root, validate_dns1123_subdomain, true);
  Path sp = top.child("spec");
  const json::object* spec = d.object(get(&root, "spec"), sp, "DaemonSet", "v1.DaemonSetSpec");
  if (!spec) d.invalid(sp.child("selector"), "Required value");
  d.known_fields(*spec, sp, {"selector", "template", "updateStrategy", "minReadySeconds", "revisionHistoryLimit"});
  Path selp = sp.child("selector");
  if (const json::object* sel = d.object(get(spec, "selector"), selp, "DaemonSetSpec", "v1.LabelSelector")) {
    ds.selector.match_labels = d.string_map(get(sel, "matchLabels"), selp.child("matchLabels"), "LabelSelector");
    ds.selector.match_expressions = decode_requirements(d, get(sel, "matchExpressions"), selp.child("matchExpressions"),
                                                        "LabelSelector", "[]v1.LabelSelectorRequirement");
  }
  ds.min_ready_seconds = static_cast<int32_t>(
      d.integer(get(spec, "minReadySeconds"), sp.child("minReadySeconds"), "DaemonSetSpec", "int32").value_or(0));
  Path usp = sp.child("updateStrategy");
  if (const json::object* us =
          d.object(get(spec, "updateStrategy"), usp, "DaemonSetSpec", "v1.DaemonSetUpdateStrategy")) {
    std::string t = d.string(get(us, "type"), usp.child("type"), "DaemonSetUpdateStrategy");
    if (!t.empty()) ds.update_strategy = t;
    if (ds.update_strategy != "RollingUpdate" && ds.update_strategy != "OnDelete")
      d.invalid(usp.child("type"),
                "Unsupported value: \"" + t + "\": supported values: \"OnDelete\", \"RollingUpdate\"");
    Path rup = usp.child("rollingUpdate");
    if (const json::object* ru =
            d.object(get(us, "rollingUpdate"), rup, "DaemonSetUpdateStrategy", "v1.RollingUpdateDaemonSet")) {
      // intstr: an integer, or a string "N%" (a string of digits is read as
      // the count: some operator dumps quote it).
      auto int_or_percent = [&](const char* key, IntOrPercent& out) {
        const json::value* v = get(ru, key);
        if (!v) return;
        if (v->is_number()) {
          // intstr.IntOrString's number is an int32 (IntVal): past it, or
          // not whole, the API's JSON decoding refuses it.
          out = IntOrPercent{static_cast<int32_t>(*d.integer(v, rup.child(key), "RollingUpdateDaemonSet", "int32")),
                             false};
        } else if (v->is_string()) {
          std::string text(v->as_string());
          bool percent = !text.empty() && text.back() == '%';
          if (percent) text.pop_back();
          if (text.empty() || text.size() > 9 ||
              !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
            d.invalid(rup.child(key),
                      "Invalid value: \"" + std::string(v->as_string()) +
                          "\": a valid percent string must be a numeric string followed by an ending '%'");
          out = IntOrPercent{static_cast<int32_t>(std::stoi(text)), percent};
        }
      };
      int_or_percent("maxUnavailable", ds.max_unavailable);
      int_or_percent("maxSurge", ds.max_surge);
    }
  }
  ds.revision_history_limit = static_cast<int32_t>(
      d.integer(get(spec, "revisionHistoryLimit"), sp.child("revisionHistoryLimit"), "DaemonSetSpec", "int32")
          .value_or(10));
  Path tp = sp.child("template");
  const json::object* tmpl = d.object(get(spec, "template"), tp, "DaemonSetSpec", "v1.PodTemplateSpec");
  Path tsp = tp.child("spec");
  if (!tmpl) d.invalid(tsp.child("containers"), "Required value");
  Path tmp = tp.child("metadata");
  if (const json::object* tm = d.object(get(tmpl, "metadata"), tmp, "PodTemplateSpec", "v1.ObjectMeta")) {
    ds.template_.labels = d.string_map(get(tm, "labels"), tmp.child("labels"), "ObjectMeta");
    ds.template_.annotations = d.string_map(get(tm, "annotations"), tmp.child("annotations"), "ObjectMeta");
  }
  const json::object* pod_spec = d.object(get(tmpl, "spec"), tsp, "PodTemplateSpec", "v1.PodSpec");
  ds.template_.spec = decode_pod_spec(d, pod_spec, tsp, true);

  // ValidateDaemonSetSpec (pkg/apis/apps/validation): a non-empty selector
  // that matches the template's labels.
  codec_internal::validate_selector_not_empty(d, ds.selector, "daemonset", selp);
  validate_meta_labels(d, ds.template_.labels, tmp.child("labels"));
  validate_meta_annotations(d, ds.template_.annotations, tmp.child("annotations"));
  codec_internal::validate_selector_matches_template(d, ds.selector, ds.template_.labels, tmp.child("labels"));
  validate_pod_spec(d, ds.template_.spec, tsp, pod_spec);
  codec_internal::validate_template_restart(d, pod_spec, tsp, "DaemonSet");

  Path stp = top.child("status");
  if (const json::object* st = d.object(get(&root, "status"), stp, "DaemonSet", "v1.DaemonSetStatus")) {
    auto i32 = [&](const char* k) {
      return static_cast<int32_t>(d.integer(get(st, k), stp.child(k), "DaemonSetStatus", "int32").value_or(0));
    };
    ds.status.current_number_scheduled = i32("currentNumberScheduled");
    ds.status.number_misscheduled = i32("numberMisscheduled");
    ds.status.desired_number_scheduled = i32("desiredNumberScheduled");
    ds.status.number_ready = i32("numberReady");
    ds.status.updated_number_scheduled = i32("updatedNumberScheduled");
    ds.status.number_available = i32("numberAvailable");
    ds.status.number_unavailable = i32("numberUnavailable");
    ds.status.observed_generation =
        d.integer(get(st, "observedGeneration"), stp.child("observedGeneration"), "DaemonSetStatus", "int64")
            .value_or(0);
  }
  return ds;
}

DaemonSet decode_daemonset(const Document& doc) { return with_raw(decode_daemonset_typed, doc); }
DaemonSet decode_daemonset(Document&& doc) { return with_raw(decode_daemonset_typed, std::move(doc)); }

template <typename Doc>
Object decode_object_impl(Doc&& doc) {
  KindInfo k = kind_of(doc);
  if (k.kind == "DaemonSet") {
    if (k.api_version != "apps/v1") no_match(doc, k);
    return decode_daemonset(std::forward<Doc>(doc));
  }
  if (k.kind == "Node" || k.kind == "Pod" || k.kind == "Namespace") {
    if (k.api_version != "v1") no_match(doc, k);
    if (k.kind == "Node") return decode_node(std::forward<Doc>(doc));
    if (k.kind == "Pod") return decode_pod(std::forward<Doc>(doc));
    return decode_namespace(std::forward<Doc>(doc));
  }
  InputError e(doc.file, doc.line_of({"kind"}), "kind",
               "kind \"" + k.kind + "\" (" + k.api_version +
                   ") is not handled by gpuops; expected Namespace, Node, DaemonSet or Pod");
  throw e;
}

Object decode_object(const Document& doc) { return decode_object_impl(doc); }
Object decode_object(Document&& doc) { return decode_object_impl(std::move(doc)); }

namespace {

// Runs `check` (a CRD schema's, core/codec/crd_schema.h), its InputError given the
// document's file and the line of its first field.
template <class Check>
void in_document(const Document& doc, Check check) {
  try {
    check();
  } catch (const InputError& e) {
    std::vector<std::string> segs;  // "spec.driver.env[0].name" -> spec, driver, env, 0, name
    std::string seg;
    for (char c : e.field()) {
      if (c == '.' || c == '[' || c == ']') {
        if (!seg.empty()) segs.push_back(std::move(seg));
        seg.clear();
      } else {
        seg += c;
      }
    }
    if (!seg.empty()) segs.push_back(std::move(seg));
    InputError named = InputError::with_status(e.http_status, doc.file, doc.line_of(segs), e.field(), e.message());
    named.causes = e.causes;
    throw named;
  }
}

}  // namespace

Object decode_manifest(const Document& doc) {
  KindInfo k = kind_of(doc);
  // The custom resources are judged by their CRDs as on a create (the
  // NVIDIADriver's immutable fields need the stored object: not here).
  if (k.kind == "ClusterPolicy") {
    if (k.api_version != "nvidia.com/v1") no_match(doc, k);
    ClusterPolicy cp = decode_cluster_policy(doc);
    in_document(doc, [&] { validate_cluster_policy_spec(cp.metadata.name, cp.raw); });
    return cp;
  }
  if (k.kind == "NVIDIADriver") {
    if (k.api_version != "nvidia.com/v1alpha1") no_match(doc, k);
    NVIDIADriver d = decode_nvidia_driver(doc);
    in_document(doc, [&] { validate_nvidia_driver_spec(d.metadata.name, d.raw, nullptr); });
    return d;
  }
  if (k.kind != "DaemonSet" && k.kind != "Node" && k.kind != "Pod" && k.kind != "Namespace")
    throw InputError(doc.file, doc.line_of({"kind"}), "kind",
                     "kind \"" + k.kind + "\" (" + k.api_version +
                         ") is not handled by gpuops; expected Namespace, Node, DaemonSet, Pod, ClusterPolicy or "
                         "NVIDIADriver");
  return decode_object(doc);
}

std::vector<Object> load_manifests(const std::vector<std::string>& paths) {
  std::vector<Object> out;
  for (const auto& doc : read_paths(paths)) out.push_back(decode_object(doc));
  return out;
}

}  // namespace gpuops::core

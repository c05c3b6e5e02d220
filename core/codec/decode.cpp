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
#include "core/kube/managed_fields.h"
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
  if (const json::value* meta = get(&root, "metadata"); meta && meta->is_object())
    n.label_writes = decode_label_writes(meta->as_object().if_contains("managedFields"));
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
    pod.status.pod_ip = d.string(get(st, "podIP"), stp.child("podIP"), "PodStatus");
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
                                   {"containers", &container},
                                   {"runtimeClassName", nullptr}}};
  static const JsonShape container_status{
      {{"name", nullptr}, {"ready", nullptr}, {"restartCount", nullptr}, {"state", nullptr}, {"lastState", nullptr}}};
  static const JsonShape pod_status{{{"phase", nullptr},
                                     {"reason", nullptr},
                                     {"message", nullptr},
                                     {"startTime", nullptr},
                                     {"conditions", nullptr},
                                     {"initContainerStatuses", &container_status},
                                     {"containerStatuses", &container_status},
                                     {"podIP", nullptr}}};
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

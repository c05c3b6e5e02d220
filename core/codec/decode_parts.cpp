// core/codec/decode_parts.cpp: the parts several decoders share (ObjectMeta,
// taints, resource lists, containers, a pod spec), read and validated as the
// API server does (core/codec/codec_internal.h; the decoders:
// core/codec/decode.cpp).
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
#include "core/base/terminal.h"
#include "core/codec/codec_internal.h"
#include "core/codec/crd_schema.h"
#include "core/codec/documents.h"
#include "core/kube/names.h"
#include "core/model/quantity.h"
#include "core/model/rfc3339.h"

namespace gpuops::core {

namespace json = boost::json;

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
  const json::value* md = get(&root, "metadata");
  const json::object* mo = md && md->is_object() ? &md->as_object() : nullptr;
  // ValidateObjectMetaAccessor: generateName by the name rule for a prefix
  // (maskTrailingDash: a trailing '-' and the character before it read as
  // "a"), then the name, generated from it already when it was empty.
  std::vector<FieldError> name_errs;
  if (const json::value* g = get(mo, "generateName"); g && g->is_string() && !g->get_string().empty()) {
    std::string gen(g->get_string());
    std::string masked = gen.size() > 1 && gen.back() == '-' ? gen.substr(0, gen.size() - 2) + "a" : gen;
    if (std::string e = name_rule(masked); !e.empty())
      name_errs.push_back(
          field_error("FieldValueInvalid", mp.child("generateName"), "Invalid value: \"" + gen + "\": " + e));
  }
  if (m.name.empty())
    name_errs.push_back(
        field_error("FieldValueRequired", mp.child("name"), "Required value: name or generateName is required"));
  else if (std::string e = name_rule(m.name); !e.empty())
    name_errs.push_back(field_error("FieldValueInvalid", mp.child("name"), "Invalid value: \"" + m.name + "\": " + e));
  d.invalid_all(name_errs);
  m.namespace_ = validate_meta_namespace(d, m.namespace_, namespaced, mp.child("namespace"));
  validate_meta_labels(d, m.labels, mp.child("labels"));
  validate_meta_annotations(d, m.annotations, mp.child("annotations"));
  std::vector<FieldError> errs = validate_owner_references(get(mo, "ownerReferences"), mp.child("ownerReferences"));
  for (auto& e : validate_finalizers(m.finalizers, mp.child("finalizers"))) errs.push_back(std::move(e));
  d.invalid_all(errs);
  return m;
}

namespace {

// json.Marshal of one metav1.OwnerReference as given: apiVersion, kind,
// name and uid always, controller and blockOwnerDeletion (*bool, omitempty)
// when set.
std::string owner_reference_json(const json::value& v) {
  const json::object* o = v.if_object();
  std::string out = "{";
  for (const char* k : {"apiVersion", "kind", "name", "uid"}) {
    const json::value* f = get(o, k);
    out += std::string(out.size() > 1 ? "," : "") + "\"" + k +
           "\":" + go_json_string(f && f->is_string() ? std::string_view(f->get_string()) : std::string_view());
  }
  for (const char* k : {"controller", "blockOwnerDeletion"}) {
    const json::value* f = get(o, k);
    if (f && f->is_bool()) out += std::string(",\"") + k + "\":" + (f->get_bool() ? "true" : "false");
  }
  return out + "}";
}

}  // namespace

// mirrors ValidateOwnerReferences and validateOwnerReference
// (k8s.io/apimachinery pkg/api/validation/objectmeta.go).
std::vector<FieldError> validate_owner_references(const json::value* refs, const Path& p) {
  std::vector<FieldError> errs;
  const json::array* a = refs ? refs->if_array() : nullptr;
  if (!a) return errs;
  std::string first_controller;
  for (size_t i = 0; i < a->size(); ++i) {
    const json::object* o = (*a)[i].if_object();
    auto str = [&](const char* k) {
      const json::value* f = get(o, k);
      return f && f->is_string() ? std::string(f->get_string()) : std::string();
    };
    const Path rp = p.index(i);
    const std::string api_version = str("apiVersion"), kind = str("kind"), name = str("name");
    // schema.ParseGroupVersion: "" and "/" are the empty version; more than
    // one '/' is an error; the version after '/' may not be empty.
    std::string group, version = api_version;
    const size_t slashes = std::count(api_version.begin(), api_version.end(), '/');
    if (slashes == 1) {
      group = api_version.substr(0, api_version.find('/'));
      version = api_version.substr(api_version.find('/') + 1);
    }
    if (api_version == "/") version.clear();
    if (api_version.empty())
      errs.push_back(field_error("FieldValueRequired", rp.child("apiVersion"), "Required value: must not be empty"));
    else if (slashes > 1 || version.empty())
      errs.push_back(
          field_error("FieldValueInvalid", rp.child("apiVersion"),
                      "Invalid value: " + go_quote(api_version) + ": must be <group>/<version> or <version>"));
    if (kind.empty())
      errs.push_back(field_error("FieldValueRequired", rp.child("kind"), "Required value: must not be empty"));
    if (name.empty())
      errs.push_back(field_error("FieldValueRequired", rp.child("name"), "Required value: must not be empty"));
    if (str("uid").empty())
      errs.push_back(field_error("FieldValueRequired", rp.child("uid"), "Required value: must not be empty"));
    // BannedOwners: an Event may own nothing.
    if (slashes <= 1 && group.empty() && version == "v1" && kind == "Event")
      errs.push_back(field_error(
          "FieldValueInvalid", rp,
          "Invalid value: " + owner_reference_json((*a)[i]) + ": /v1, Kind=Event is disallowed from being an owner"));
    const json::value* c = get(o, "controller");
    if (c && c->is_bool() && c->get_bool()) {
      const std::string controller = kind + "/" + name;
      if (first_controller.empty()) {
        first_controller = controller;
      } else {
        std::string all = "[";
        for (size_t j = 0; j < a->size(); ++j) all += (j ? "," : "") + owner_reference_json((*a)[j]);
        errs.push_back(field_error("FieldValueInvalid", p,
                                   "Invalid value: " + all +
                                       "]: Only one reference can have Controller set to true. Found \"true\" in "
                                       "references for " +
                                       first_controller + " and " + controller));
      }
    }
  }
  return errs;
}

// mirrors ValidateFinalizers and ValidateFinalizerName (k8s.io/apimachinery
// pkg/api/validation/objectmeta.go): each a qualified name (IsQualifiedName,
// the errors on the list's path), and not both "orphan" and
// "foregroundDeletion". kube-apiserver refuses no other name here; a name
// without a domain gets a warning only (Namespace's spec.finalizers is where
// it refuses one).
std::vector<FieldError> validate_finalizers(const std::vector<std::string>& finalizers, const Path& p) {
  std::vector<FieldError> errs;
  bool orphan = false, foreground = false;
  for (const auto& f : finalizers) {
    for (const auto& msg : qualified_name_errors(f))
      errs.push_back(field_error("FieldValueInvalid", p, "Invalid value: " + go_quote(f) + ": " + msg));
    orphan = orphan || f == "orphan";
    foreground = foreground || f == "foregroundDeletion";
  }
  if (orphan && foreground) {
    std::string all = "[";
    for (size_t i = 0; i < finalizers.size(); ++i) all += (i ? "," : "") + go_json_string(finalizers[i]);
    errs.push_back(
        field_error("FieldValueInvalid", p,
                    "Invalid value: " + all + "]: finalizer orphan and foregroundDeletion cannot be both set"));
  }
  return errs;
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
  s.runtime_class_name = d.string(get(o, "runtimeClassName"), p.child("runtimeClassName"), "PodSpec");
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

}  // namespace gpuops::core

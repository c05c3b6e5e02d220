// core/codec/codec_internal.h: what the decoders (core/codec/decode.cpp, with the
// Decoder of core/codec/decoder.cpp) and the object validation
// (core/codec/validation.cpp) share. Internal to core/codec/: only its files
// include it, and nothing here is part of the API.
//
//  - Path: where a decoded value sits, rendered three ways (Document::lines
//    segments, field.Path text, Go json path) only when an error needs it.
//  - FieldError: one field.Error of upstream's field.ErrorList.
//  - Decoder: reads one document's typed fields, throwing InputError as the
//    API server words it (400 for a JSON type that does not fit a Go field,
//    422 Invalid for a validation failure).
//  - validate_*: the object-level rules (k8s.io/apimachinery's ObjectMeta
//    checks, k8s.io/kubernetes pkg/apis/core/validation) the decoders apply,
//    reported through a Decoder.
#pragma once

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/terminal.h"
#include "core/codec/documents.h"
#include "core/model/model.h"
#include "core/model/quantity.h"

namespace gpuops::core::codec_internal {

// Where a value sits: segments for line lookup, the field.Path rendering for
// messages, and the Go json path for decode errors. Built on every decoded
// field but rendered only for an error, so a path is one segment and a
// pointer to its parent path: making a child costs a few stores.
struct Path {
  enum class SegKind : char { kRoot, kChild, kMapKey, kIndex };

  Path() = default;  // the root
  Path(const Path&) = default;
  Path& operator=(const Path&) = delete;

  // A child refers to its parent and to `key` (a literal, a key of the
  // document or of the typed object being validated): both must outlive it.
  // Children of a temporary path are refused at compile time, since bound to
  // a name they would dangle: name the parent first.
  Path child(std::string_view key) const& { return Path(this, SegKind::kChild, key, 0); }
  Path map_key(std::string_view key) const& { return Path(this, SegKind::kMapKey, key, 0); }
  Path index(size_t i) const& { return Path(this, SegKind::kIndex, {}, i); }
  Path child(std::string_view) && = delete;
  Path map_key(std::string_view) && = delete;
  Path index(size_t) && = delete;

  // Segments as Document::lines keys them.
  std::vector<std::string> segs() const {
    std::vector<std::string> out;
    for (const Path* g : chain()) out.push_back(g->key());
    return out;
  }
  // spec.template.spec.nodeSelector[key]
  std::string field() const {
    std::string f;
    for (const Path* g : chain()) {
      if (g->kind_ == SegKind::kChild)
        f += (f.empty() ? "" : ".") + g->key();
      else
        f += "[" + g->key() + "]";
    }
    return f;
  }
  // spec.template.spec.nodeSelector (map keys and indices are not in it)
  std::string go() const {
    std::string f;
    for (const Path* g : chain())
      if (g->kind_ == SegKind::kChild) f += (f.empty() ? "" : ".") + g->key();
    return f;
  }

 private:
  Path(const Path* parent, SegKind kind, std::string_view name, size_t index)
      : parent_(parent), kind_(kind), name_(name), index_(index) {}
  std::string key() const { return kind_ == SegKind::kIndex ? std::to_string(index_) : std::string(name_); }
  // The segments from the root's first child to this one.
  std::vector<const Path*> chain() const {
    std::vector<const Path*> out;
    for (const Path* g = this; g && g->kind_ != SegKind::kRoot; g = g->parent_) out.push_back(g);
    std::reverse(out.begin(), out.end());
    return out;
  }

  const Path* parent_ = nullptr;
  SegKind kind_ = SegKind::kRoot;
  std::string_view name_;
  size_t index_ = 0;
};

// One field.Error of upstream's field.ErrorList: its type (the cause reason),
// field path, line-lookup segments and ErrorBody ("Required value").
struct FieldError {
  std::string reason;
  std::string field;
  std::vector<std::string> segs;
  std::string body;
};

inline FieldError field_error(const char* reason, const Path& p, std::string body) {
  return FieldError{reason, p.field(), p.segs(), std::move(body)};
}

// The JSON type a 400 names: "bool", "number", "string", "array", "object",
// "null" (Go's json.UnmarshalTypeError wording).
const char* json_kind(const boost::json::value& v);

// Reads the typed fields of one document (`doc` must outlive the decoder)
// with the API server's errors. `kind` and `version` name the object in a 400
// ("Node in version \"v1\" cannot be handled as a Node: ..."), `group_kind`
// in a 422 ("DaemonSet.apps \"x\" is invalid: ..."). Each `st` is the Go
// struct a 400 names ("PodSpec"), each `type` the Go type of the field. The
// readers return the empty value (nullptr, "", false, nullopt, {}) for an
// absent or null field, and throw InputError when the JSON type does not fit.
class Decoder {
 public:
  Decoder(const Document& doc, std::string kind, std::string version, std::string group_kind);

  // 400 BadRequest, as the API server's strict JSON decoder says it.
  [[noreturn]] void type_error(const Path& p, const boost::json::value& v, const char* go_struct,
                               const char* go_type) const;

  // 422 Invalid, as field validation says it.
  [[noreturn]] void invalid(const Path& p, const std::string& detail) const;

  // 422 Invalid with every error of `errs` as a cause, as
  // apierrors.NewInvalid renders a field.ErrorList: the message aggregates
  // the distinct "field: body" texts (utilerrors.NewAggregate: one alone,
  // several as "[a, b]"). Returns when `errs` is empty.
  void invalid_all(const std::vector<FieldError>& errs) const;

  // The object's name, for the 422 messages (set once metadata.name is read).
  void set_name(const std::string& n);

  const boost::json::object* object(const boost::json::value* v, const Path& p, const char* st, const char* type) const;
  const boost::json::array* array(const boost::json::value* v, const Path& p, const char* st, const char* type) const;
  std::string string(const boost::json::value* v, const Path& p, const char* st) const;
  bool boolean(const boost::json::value* v, const Path& p, const char* st) const;
  // An integer, or a double with an integral value.
  std::optional<int64_t> integer(const boost::json::value* v, const Path& p, const char* st, const char* type) const;
  // A map[string]string; a key given twice keeps the last value.
  Labels string_map(const boost::json::value* v, const Path& p, const char* st) const;
  // An RFC 3339 string (core/model/rfc3339.h); other text is a 400.
  std::optional<Time> time(const boost::json::value* v, const Path& p, const char* st) const;
  // A string or a number; text that is not a quantity is a 400.
  Quantity quantity(const boost::json::value* v, const Path& p, const char* st) const;

  // Unknown fields: the API's strict field validation (kubectl's default
  // --validate=strict) refuses them with `strict decoding error: unknown field`.
  void known_fields(const boost::json::object& o, const Path& p, std::initializer_list<const char*> keys) const;

  const Document& doc() const;

 private:
  const Document& doc_;
  std::string kind_, version_, group_kind_, name_;
};

// ObjectMeta's namespace at `p`, as a create reaches validation; returns the
// namespace the object keeps. A cluster-scoped kind's (`namespaced` false) is
// cleared, never an error: rest.BeforeCreate (k8s.io/apiserver
// pkg/registry/rest/create.go) calls EnsureObjectNamespaceMatchesRequestNamespace
// (rest/meta.go), which sets it to "" before the strategy validates (kubectl
// sends such an object to a path without a namespace). A namespaced kind's,
// when given (else kubectl or the request path fills it), must be a DNS-1123
// label, else the 422 "metadata.namespace: Invalid value: ...": mirrors
// validateObjectMetaAccessorWithOptsCommon and ValidateNamespaceName
// (= NameIsDNSLabel), k8s.io/apimachinery pkg/api/validation/objectmeta.go
// and generic.go.
std::string validate_meta_namespace(const Decoder& d, const std::string& ns, bool namespaced, const Path& p);
// ObjectMeta's labels at `p` (ValidateLabels): throws the 422 of the first
// invalid key or value.
void validate_meta_labels(const Decoder& d, const Labels& labels, const Path& p);
// ObjectMeta's annotations at `p` (ValidateAnnotationsSize): throws a 422
// when keys and values together pass 256 KiB.
void validate_meta_annotations(const Decoder& d, const Labels& annotations, const Path& p);
// A node's taints at `p` (validateNodeTaints; upstream's path is
// metadata.taints): every error, for Decoder::invalid_all; empty when valid.
std::vector<FieldError> validate_node_taints(const std::vector<Taint>& taints, const Path& p);
// A pod spec at `p` (ValidatePodSpec, for the fields gpuops reads): throws
// the 422 of the first failure. With `spec_json` (the pod template's spec as
// written), also each container's ports (validateContainerPorts) and, with
// hostNetwork, their hostPort (validateHostNetwork), read from it: the typed
// model keeps no ports.
void validate_pod_spec(const Decoder& d, const PodSpec& s, const Path& p,
                       const boost::json::object* spec_json = nullptr);
// A workload's selector (ValidateDaemonSetSpec, ValidateDeploymentSpec):
// not empty, else the 422 "empty selector is invalid for <what>" at
// `selector_path`; and matching the template's labels, else the 422
// "`selector` does not match template `labels`" at `labels_path`.
void validate_selector_not_empty(const Decoder& d, const LabelSelector& selector, const char* what,
                                 const Path& selector_path);
void validate_selector_matches_template(const Decoder& d, const LabelSelector& selector, const Labels& labels,
                                        const Path& labels_path);
// A workload's pod template (`pod_spec` at `p`): restartPolicy Always and no
// activeDeadlineSeconds, as the 422s name `owner` ("DaemonSet", "ReplicaSet").
void validate_template_restart(const Decoder& d, const boost::json::object* pod_spec, const Path& p, const char* owner);

// The typed readers of core/codec/decode.cpp that the validation of other kinds
// (core/codec/validate_kinds.cpp) shares: o[key] or nullptr; ObjectMeta at
// root.metadata (sets the Decoder's name); label selector requirements; a
// pod spec (`strict`: unknown PodSpec fields are the 400).
// Inline, so a literal key's length is known where it is written, and an
// object's members are scanned in place (a decoded document's objects are small and
// hold each key once: the parser keeps the last of a repeated key), without
// the library's out-of-line lookup: about 100 lookups per pod were an eighth
// of reading a large dump.
inline const boost::json::value* get(const boost::json::object* o, std::string_view key) {
  if (!o) return nullptr;
  for (const auto& kv : *o) {
    const boost::json::string_view k = kv.key();
    if (k.size() == key.size() && std::memcmp(k.data(), key.data(), key.size()) == 0) return &kv.value();
  }
  return nullptr;
}
inline const boost::json::value* get(const boost::json::object* o, const char* key) {
  return get(o, std::string_view(key));
}
ObjectMeta decode_meta(Decoder& d, const boost::json::object& root, const Path& root_path);
// A node's spec.taints and a resource list (requests, limits, allocatable),
// decoded and validated (core/codec/decode_parts.cpp).
std::vector<Taint> decode_taints(Decoder& d, const boost::json::value* v, const Path& p);
std::map<std::string, Quantity> decode_resource_list(Decoder& d, const boost::json::value* v, const Path& p,
                                                     const char* st);
std::vector<Requirement> decode_requirements(Decoder& d, const boost::json::value* v, const Path& p, const char* st,
                                             const char* type);
PodSpec decode_pod_spec(Decoder& d, const boost::json::object* o, const Path& p, bool strict);

// ObjectMeta read and validated as ValidateObjectMeta does (core/codec/decode.cpp):
// the name required, then `name_rule` (a function of core/kube/names.h), the
// namespace (validate_meta_namespace), labels and annotations; sets the
// Decoder's name. A port number (IsValidPortNum) or name (IsValidPortName):
// upstream's first message, "" when valid; an IntOrString port at `p`
// (ValidatePortNumOrName), throwing (core/codec/validation.cpp).
ObjectMeta validate_object_meta(Decoder& d, const boost::json::object& root,
                                std::string (*name_rule)(const std::string&), bool namespaced);
// metadata.ownerReferences (the JSON array, or null) and metadata.finalizers
// at `p`, as ValidateOwnerReferences and ValidateFinalizers check them (part
// of validate_object_meta).
std::vector<FieldError> validate_owner_references(const boost::json::value* refs, const Path& p);
std::vector<FieldError> validate_finalizers(const std::vector<std::string>& finalizers, const Path& p);
// IsQualifiedName's messages for `value`, in its order; empty when valid
// (core/codec/validation.cpp).
std::vector<std::string> qualified_name_errors(const std::string& value);
std::string validate_port_number(int64_t port);
std::string validate_port_name(const std::string& name);
// field.ErrorList.ToAggregate's text of field errors "<field>: <message>":
// each distinct text once, in order; one alone as it is, several as
// "[a, b]". Linear in the errors (a request can carry 100,000).
std::string aggregate(const std::vector<std::string>& texts);
// strconv.Quote (core/base/terminal.h).
using core::go_quote;
// field.NotSupported's body: `Unsupported value: "v": supported values: "a", "b"`.
std::string not_supported(const std::string& value, std::initializer_list<const char*> supported);
void validate_port_num_or_name(const Decoder& d, const boost::json::value* v, const Path& p, const char* st);
// One kind each (core/codec/validate_rbac.cpp, core/codec/validate_monitoring.cpp); the
// apiVersion is checked by the caller.
void validate_cluster_role(const Document& doc);
void validate_role(const Document& doc);
void validate_cluster_role_binding(const Document& doc);
void validate_role_binding(const Document& doc);
void validate_service_monitor(const Document& doc);
void validate_prometheus_rule(const Document& doc);
// core/codec/validate_admission.cpp
void validate_validating_admission_policy(const Document& doc);
void validate_validating_admission_policy_binding(const Document& doc);

}  // namespace gpuops::core::codec_internal

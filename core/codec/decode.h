// core/codec/decode.h: JSON documents (core/codec/documents.h) -> typed objects, checked
// as the API server checks them on create.
//
// Strict where the API is strict: a JSON type that does not fit the Go field
// (the lab's unquoted `true` in a nodeSelector) is the API's 400 "json: cannot
// unmarshal bool into Go struct field PodSpec.spec.template.spec.nodeSelector
// of type string"; an unknown field of a DaemonSet's spec or pod template spec
// is 400 "strict decoding error: unknown field"; validation failures (a
// selector that does not match the template labels, an invalid quantity or
// label value, core/kube/names.h) are 422 Invalid; an apiVersion the API no
// longer serves (extensions/v1beta1 DaemonSet) is 404 "no matches for kind".
// Each throws core::InputError with file, line, field path and http_status.
// metadata.namespace as on create: a namespaced kind's (DaemonSet, Pod), when
// given, is a DNS-1123 label or the 422; a cluster-scoped kind's (Node,
// Namespace, the GPU Operator's resources) is dropped, never an error
// (codec_internal validate_meta_namespace names the upstream functions).
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/errors.h"
#include "core/codec/documents.h"
#include "core/model/model.h"

namespace gpuops::core {

// Decodes one document by its apiVersion and kind, validating it as the API
// server would on create. Throws InputError (with http_status 400, 404 or 422)
// when the API would refuse it, and InputError without a status when the
// document is not an object, has no kind or apiVersion, or is of a kind gpuops
// does not handle.
Object decode_object(const Document& doc);
// The same, moving the document's JSON into the object's `raw` instead of
// copying it (for a caller that is done with the document).
Object decode_object(Document&& doc);

// Decodes one document by its apiVersion and kind as the API server would
// on create, with the GPU Operator's CRDs installed: decode_object for
// Namespace, Node, DaemonSet and Pod; decode_cluster_policy for a
// ClusterPolicy of nvidia.com/v1 and decode_nvidia_driver for an
// NVIDIADriver of nvidia.com/v1alpha1 (the versions the CRDs serve; another
// is the 404 "no matches for kind"). Throws what those throw, and for any
// other kind InputError (no status) "kind \"K\" (V) is not handled by gpuops;
// expected Namespace, Node, DaemonSet, Pod, ClusterPolicy or NVIDIADriver".
// What `gpuops lint`, scenario apply steps, the simulator's API server and
// the real backend's apply decode a document as (every kind of core::Object).
Object decode_manifest(const Document& doc);

// Decodes and validates every document of every path (core/codec/documents.h
// read_paths) before returning, so a caller can refuse the whole set when any
// one is bad (nothing half-applied). Throws the first InputError.
std::vector<Object> load_manifests(const std::vector<std::string>& paths);

// One kind each, without the apiVersion/kind check of decode_object; `doc`
// must hold a JSON object. The checks and errors are those above.
Node decode_node(const Document& doc);
DaemonSet decode_daemonset(const Document& doc);
Pod decode_pod(const Document& doc);
Namespace decode_namespace(const Document& doc);
// As above, moving `doc.value` into `raw` (same checks, same errors; the
// document is left in a valid but unspecified state).
Node decode_node(Document&& doc);
DaemonSet decode_daemonset(Document&& doc);
Pod decode_pod(Document&& doc);
Namespace decode_namespace(Document&& doc);
// As above, with the same checks and errors, but `raw` left empty: for a
// reader of the typed fields only (encode then writes those alone). The
// document may live in any memory resource (e.g. a page's arena).
Node decode_node_typed(const Document& doc);
DaemonSet decode_daemonset_typed(const Document& doc);
Pod decode_pod_typed(const Document& doc);
// What decode_node_typed and decode_pod_typed read of a Node's and a Pod's
// JSON, as a shape for stream_documents (core/codec/documents.h): a document built
// by it decodes to the same object, with the same errors, as the whole
// document. nullptr for every other kind (read whole).
const JsonShape* typed_shape(std::string_view kind);

// The GPU Operator's ClusterPolicy (nvidia.com/v1) and NVIDIADriver
// (nvidia.com/v1alpha1), both cluster-scoped: metadata checked as
// apiextensions-apiserver checks a custom resource's (customResourceValidator:
// ValidateObjectMetaAccessor with NameIsDNSSubdomain; the 422 names
// "ClusterPolicy.nvidia.com"; a namespace is dropped, as for every
// cluster-scoped kind), status.state and status.conditions typed, the whole
// object kept in `raw` (core/gpu_operator/cluster_policy.h reads the spec). An
// NVIDIADriver's spec.driverType defaults to "gpu".
ClusterPolicy decode_cluster_policy(const Document& doc);
NVIDIADriver decode_nvidia_driver(const Document& doc);

}  // namespace gpuops::core

// simulator/apiserver/api_route.h: the API server's resource table and the parsing of
// a request's path and query into what the handlers act on.
//
// Mirrors k8s.io/apiserver pkg/endpoints/request/requestinfo.go
// (RequestInfoFactory.NewRequestInfo: /api/v1/... and /apis/<group>/v1/...,
// an optional namespaces/<ns>, the resource, the name, the subresource) for
// the kinds served; the resource table is what the installer
// (pkg/endpoints/installer.go) registers for each of them.
#pragma once

#include <boost/url/url_view.hpp>

#include <map>
#include <string>
#include <vector>

#include "simulator/store/object_store.h"

namespace gpuops::simulator::internal {

// One served resource: its kind, names and scope.
struct Resource {
  Kind kind;
  const char* plural;
  const char* singular;
  const char* kind_name;
  const char* group;  // "" for core
  bool namespaced;
  const char* short_name;  // space-separated shortNames; "" for none
  bool in_all;             // category "all"
  const char* version = "v1";
  // A custom resource of the GPU Operator's CRDs: served only once the store
  // has them (ObjectStore::install_gpu_operator_crds); its Table has the
  // CRD's additionalPrinterColumns.
  bool custom = false;
};

// Every served resource, in discovery order. kResources[0] is namespaces
// (errors about a missing namespace name it).
inline constexpr Resource kResources[] = {
    {Kind::kNamespace, "namespaces", "namespace", "Namespace", "", false, "ns", false},
    {Kind::kNode, "nodes", "node", "Node", "", false, "no", false},
    {Kind::kPod, "pods", "pod", "Pod", "", true, "po", true},
    {Kind::kDaemonSet, "daemonsets", "daemonset", "DaemonSet", "apps", true, "ds", true},
    // Written by the DaemonSet controller only: served for get, list, watch
    // and delete (kubectl rollout history/undo read them).
    {Kind::kControllerRevision, "controllerrevisions", "controllerrevision", "ControllerRevision", "apps", true, "",
     false},
    // deployments/gpu-operator/crds/ of NVIDIA/gpu-operator: names, scope,
    // served version.
    {Kind::kClusterPolicy, "clusterpolicies", "clusterpolicy", "ClusterPolicy", "nvidia.com", false, "", false, "v1",
     true},
    {Kind::kNVIDIADriver, "nvidiadrivers", "nvidiadriver", "NVIDIADriver", "nvidia.com", false,
     "nvd nvdriver nvdrivers", false, "v1alpha1", true},
};

// Whether the resource takes create, update and patch (and has a status
// subresource): every kind but ControllerRevisions.
inline bool writable(const Resource& r) { return r.kind != Kind::kControllerRevision; }

// The resource `plural` of `group` ("" for core) at `version`, or nullptr.
const Resource* find_resource(const std::string& group, const std::string& version, const std::string& plural);

// "v1" / "apps/v1" / "nvidia.com/v1alpha1".
std::string api_version(const Resource& r);

// "daemonsets.apps" / "pods", as errors name resources.
std::string qualified(const Resource& r);

// "DaemonSet.apps" / "Pod", as 422 Invalid messages name kinds
// (schema.GroupKind.String()).
std::string group_kind(const Resource& r);

// "<plural>/<ns>/<name>" ("<plural>/<name>" for cluster-scoped kinds): the
// key of an object in the server's own maps (server-side apply).
std::string object_key(const Resource& r, const std::string& ns, const std::string& name);

// The parsed path of a resource request.
struct Route {
  const Resource* res = nullptr;
  std::string ns;
  std::string name;  // empty: the collection
  bool status = false;
};

// Parses the path segments of a resource request (/api/v1/... or
// /apis/<group>/<version>/...; trailing empty segments already dropped) into
// `r`. False when the path names no resource of kResources (custom ones
// included: the caller checks that their CRDs are installed) or has segments
// beyond <name>/status.
bool parse_route(const std::vector<std::string>& segs, Route& r);

// The query parameters, decoded (space_as_plus: Go's url.ParseQuery). A
// parameter given twice keeps its last value.
std::map<std::string, std::string> query_of(const boost::urls::url_view& u);

// "true" or "1", as the query's booleans are read.
bool truthy(const std::string& v);

}  // namespace gpuops::simulator::internal

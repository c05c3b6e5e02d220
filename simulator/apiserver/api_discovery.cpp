// Discovery and OpenAPI: /version, /api, /apis, /apis/<group>, /api/v1,
// /apis/<group>/<version> and /openapi/v3, for apps/v1 and, once their CRDs
// are installed, nvidia.com/v1 and nvidia.com/v1alpha1 (the GPU Operator's
// custom resources; the CRDs' storage version v1 is the group's preferred). Mirrors k8s.io/apiserver
// pkg/endpoints/discovery (legacy.go, root.go, group.go, version.go: the
// APIVersions, APIGroupList, APIGroup and APIResourceList documents),
// pkg/server/routes/version.go, and the /openapi/v3 index and documents of
// k8s.io/kube-openapi pkg/handler3, cut down to what kubectl reads.
#include "simulator/apiserver/api_server_impl.h"

#include <algorithm>

namespace gpuops::simulator {

namespace json = boost::json;
namespace http = boost::beast::http;
using internal::kResources;
using internal::Resource;

namespace {

json::object discovery_resource(const Resource& r, bool status) {
  json::object o;
  o["name"] = status ? std::string(r.plural) + "/status" : std::string(r.plural);
  o["singularName"] = status ? "" : r.singular;
  o["namespaced"] = r.namespaced;
  o["kind"] = r.kind_name;
  json::array verbs;
  if (status) {
    verbs = {"get", "patch", "update"};
  } else if (!internal::writable(r)) {
    verbs = {"delete", "get", "list", "watch"};
  } else {
    verbs = {"create", "delete", "get", "list", "patch", "update", "watch"};
  }
  if (!status) {
    json::array shorts;
    std::string names = r.short_name;
    for (size_t at = 0; at < names.size();) {
      size_t end = names.find(' ', at);
      if (end == std::string::npos) end = names.size();
      shorts.push_back(json::string(names.substr(at, end - at)));
      at = end + 1;
    }
    if (!shorts.empty()) o["shortNames"] = shorts;
    if (r.in_all) o["categories"] = json::array{"all"};
  }
  o["verbs"] = verbs;
  return o;
}

json::object resource_list(const std::string& group, const std::string& version) {
  json::object o;
  o["kind"] = "APIResourceList";
  o["apiVersion"] = "v1";
  o["groupVersion"] = group.empty() ? version : group + "/" + version;
  json::array rs;
  for (const auto& r : kResources) {
    if (group != r.group || version != r.version) continue;
    rs.push_back(discovery_resource(r, false));
    if (internal::writable(r)) rs.push_back(discovery_resource(r, true));
  }
  o["resources"] = rs;
  return o;
}

// The APIGroup of `group`: its versions in kResources' order, the first
// preferred.
json::object api_group(const std::string& group) {
  json::array versions;
  std::vector<std::string> seen;
  for (const auto& r : kResources) {
    if (group != r.group || std::find(seen.begin(), seen.end(), r.version) != seen.end()) continue;
    seen.push_back(r.version);
    versions.push_back(json::object{{"groupVersion", group + "/" + r.version}, {"version", r.version}});
  }
  json::object g;
  g["name"] = group;
  g["preferredVersion"] = versions.front();
  g["versions"] = versions;
  return g;
}

// The served groups: apps, and nvidia.com when `custom`.
std::vector<std::string> served_groups(bool custom) {
  std::vector<std::string> out;
  for (const auto& r : kResources) {
    if (std::string(r.group).empty() || (r.custom && !custom)) continue;
    if (std::find(out.begin(), out.end(), r.group) == out.end()) out.push_back(r.group);
  }
  return out;
}

// Minimal OpenAPI v3 documents: for each resource, the item path's PATCH
// operation with its group-version-kind extension and the fieldValidation
// query parameter, which is what kubectl's QueryParamVerifierV3
// (cli-runtime pkg/resource/query_param_verifier_v3.go) looks for before it
// leaves validation to the server (fieldValidation=Strict) instead of
// downloading schemas. No component schemas: kubectl then builds strategic
// merge patches from its compiled-in types.
json::object openapi_v3_index(bool custom) {
  json::object paths;
  for (const auto& r : kResources) {
    if (r.custom && !custom) continue;
    std::string gv = std::string(r.group).empty() ? "api/v1" : "apis/" + std::string(r.group) + "/" + r.version;
    paths[gv] = json::object{{"serverRelativeURL", "/openapi/v3/" + gv + "?hash=gpuops"}};
  }
  return json::object{{"paths", paths}};
}

json::object openapi_v3_doc(const std::string& group, const std::string& version) {
  json::object paths;
  for (const auto& r : kResources) {
    if (group != r.group || version != r.version) continue;
    std::string prefix = group.empty() ? "/api/v1" : "/apis/" + group + "/" + version;
    std::string item = prefix + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.plural + "/{name}";
    json::object gvk{{"group", r.group}, {"version", r.version}, {"kind", r.kind_name}};
    json::array params;
    for (const char* p : {"dryRun", "fieldManager", "fieldValidation", "force"})
      params.push_back(json::object{{"name", p}, {"in", "query"}, {"schema", json::object{{"type", "string"}}}});
    json::object patch{{"operationId", std::string("patch") + r.kind_name},
                       {"parameters", params},
                       {"x-kubernetes-action", "patch"},
                       {"x-kubernetes-group-version-kind", gvk},
                       {"responses", json::object{{"200", json::object{{"description", "OK"}}}}}};
    paths[item] = json::object{{"patch", patch}};
  }
  json::object doc;
  doc["openapi"] = "3.0.0";
  doc["info"] = json::object{{"title", "Kubernetes"}, {"version", "v1.32.0"}};
  doc["paths"] = paths;
  doc["components"] = json::object{{"schemas", json::object()}};
  return doc;
}

// The path segments are exactly `want`.
bool is(const std::vector<std::string>& segs, std::initializer_list<const char*> want) {
  if (segs.size() != want.size()) return false;
  size_t i = 0;
  for (const char* w : want)
    if (segs[i++] != w) return false;
  return true;
}

}  // namespace

std::optional<json::value> ApiServer::Impl::discovery(const std::vector<std::string>& segs, http::verb method) const {
  auto get_only = [&] {
    if (method != http::verb::get) internal::throw_method_not_allowed();
  };
  if (is(segs, {"version"})) {
    get_only();
    json::object v;
    v["major"] = "1";
    v["minor"] = "32";
    v["gitVersion"] = opt.git_version;
    v["gitCommit"] = "";
    v["gitTreeState"] = "clean";
    v["buildDate"] = "1970-01-01T00:00:00Z";
    v["goVersion"] = "";
    v["compiler"] = "gc";
    v["platform"] = "linux/amd64";
    return v;
  }
  if (is(segs, {"api"})) {
    get_only();
    json::object cidr;
    cidr["clientCIDR"] = "0.0.0.0/0";
    cidr["serverAddress"] = host;
    return json::object{
        {"kind", "APIVersions"}, {"versions", json::array{"v1"}}, {"serverAddressByClientCIDRs", json::array{cidr}}};
  }
  const bool custom = cluster.store().gpu_operator_crds();
  const std::vector<std::string> groups = served_groups(custom);
  auto served = [&](const std::string& g) { return std::find(groups.begin(), groups.end(), g) != groups.end(); };
  auto served_version = [&](const std::string& g, const std::string& v) {
    for (const auto& r : kResources)
      if (g == r.group && v == r.version && (!r.custom || custom)) return true;
    return false;
  };
  if (is(segs, {"apis"})) {
    get_only();
    json::array gs;
    for (const auto& g : groups) gs.push_back(api_group(g));
    return json::object{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", gs}};
  }
  if (segs.size() == 2 && segs[0] == "apis" && served(segs[1])) {
    get_only();
    json::object g = api_group(segs[1]);
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    return g;
  }
  if (is(segs, {"api", "v1"})) {
    get_only();
    return resource_list("", "v1");
  }
  if (segs.size() == 3 && segs[0] == "apis" && served_version(segs[1], segs[2])) {
    get_only();
    return resource_list(segs[1], segs[2]);
  }
  if (is(segs, {"openapi", "v3"})) {
    get_only();
    return openapi_v3_index(custom);
  }
  if (is(segs, {"openapi", "v3", "api", "v1"})) {
    get_only();
    return openapi_v3_doc("", "v1");
  }
  if (segs.size() == 5 && segs[0] == "openapi" && segs[1] == "v3" && segs[2] == "apis" &&
      served_version(segs[3], segs[4])) {
    get_only();
    return openapi_v3_doc(segs[3], segs[4]);
  }
  return std::nullopt;
}

}  // namespace gpuops::simulator

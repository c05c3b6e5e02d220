// Discovery and OpenAPI: /version, /api, /apis, /apis/apps, /api/v1,
// /apis/apps/v1 and /openapi/v3. Mirrors k8s.io/apiserver
// pkg/endpoints/discovery (legacy.go, root.go, group.go, version.go: the
// APIVersions, APIGroupList, APIGroup and APIResourceList documents),
// pkg/server/routes/version.go, and the /openapi/v3 index and documents of
// k8s.io/kube-openapi pkg/handler3, cut down to what kubectl reads.
#include "simulator/api_server_impl.h"

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
  if (!status && *r.short_name) o["shortNames"] = json::array{r.short_name};
  if (!status && r.in_all) o["categories"] = json::array{"all"};
  o["verbs"] = verbs;
  return o;
}

json::object resource_list(const std::string& group) {
  json::object o;
  o["kind"] = "APIResourceList";
  o["apiVersion"] = "v1";
  o["groupVersion"] = group.empty() ? "v1" : group + "/v1";
  json::array rs;
  for (const auto& r : kResources) {
    if (group != r.group) continue;
    rs.push_back(discovery_resource(r, false));
    if (internal::writable(r)) rs.push_back(discovery_resource(r, true));
  }
  o["resources"] = rs;
  return o;
}

json::object apps_group() {
  json::object gv;
  gv["groupVersion"] = "apps/v1";
  gv["version"] = "v1";
  json::object g;
  g["name"] = "apps";
  g["versions"] = json::array{gv};
  g["preferredVersion"] = gv;
  return g;
}

// Minimal OpenAPI v3 documents: for each resource, the item path's PATCH
// operation with its group-version-kind extension and the fieldValidation
// query parameter, which is what kubectl's QueryParamVerifierV3
// (cli-runtime pkg/resource/query_param_verifier_v3.go) looks for before it
// leaves validation to the server (fieldValidation=Strict) instead of
// downloading schemas. No component schemas: kubectl then builds strategic
// merge patches from its compiled-in types.
json::object openapi_v3_index() {
  json::object paths;
  paths["api/v1"] = json::object{{"serverRelativeURL", "/openapi/v3/api/v1?hash=gpuops"}};
  paths["apis/apps/v1"] = json::object{{"serverRelativeURL", "/openapi/v3/apis/apps/v1?hash=gpuops"}};
  return json::object{{"paths", paths}};
}

json::object openapi_v3_doc(const std::string& group) {
  json::object paths;
  for (const auto& r : kResources) {
    if (group != r.group) continue;
    std::string prefix = group.empty() ? "/api/v1" : "/apis/" + group + "/v1";
    std::string item = prefix + (r.namespaced ? "/namespaces/{namespace}/" : "/") + r.plural + "/{name}";
    json::object gvk{{"group", r.group}, {"version", "v1"}, {"kind", r.kind_name}};
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
    return json::object{{"kind", "APIVersions"},
                        {"versions", json::array{"v1"}},
                        {"serverAddressByClientCIDRs", json::array{cidr}}};
  }
  if (is(segs, {"apis"})) {
    get_only();
    return json::object{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array{apps_group()}}};
  }
  if (is(segs, {"apis", "apps"})) {
    get_only();
    json::object g = apps_group();
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    return g;
  }
  if (is(segs, {"api", "v1"})) {
    get_only();
    return resource_list("");
  }
  if (is(segs, {"apis", "apps", "v1"})) {
    get_only();
    return resource_list("apps");
  }
  if (is(segs, {"openapi", "v3"})) {
    get_only();
    return openapi_v3_index();
  }
  if (is(segs, {"openapi", "v3", "api", "v1"})) {
    get_only();
    return openapi_v3_doc("");
  }
  if (is(segs, {"openapi", "v3", "apis", "apps", "v1"})) {
    get_only();
    return openapi_v3_doc("apps");
  }
  return std::nullopt;
}

}  // namespace gpuops::simulator

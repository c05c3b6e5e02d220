// The resource table and request paths (simulator/apiserver/api_route.h); mirrors
// k8s.io/apiserver pkg/endpoints/request/requestinfo.go.
#include "simulator/apiserver/api_route.h"

#include <boost/url/encoding_opts.hpp>
#include <boost/url/params_view.hpp>

#include <cstddef>

namespace gpuops::simulator::internal {

const Resource* find_resource(const std::string& group, const std::string& version, const std::string& plural) {
  for (const auto& r : kResources)
    if (group == r.group && version == r.version && plural == r.plural) return &r;
  return nullptr;
}

std::string api_version(const Resource& r) {
  return std::string(r.group).empty() ? std::string(r.version) : std::string(r.group) + "/" + r.version;
}

std::string qualified(const Resource& r) {
  return std::string(r.plural) + (std::string(r.group).empty() ? "" : "." + std::string(r.group));
}

std::string group_kind(const Resource& r) {
  return std::string(r.kind_name) + (std::string(r.group).empty() ? "" : "." + std::string(r.group));
}

std::string object_key(const Resource& r, const std::string& ns, const std::string& name) {
  return std::string(r.plural) + "/" + (r.namespaced ? ns + "/" : "") + name;
}

bool parse_route(const std::vector<std::string>& segs, Route& r) {
  // /api/v1/... or /apis/<group>/<version>/...
  size_t i = 0;
  std::string group, version;
  if (segs.size() >= 2 && segs[0] == "api" && segs[1] == "v1") {
    version = "v1";
    i = 2;
  } else if (segs.size() >= 3 && segs[0] == "apis") {
    group = segs[1];
    version = segs[2];
    i = 3;
  } else {
    return false;
  }
  std::vector<std::string> rest(segs.begin() + static_cast<std::ptrdiff_t>(i), segs.end());
  if (rest.empty()) return false;
  if (rest.size() >= 3 && rest[0] == "namespaces") {
    const Resource* res = find_resource(group, version, rest[2]);
    if (!res || !res->namespaced) return false;
    r.res = res;
    r.ns = rest[1];
    if (rest.size() >= 4) r.name = rest[3];
    if (rest.size() == 5 && rest[4] == "status")
      r.status = true;
    else if (rest.size() > 4)
      return false;
    return true;
  }
  const Resource* res = find_resource(group, version, rest[0]);
  if (!res) return false;
  r.res = res;
  if (rest.size() >= 2) {
    if (res->namespaced) return false;  // /api/v1/pods/x is not a path
    r.name = rest[1];
  }
  if (rest.size() == 3 && rest[2] == "status")
    r.status = true;
  else if (rest.size() > 2)
    return false;
  return true;
}

std::map<std::string, std::string> query_of(const boost::urls::url_view& u) {
  std::map<std::string, std::string> q;
  boost::urls::encoding_opts opt;
  opt.space_as_plus = true;
  for (auto p : u.params(opt)) q[std::string(p.key)] = p.has_value ? std::string(p.value) : "";
  return q;
}

bool truthy(const std::string& v) { return v == "true" || v == "1"; }

}  // namespace gpuops::simulator::internal

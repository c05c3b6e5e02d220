// The patch verb: JSON patch, merge patch, strategic merge patch and
// server-side apply (simplified, docs/SERVE.md). Mirrors k8s.io/apiserver
// pkg/endpoints/handlers/patch.go (PatchResource: the patch type from the
// Content-Type, the patchers, the apply of an object that does not exist
// yet creating it); the patch algorithms are simulator/api_patch.h.
#include "core/codec/codec.h"
#include "core/codec/documents.h"
#include "core/codec/patch.h"
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator {

namespace json = boost::json;
namespace http = boost::beast::http;
using internal::throw_api;
using internal::to_api_error;

namespace {

// Fields the server-side apply of `prev` set that `next` no longer sets,
// as a patch that removes them (null for map keys, $patch: delete for items
// of merge-keyed lists).
json::value removals(const json::value& prev, const json::value& next, const std::string& path) {
  const json::object* p = prev.if_object();
  const json::object* n = next.if_object();
  if (!p || !n) return nullptr;
  json::object out;
  for (const auto& kv : *p) {
    std::string key(kv.key());
    std::string cp = path.empty() ? key : path + "." + key;
    const json::value* nv = n->if_contains(key);
    if (!nv) {
      out[key] = nullptr;
      continue;
    }
    if (kv.value().is_object() && nv->is_object()) {
      json::value sub = removals(kv.value(), *nv, cp);
      if (sub.is_object() && !sub.as_object().empty()) out[key] = sub;
    } else if (kv.value().is_array() && nv->is_array()) {
      std::string mk = patch_merge_key(cp);
      if (mk.empty()) continue;
      json::array dels;
      for (const auto& item : kv.value().as_array()) {
        const json::value* k = item.is_object() ? item.as_object().if_contains(mk) : nullptr;
        if (!k) continue;
        bool kept = false;
        for (const auto& ni : nv->as_array())
          if (ni.is_object() && ni.as_object().if_contains(mk) && *ni.as_object().if_contains(mk) == *k) kept = true;
        if (!kept) dels.push_back(json::object{{"$patch", "delete"}, {mk, *k}});
      }
      if (!dels.empty()) out[key] = dels;
    }
  }
  return out;
}

// Lays a removals patch under the applied configuration: the list items to
// delete are appended to the applied lists.
json::value combine(const json::value& applied, const json::value& rm) {
  if (!rm.is_object()) return applied;
  json::object out = applied.is_object() ? applied.as_object() : json::object();
  for (const auto& kv : rm.as_object()) {
    json::value* cur = out.if_contains(kv.key());
    if (!cur) {
      out[kv.key()] = kv.value();
    } else if (cur->is_object() && kv.value().is_object()) {
      *cur = combine(*cur, kv.value());
    } else if (cur->is_array() && kv.value().is_array()) {
      for (const auto& d : kv.value().as_array()) cur->as_array().push_back(d);
    }
  }
  return out;
}

// The media type of the request's Content-Type, without parameters.
std::string media_type(const internal::Request& req) {
  std::string ctype;
  if (auto it = req.find(http::field::content_type); it != req.end()) ctype = std::string(it->value());
  return ctype.substr(0, ctype.find(';'));
}

}  // namespace

json::value ApiServer::Impl::patch(const ResourceRequest& r, const std::optional<core::Object>& current, int& status) {
  std::string ctype = media_type(r.http);
  // patch.go checks the patch type first, then the options.
  if (ctype != "application/apply-patch+yaml" && ctype != "application/merge-patch+json" &&
      ctype != "application/strategic-merge-patch+json" && ctype != "application/json-patch+json")
    throw_api(415,
              "the body of the request was in an unknown format - accepted media types include: "
              "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, "
              "application/strategic-merge-patch+json");
  internal::validate_write_options(r, "PatchOptions", ctype == "application/apply-patch+yaml");
  if (ctype == "application/apply-patch+yaml") return apply(r, current, status);
  if (!current) internal::throw_not_found(r.res, r.route.name);
  // A number float64 cannot hold: the patch is decoded into interface{}
  // first and refused, 400, in the words kube-apiserver v1.37.2 answered
  // (measured): "error decoding patch: json: cannot unmarshal number 1e400
  // into Go value of type float64" (merge), "... into Go struct field
  // jsonPatchOp.value of type float64" (JSON patch, in an operation's value;
  // a key of an operation that is not one of its fields is skipped, not
  // decoded), and without the prefix for a strategic merge patch.
  if (auto big = core::first_out_of_range_number(r.http.body())) {
    const std::string cannot = "json: cannot unmarshal number " + big->literal + " into Go ";
    const size_t close = big->field.find(']');
    const bool in_op_value =
        !big->field.empty() && big->field[0] == '[' && close != std::string::npos &&
        big->field.compare(close + 1, 6, ".value") == 0 &&
        (big->field.size() == close + 7 || big->field[close + 7] == '.' || big->field[close + 7] == '[');
    if (ctype == "application/merge-patch+json")
      throw_api(400, "error decoding patch: " + cannot + "value of type float64");
    if (ctype == "application/json-patch+json" && in_op_value)
      throw_api(400, "error decoding patch: " + cannot + "struct field jsonPatchOp.value of type float64");
    if (ctype == "application/strategic-merge-patch+json") throw_api(400, cannot + "value of type float64");
  }
  json::value patch = internal::parse_json(r.http.body());
  json::value cur = core::encode(*current);
  json::value next;
  try {
    if (ctype == "application/merge-patch+json") {
      next = merge_patch(cur, patch);
    } else if (ctype == "application/strategic-merge-patch+json") {
      next = strategic_merge_patch(cur, patch);
    } else {
      next = json_patch(cur, patch);
    }
  } catch (const core::InputError& e) {
    throw to_api_error(e, &r.res, r.route.name);
  }
  if (!next.is_object()) throw_api(422, "the patch does not produce an object");
  internal::check_identity(r, next);  // patch.go: checkName, then the strategy's validation
  return store_update(r, current, next, true);
}

// Server-side apply, simplified (docs/SERVE.md): no managedFields and no
// conflicts; each field manager's last applied configuration is kept, and
// fields it applied before and leaves out now are removed.
json::value ApiServer::Impl::apply(const ResourceRequest& r, const std::optional<core::Object>& current, int& status) {
  // Present: validate_write_options refused an apply without one.
  std::string manager = internal::query_values(r, "fieldManager").front();
  json::value applied_cfg = read_request_body(r);
  if (!applied_cfg.is_object()) throw_api(400, "the object provided is unrecognized");
  json::object& ao = applied_cfg.as_object();
  ao.erase("status");
  std::string ns = r.res.namespaced ? r.route.ns : "";
  std::string akey = internal::object_key(r.res, ns, r.route.name) + "\n" + manager;
  if (!current) {
    // Applying an object that does not exist creates it.
    if (r.route.status) internal::throw_not_found(r.res, r.route.name);
    core::Object obj = internal::decode_for_route(r, applied_cfg);
    core::ObjectMeta& m = meta_of(obj);
    internal::check_name(r, m);
    internal::ensure_namespace(r, m);
    if (r.dry_run) {
      status = 201;
      return core::encode(obj);
    }
    core::Object stored = store_create(r, obj);
    applied[akey] = applied_cfg;
    status = 201;
    return core::encode(stored);
  }
  json::value patch = applied_cfg;
  if (auto it = applied.find(akey); it != applied.end())
    patch = combine(applied_cfg, removals(it->second, applied_cfg, ""));
  if (auto* md = patch.as_object().if_contains("metadata"); md && md->is_object())
    md->as_object().erase("resourceVersion");
  json::value next;
  try {
    next = strategic_merge_patch(core::encode(*current), patch);
  } catch (const core::InputError& e) {
    throw to_api_error(e, &r.res, r.route.name);
  }
  json::value out = store_update(r, current, next, true);
  if (!r.dry_run) applied[akey] = applied_cfg;
  return out;
}

}  // namespace gpuops::simulator

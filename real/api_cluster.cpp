#include "real/api_cluster.h"

#include <unistd.h>

#include <boost/json.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "core/base/errors.h"
#include "core/base/terminal.h"
#include "core/codec/decode.h"
#include "core/codec/documents.h"
#include "core/codec/encode.h"
#include "core/codec/pod_list_reader.h"
#include "core/kube/names.h"
#include "core/kube/placement.h"
#include "core/model/rfc3339.h"

namespace gpuops::real {
namespace {

namespace json = boost::json;
using http_verb = boost::beast::http::verb;
using std::chrono::milliseconds;

const char* kMergePatch = "application/merge-patch+json";
const char* kApplyPatch = "application/apply-patch+yaml";

std::string node_path(const std::string& name) { return "/api/v1/nodes/" + query_escape(name); }

json::object taint_json(const core::Taint& t) {
  json::object o{{"key", t.key}, {"effect", t.effect}};
  if (!t.value.empty()) o["value"] = t.value;
  if (t.time_added) o["timeAdded"] = core::format_time(*t.time_added);
  return o;
}

// The first cause's field of a Status, for InputError.
std::string first_field(const json::value& status) {
  const json::object* st = status.if_object();
  if (!st) return "";
  const json::object* d = st->contains("details") ? st->at("details").if_object() : nullptr;
  if (!d || !d->contains("causes") || !d->at("causes").is_array()) return "";
  for (const auto& c : d->at("causes").as_array())
    if (auto* co = c.if_object(); co && co->contains("field") && co->at("field").is_string())
      return std::string(co->at("field").as_string());
  return "";
}

// Removes what server-side apply must not be sent or would turn into a
// precondition (managedFields, resourceVersion, uid) or drops (status: the
// strategies' reset fields).
void prepare_apply_body(json::object& body) {
  if (auto* m = body.if_contains("metadata"); m && m->is_object()) {
    auto& mo = m->as_object();
    for (const char* k : {"managedFields", "resourceVersion", "uid", "creationTimestamp", "generation", "selfLink"})
      mo.erase(k);
  }
  body.erase("status");
}

// The body of a write, as apply() and add_node() send it: checked as the
// API server would check it (core::decode_manifest: InputError, nothing
// sent), then readied (prepare_apply_body). Returns the status it had
// (null when none), which neither a create nor a server-side apply keeps
// (the Node strategy's reset fields).
json::value checked_write_body(json::object& body, const std::string& what) {
  core::Document d;
  d.value = body;
  d.file = what;
  core::decode_manifest(d);
  json::value status = body.contains("status") ? body.at("status") : json::value(nullptr);
  prepare_apply_body(body);
  return status;
}

// A Node's status for its status subresource, as a merge patch on `r` (a
// PATCH of .../status), or nothing when the status is empty.
std::optional<Request> node_status_patch(Request r, const json::value& status) {
  if (!status.is_object() || status.as_object().empty()) return std::nullopt;
  r.body = json::serialize(json::object{{"status", status}});
  r.content_type = kMergePatch;
  return r;
}

}  // namespace

ApiCluster::ApiCluster(RestConfig config, ApiClusterOptions options, ClientOptions client_options)
    : options_(std::move(options)) {
  namespace_ = config.namespace_.empty() ? "default" : config.namespace_;
  settle_namespace_ = namespace_;
  client_ = std::make_unique<Client>(std::move(config), std::move(client_options));
}

void ApiCluster::list(const std::string& path, std::string* resource_version,
                      const std::function<void(json::array&)>& on_page, const std::function<void()>& on_restart,
                      const PageReader& read_page, const std::vector<std::pair<std::string, std::string>>& query) {
  // mirrors ListPager.List (client-go tools/pager/pager.go) with
  // FullListIfExpired: an expired continue token restarts without a limit.
  std::string cont;
  bool full = false;
  std::set<std::string> tokens;  // every continue token given so far
  size_t pages = 0;
  for (;;) {
    Request r{http_verb::get, path, query, "", ""};
    if (!full) r.query.emplace_back("limit", std::to_string(options_.page_size));
    if (!cont.empty()) r.query.emplace_back("continue", cont);
    // Each page is parsed into its own arena: read once, freed at once
    // (held by plain pointer, so the values are not walked on destruction;
    // `page` is in the arena too, so the assignment moves, not copies).
    json::monotonic_resource arena;
    json::storage_ptr sp(&arena);
    json::value page(sp);
    Response answer;
    try {
      answer = client_->send(r);
    } catch (const ApiError& e) {
      if (e.http_status() == 410 && !cont.empty() && !full) {
        full = true;
        cont.clear();
        on_restart();
        continue;
      }
      throw;
    }
    std::string next;
    std::optional<std::string> rv;
    if (read_page && read_page(answer.body, next, rv)) {
      cont = std::move(next);
      if (rv && resource_version) *resource_version = std::move(*rv);
    } else {
      page = client_->parse_json(r, answer.body, sp);
      json::object* po = page.if_object();  // not const: the items are handed out to modify
      if (!po) throw core::ClusterError("GET " + path + ": the answer is not a list");
      // A List's items are an array (absent or null: none, as Go decodes
      // them); anything else is a broken server, not an empty cluster.
      json::value* items = po->if_contains("items");
      if (items && !items->is_array() && !items->is_null())
        throw core::ClusterError("GET " + path + ": the answer is not a list (items is not an array)");
      cont.clear();
      if (auto* md = po->if_contains("metadata"); md && md->is_object()) {
        auto& mo = md->as_object();
        if (auto* v = mo.if_contains("resourceVersion"); v && v->is_string() && resource_version)
          *resource_version = std::string(v->as_string());
        if (auto* c = mo.if_contains("continue"); c && c->is_string()) cont = std::string(c->as_string());
      }
      if (items && items->is_array()) on_page(items->as_array());
    }
    if (cont.empty() || full) return;
    if (!tokens.insert(cont).second)
      throw core::ClusterError("GET " + path +
                               ": the server gave the same continue token twice; the list would never end");
    if (++pages >= client_->options().max_list_pages)
      throw core::ClusterError("GET " + path + ": more than " + std::to_string(client_->options().max_list_pages) +
                               " pages; the list would never end");
  }
}

void ApiCluster::list_items(const std::string& path, const std::string& what, std::string* resource_version,
                            const std::function<void(core::Document&)>& on_item,
                            const std::function<void()>& on_restart, const PageReader& read_page,
                            const std::vector<std::pair<std::string, std::string>>& query) {
  const std::string file = "GET " + path;
  list(
      path, resource_version,
      [&](json::array& items) {
        core::Document d{json::value(items.storage()), file, 0, {}, {}};  // in the page's arena
        for (auto& item : items) {
          if (!item.is_object())
            throw core::ClusterError("cannot read a " + what + " from the API server: " + file +
                                     ": an item of the list is not an object");
          d.value = std::move(item);
          try {
            on_item(d);
          } catch (const core::InputError& e) {
            throw core::ClusterError("cannot read a " + what + " from the API server: " + e.what());
          }
        }
      },
      on_restart, read_page, query);
}

core::ClusterState ApiCluster::state(const std::string& ns_in) {
  core::ClusterState s = workload_state(ns_in);
  // The GPU Operator's cluster-scoped resources, when their CRDs are
  // installed: a 404 (no such resource) means a cluster without the
  // operator, and a 403 a user whose role does not cover them; neither stops
  // the analyses, which then read the DaemonSets alone.
  auto optional_list = [&](const std::string& path, auto decode, auto& out) {
    try {
      list_items(
          path, "GPU Operator resource", nullptr, [&](core::Document& d) { out.push_back(decode(d)); },
          [&] { out.clear(); });
    } catch (const ApiError& e) {
      if (e.http_status() != 404 && e.http_status() != 403) throw;
      out.clear();
    }
  };
  optional_list("/apis/nvidia.com/v1/clusterpolicies", core::decode_cluster_policy, s.cluster_policies);
  optional_list("/apis/nvidia.com/v1alpha1/nvidiadrivers", core::decode_nvidia_driver, s.nvidia_drivers);
  s.gpu_workloads = gpu_workloads(s.namespace_);
  return s;
}

core::ClusterState ApiCluster::workload_state(const std::string& ns_in) {
  std::string ns = ns_in.empty() ? namespace_ : ns_in;
  settle_namespace_ = ns;
  core::ClusterState s;
  s.namespace_ = ns;
  // Durations are measured on this machine's clock, as kubectl's AGE is.
  s.observed_at = std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  // The objects keep no `raw`: what reads a state reads the typed fields
  // (the analyses, settle, the runners), and nothing writes them back.
  auto decode_all = [&](const std::string& path, const char* kind, auto decode, auto& out,
                        const PageReader& read_page = {}) {
    std::string rv;
    list_items(
        path, kind, &rv, [&](core::Document& d) { out.push_back(decode(d)); }, [&] { out.clear(); }, read_page);
    return rv;
  };
  decode_all("/api/v1/nodes", "Node", core::decode_node_typed, s.nodes);
  decode_all("/apis/apps/v1/namespaces/" + query_escape(ns) + "/daemonsets", "DaemonSet", core::decode_daemonset_typed,
             s.daemonsets);
  // Pod pages without a DOM where the page allows it (core::read_pod_list_page:
  // the same pods decode_pod_typed gives); any other page as the others.
  core::PodListPage fast;
  auto read_pods = [&](const std::string& body, std::string& cont, std::optional<std::string>& rv) {
    if (!core::read_pod_list_page(body, fast)) return false;
    // Room for this page and, from the server's remainingItemCount, the
    // pages to come (at most kReserveAhead pods ahead: a hint, not a
    // promise), so the pods are not moved again at each doubling.
    constexpr int64_t kReserveAhead = 65536;
    size_t ahead = fast.remaining_item_count && *fast.remaining_item_count > 0
                       ? static_cast<size_t>(std::min(*fast.remaining_item_count, kReserveAhead))
                       : 0;
    if (s.pods.capacity() < s.pods.size() + fast.pods.size())
      s.pods.reserve(std::max(s.pods.size() + fast.pods.size() + ahead, 2 * s.pods.size()));
    for (core::Pod& p : fast.pods) s.pods.push_back(std::move(p));
    cont = std::move(fast.continue_token);
    rv = std::move(fast.resource_version);
    return true;
  };
  last_pods_rv_ =
      decode_all("/api/v1/namespaces/" + query_escape(ns) + "/pods", "Pod", core::decode_pod_typed, s.pods, read_pods);
  return s;
}

Request ApiCluster::write_request(http_verb method, const std::string& path) const {
  Request r{method, path, {}, "", ""};
  if (options_.dry_run) r.query.emplace_back("dryRun", "All");
  return r;
}

void ApiCluster::send_write(const Request& r, const std::string& what) {
  try {
    client_->send(r);
  } catch (const ApiError& e) {
    // The API refused the object itself: bad input (exit 2).
    if (e.http_status() == 400 || e.http_status() == 422) {
      throw core::InputError::with_status(e.http_status(), what, 0, first_field(e.status()), e.what());
    }
    throw;
  }
}

void ApiCluster::apply(const std::vector<core::Object>& objects) {
  // Validate every object before the first write: nothing half-applied.
  std::vector<std::pair<Request, std::string>> writes;
  for (const auto& obj : objects) {
    json::object body = core::encode(obj);
    std::string what = core::describe(obj);
    std::string ns;
    std::string path;
    std::string name;
    if (auto* ds = std::get_if<core::DaemonSet>(&obj)) {
      ns = ds->metadata.namespace_.empty() ? namespace_ : ds->metadata.namespace_;
      name = ds->metadata.name;
      path = "/apis/apps/v1/namespaces/" + query_escape(ns) + "/daemonsets/" + query_escape(name);
    } else if (auto* pod = std::get_if<core::Pod>(&obj)) {
      ns = pod->metadata.namespace_.empty() ? namespace_ : pod->metadata.namespace_;
      name = pod->metadata.name;
      path = "/api/v1/namespaces/" + query_escape(ns) + "/pods/" + query_escape(name);
    } else if (auto* node = std::get_if<core::Node>(&obj)) {
      name = node->metadata.name;
      path = node_path(name);
    } else if (auto* n = std::get_if<core::Namespace>(&obj)) {
      name = n->metadata.name;
      path = "/api/v1/namespaces/" + query_escape(name);
    } else if (auto* cp = std::get_if<core::ClusterPolicy>(&obj)) {
      name = cp->metadata.name;
      path = "/apis/nvidia.com/v1/clusterpolicies/" + query_escape(name);
    } else if (auto* nvd = std::get_if<core::NVIDIADriver>(&obj)) {
      name = nvd->metadata.name;
      path = "/apis/nvidia.com/v1alpha1/nvidiadrivers/" + query_escape(name);
    }
    if (!ns.empty()) body["metadata"].as_object()["namespace"] = ns;
    json::value status = checked_write_body(body, what);
    // mirrors kubectl apply --server-side --force-conflicts (ApplyPatchType)
    Request r = write_request(http_verb::patch, path);
    r.query.emplace_back("fieldManager", options_.field_manager);
    r.query.emplace_back("force", "true");
    r.body = json::serialize(body);
    r.content_type = kApplyPatch;
    writes.emplace_back(std::move(r), what);
    // Server-side apply drops status (the Node strategy's reset fields), so a
    // Node's status (allocatable, conditions: what a KWOK node carries) goes
    // to the status subresource as a merge patch.
    if (std::holds_alternative<core::Node>(obj))
      if (auto sr = node_status_patch(write_request(http_verb::patch, path + "/status"), status))
        writes.emplace_back(std::move(*sr), what);
  }
  for (const auto& [r, what] : writes) send_write(r, what);
}

void ApiCluster::create_namespace(const std::string& name) {
  Request r = write_request(http_verb::post, "/api/v1/namespaces");
  r.body = json::serialize(json::object{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  r.content_type = "application/json";
  try {
    send_write(r, "Namespace " + name);
  } catch (const ApiError& e) {
    if (e.http_status() == 409 && e.reason() == "AlreadyExists") return;
    throw;
  }
}

void ApiCluster::patch_node(const std::string& node, const json::object& patch, const std::string& content_type,
                            bool status) {
  Request r = write_request(http_verb::patch, node_path(node) + (status ? "/status" : ""));
  r.body = json::serialize(patch);
  r.content_type = content_type;
  try {
    send_write(r, "Node " + node);
  } catch (const ApiError& e) {
    if (e.http_status() == 404) throw core::ClusterError("node " + core::go_quote(node) + " not found", 404);
    throw;
  }
}

void ApiCluster::patch_cluster_policy(const std::string& name, const json::object& merge_patch) {
  Request r = write_request(http_verb::patch, "/apis/nvidia.com/v1/clusterpolicies/" + query_escape(name));
  r.body = json::serialize(merge_patch);
  r.content_type = kMergePatch;
  try {
    send_write(r, "ClusterPolicy " + name);
  } catch (const ApiError& e) {
    if (e.http_status() == 404)
      throw core::ClusterError("clusterpolicies.nvidia.com " + core::go_quote(name) + " not found", 404);
    throw;
  }
}

void ApiCluster::delete_cluster_policy(const std::string& name) {
  try {
    client_->send(write_request(http_verb::delete_, "/apis/nvidia.com/v1/clusterpolicies/" + query_escape(name)));
  } catch (const ApiError& e) {
    if (e.http_status() == 404)
      throw core::ClusterError("clusterpolicies.nvidia.com " + core::go_quote(name) + " not found", 404);
    throw;
  }
}

bool ApiCluster::serves_cluster_policies() {
  json::value doc;
  try {
    doc = client_->send_json(Request{http_verb::get, "/apis/nvidia.com/v1", {}, "", ""});
  } catch (const ApiError& e) {
    if (e.http_status() == 404) return false;
    throw;
  }
  const json::object* list = doc.if_object();
  const json::value* resources = list ? list->if_contains("resources") : nullptr;
  if (!resources || !resources->is_array()) return false;
  for (const auto& r : resources->get_array()) {
    const json::object* o = r.if_object();
    const json::value* name = o ? o->if_contains("name") : nullptr;
    if (name && name->is_string() && name->get_string() == "clusterpolicies") return true;
  }
  return false;
}

void ApiCluster::set_node_label(const std::string& node, const std::string& key,
                                const std::optional<std::string>& value) {
  if (auto m = core::validate_label_key(key); !m.empty())
    throw core::InputError("", 0, "metadata.labels", "invalid label key \"" + key + "\": " + m);
  if (value)
    if (auto m = core::validate_label_value(*value); !m.empty())
      throw core::InputError("", 0, "metadata.labels[" + key + "]", "invalid label value \"" + *value + "\": " + m);
  // mirrors kubectl label: a JSON merge patch, null removes the key
  json::object labels;
  if (value)
    labels[key] = *value;
  else
    labels[key] = nullptr;
  patch_node(node, json::object{{"metadata", {{"labels", std::move(labels)}}}}, kMergePatch);
}

// mirrors kubectl create: a POST, which the API server refuses with 409
// AlreadyExists when the node exists (nothing written); then the status, as
// apply() sends it.
void ApiCluster::add_node(const core::Node& node) {
  const core::Object obj(node);
  json::object body = core::encode(obj);
  const std::string what = core::describe(obj);
  json::value status = checked_write_body(body, what);
  Request r = write_request(http_verb::post, "/api/v1/nodes");
  r.query.emplace_back("fieldManager", options_.field_manager);
  r.body = json::serialize(body);
  r.content_type = "application/json";
  try {
    send_write(r, what);
  } catch (const ApiError& e) {
    const json::object* st = e.status().if_object();
    const json::value* message = st ? st->if_contains("message") : nullptr;
    if (e.http_status() == 409 && message && message->is_string())
      throw core::ClusterError(std::string(message->get_string()), 409);
    throw;
  }
  if (auto sr = node_status_patch(write_request(http_verb::patch, node_path(node.metadata.name) + "/status"), status))
    send_write(*sr, what);
}

void ApiCluster::delete_node(const std::string& node) {
  try {
    client_->send(write_request(http_verb::delete_, node_path(node)));
  } catch (const ApiError& e) {
    if (e.http_status() == 404) throw core::ClusterError("node " + core::go_quote(node) + " not found", 404);
    throw;
  }
}

void ApiCluster::set_node_taints(const std::string& node, const std::vector<core::Taint>& taints) {
  json::value list = nullptr;
  if (!taints.empty()) {
    json::array a;
    for (const auto& t : taints) a.push_back(taint_json(t));
    list = std::move(a);
  }
  patch_node(node, json::object{{"spec", {{"taints", std::move(list)}}}}, kMergePatch);
}

void ApiCluster::set_node_unschedulable(const std::string& node, bool unschedulable) {
  json::value v = unschedulable ? json::value(true) : json::value(nullptr);
  patch_node(node, json::object{{"spec", {{"unschedulable", std::move(v)}}}}, kMergePatch);
}

void ApiCluster::set_node_ready(const std::string& node, const std::string& status) {
  if (status != "True" && status != "False" && status != "Unknown")
    throw core::InputError("", 0, "status.conditions[Ready].status",
                           "Unsupported value: \"" + status + "\": supported values: \"False\", \"True\", \"Unknown\"");
  // A merge patch replaces the whole list, so read it, change Ready, and send
  // it back with resourceVersion as a precondition; retried on 409 Conflict as
  // kubectl's patcher does (up to 5 times).
  auto now = std::chrono::floor<milliseconds>(std::chrono::system_clock::now());
  std::string stamp = core::format_time(core::Time(now.time_since_epoch()));
  for (int attempt = 0;; ++attempt) {
    json::value cur;
    try {
      cur = client_->send_json(Request{http_verb::get, node_path(node), {}, "", ""});
    } catch (const ApiError& e) {
      if (e.http_status() == 404) throw core::ClusterError("node " + core::go_quote(node) + " not found", 404);
      throw;
    }
    json::array conds;
    std::string rv;
    if (auto* o = cur.if_object()) {
      if (auto* md = o->if_contains("metadata"); md && md->is_object())
        if (auto* v = md->as_object().if_contains("resourceVersion"); v && v->is_string()) rv = v->as_string().c_str();
      if (auto* st = o->if_contains("status"); st && st->is_object())
        if (auto* cs = st->as_object().if_contains("conditions"); cs && cs->is_array()) conds = cs->as_array();
    }
    json::object ready{{"type", "Ready"},
                       {"status", status},
                       {"reason", "GpuopsSet"},
                       {"message", "set by gpuops"},
                       {"lastHeartbeatTime", stamp}};
    bool found = false;
    for (auto& c : conds) {
      auto* co = c.if_object();
      if (!co || !co->contains("type") || co->at("type") != "Ready") continue;
      found = true;
      bool changed = !co->contains("status") || co->at("status") != status.c_str();
      ready["lastTransitionTime"] =
          changed || !co->contains("lastTransitionTime") ? json::value(stamp) : co->at("lastTransitionTime");
      c = ready;
    }
    if (!found) {
      ready["lastTransitionTime"] = stamp;
      conds.push_back(ready);
    }
    json::object patch{{"status", {{"conditions", std::move(conds)}}}};
    if (!rv.empty()) patch["metadata"] = json::object{{"resourceVersion", rv}};
    try {
      patch_node(node, patch, kMergePatch, true);
      return;
    } catch (const ApiError& e) {
      if (e.http_status() != 409 || attempt >= 4) throw;
    }
  }
}

void ApiCluster::delete_pod(const std::string& ns, const std::string& name) {
  std::string n = ns.empty() ? namespace_ : ns;
  try {
    client_->send(
        write_request(http_verb::delete_, "/api/v1/namespaces/" + query_escape(n) + "/pods/" + query_escape(name)));
  } catch (const ApiError& e) {
    if (e.http_status() == 404) throw core::ClusterError("pod " + core::go_quote(n + "/" + name) + " not found", 404);
    throw;
  }
}

void ApiCluster::delete_daemonset(const std::string& ns, const std::string& name, const std::string& cascade) {
  std::string n = ns.empty() ? namespace_ : ns;
  Request r = write_request(http_verb::delete_,
                            "/apis/apps/v1/namespaces/" + query_escape(n) + "/daemonsets/" + query_escape(name));
  r.body = json::serialize(json::object{{"kind", "DeleteOptions"},
                                        {"apiVersion", "v1"},
                                        {"propagationPolicy", core::Cluster::propagation_policy(cascade)}});
  r.content_type = "application/json";
  try {
    send_write(r, "DaemonSet " + n + "/" + name);
  } catch (const ApiError& e) {
    if (e.http_status() == 404)
      throw core::ClusterError("daemonset " + core::go_quote(n + "/" + name) + " not found", 404);
    throw;
  }
}

void ApiCluster::delete_namespace(const std::string& name) {
  const std::string path = "/api/v1/namespaces/" + query_escape(name);
  try {
    client_->send(write_request(http_verb::delete_, path));
  } catch (const ApiError& e) {
    if (e.http_status() == 404) return;
    throw;
  }
  if (options_.dry_run) return;
  auto deadline = std::chrono::steady_clock::now() + options_.settle_timeout;
  auto poll = std::min(options_.settle_poll, milliseconds(500));
  for (;;) {
    try {
      client_->send(Request{http_verb::get, path, {}, "", ""});
    } catch (const ApiError& e) {
      if (e.http_status() == 404) return;
      throw;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw core::ClusterError("namespace \"" + name + "\" is still terminating after " +
                               std::to_string(options_.settle_timeout.count()) + "ms");
    std::this_thread::sleep_for(poll);
  }
}

void ApiCluster::settle() {
  using Steady = std::chrono::steady_clock;
  auto deadline = Steady::now() + options_.settle_timeout;
  std::ostream* progress = options_.progress ? options_.progress : (isatty(2) == 1 ? &std::cerr : nullptr);
  bool printed = false;
  // Since when only a stale desiredNumberScheduled was left (when stale_seen).
  bool stale_seen = false;
  Steady::time_point stale_since = Steady::now();
  auto clear = [&] {
    if (printed && progress) *progress << "\r\033[K" << std::flush;
  };
  for (;;) {
    if (options_.interrupted && options_.interrupted()) {
      clear();
      throw core::ClusterError("interrupted");
    }
    core::ClusterState s;
    try {
      s = workload_state(settle_namespace_);
    } catch (...) {
      clear();
      throw;
    }
    std::vector<std::string> stale;
    std::vector<std::string> pending = settle_pending(s, &stale);
    auto now = Steady::now();
    if (pending.empty()) {
      if (!stale.empty() && !stale_seen) {
        stale_seen = true;
        stale_since = now;
      }
      if (stale.empty() || now - stale_since >= kStaleDesiredGrace || now >= deadline) {
        clear();
        return;
      }
      pending = stale;
    } else {
      stale_seen = false;
    }
    if (now >= deadline) {
      clear();
      auto ms = options_.settle_timeout.count();
      std::string m = "the cluster did not settle within " +
                      (ms % 1000 == 0 ? std::to_string(ms / 1000) + "s" : std::to_string(ms) + "ms") + ": ";
      for (size_t i = 0; i < pending.size() && i < 5; ++i) m += (i ? "; " : "") + pending[i];
      if (pending.size() > 5) m += "; and " + std::to_string(pending.size() - 5) + " more";
      throw core::ClusterError(m);
    }
    if (progress) {
      auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - now).count();
      *progress << "\r\033[Ksettling: " << pending.size() << " pending (" << pending.front() << "), " << left
                << "s left" << std::flush;
      printed = true;
    }
    auto wait = std::min<milliseconds>(options_.settle_poll,
                                       std::chrono::duration_cast<milliseconds>(deadline - now) + milliseconds(1));
    // Wait for the next pod change (or the poll interval): a watch from the
    // list's resourceVersion, bookmarks allowed, as a Reflector would start it.
    bool watched = false;
    if (!last_pods_rv_.empty()) {
      std::string rv = last_pods_rv_;
      auto secs = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(wait).count() + 1);
      Request w{http_verb::get,
                "/api/v1/namespaces/" + query_escape(settle_namespace_) + "/pods",
                {{"watch", "1"},
                 {"allowWatchBookmarks", "true"},
                 {"resourceVersion", rv},
                 {"timeoutSeconds", std::to_string(secs)}},
                "",
                ""};
      try {
        client_->watch(
            w,
            [&](const json::object& ev) {
              auto* t = ev.if_contains("type");
              // a BOOKMARK only moves the resourceVersion on; anything else
              // (a change, or an ERROR such as 410 Expired) means re-list
              return t && t->is_string() && t->as_string() == "BOOKMARK";
            },
            wait);
        watched = true;
      } catch (const ApiError& e) {
        if (e.http_status() == 401 || e.http_status() == 403) {
          // not allowed to watch: fall back to polling
        } else if (e.http_status() != 410 && e.http_status() < 500 && e.http_status() != 429) {
          clear();
          throw;
        }
      } catch (const core::ClusterError&) {
        // a dropped watch: re-list (below, after the poll interval)
      }
    }
    if (!watched)
      std::this_thread::sleep_for(std::min(
          wait, std::chrono::duration_cast<milliseconds>(std::max(deadline - Steady::now(), Steady::duration(0)))));
  }
}

std::vector<std::string> settle_pending(const core::ClusterState& state, std::vector<std::string>* stale_desired) {
  std::vector<const core::DaemonSet*> dss;
  for (const auto& ds : state.daemonsets) dss.push_back(&ds);
  std::sort(dss.begin(), dss.end(), [](auto* a, auto* b) { return a->metadata.name < b->metadata.name; });
  std::vector<const core::Node*> nodes;
  for (const auto& n : state.nodes) nodes.push_back(&n);
  std::sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) { return a->metadata.name < b->metadata.name; });

  std::vector<std::string> out;
  // A new node carries node.kubernetes.io/not-ready:NoSchedule from the
  // NodeTaint admission plugin (plugin/pkg/admission/nodetaint) until the node
  // lifecycle controller sees Ready=True and removes it
  // (doNoScheduleTaintingPass): until then no DaemonSet pod should run there,
  // yet the controller is about to act.
  for (const core::Node* node : nodes) {
    if (node->ready_status() != "True") continue;
    for (const auto& t : node->taints)
      if (t.key == "node.kubernetes.io/not-ready" || t.key == "node.kubernetes.io/unreachable")
        out.push_back("Node " + node->metadata.name + ": taint " + t.key + ":" + t.effect + " while Ready is True");
  }
  for (const core::DaemonSet* ds : dss) {
    const std::string& dn = ds->metadata.name;
    // Pods this DaemonSet controls, by node (getNodesToDaemonPods).
    std::map<std::string, std::vector<const core::Pod*>> by_node;
    for (const auto& p : state.pods) {
      const core::OwnerReference* ref = p.metadata.controller_ref();
      if (!ref || ref->kind != "DaemonSet" || ref->name != dn) continue;
      if (!ref->uid.empty() && !ds->metadata.uid.empty() && ref->uid != ds->metadata.uid) continue;
      by_node[p.target_node()].push_back(&p);
    }
    const auto& st = ds->status;
    int expected = 0;
    int ready = 0;  // nodes that should run it with a Ready pod of it
    std::vector<std::string> not_running;
    for (const core::Node* node : nodes) {
      const std::string& nn = node->metadata.name;
      core::Placement pl = core::should_run(*ds, *node);
      auto it = by_node.find(nn);
      std::vector<const core::Pod*> pods = it == by_node.end() ? std::vector<const core::Pod*>{} : it->second;
      if (it != by_node.end()) by_node.erase(it);
      std::vector<const core::Pod*> active;
      for (auto* p : pods)
        if (!p->metadata.deletion_timestamp) active.push_back(p);
      if (pl.should_run) {
        ++expected;
        if (active.empty()) {
          out.push_back("DaemonSet " + dn + ": no pod on node " + nn);
          continue;
        }
        if (std::any_of(active.begin(), active.end(), [](const core::Pod* p) { return p->is_ready(); })) ++ready;
        for (auto* p : active)
          if (p->status.phase != "Running") {
            std::string m = "DaemonSet " + dn + ": pod " + p->metadata.name + " on node " + nn + " is " +
                            (p->status.phase.empty() ? "Pending" : p->status.phase);
            // A node without status.allocatable has not posted its capacity
            // yet (its kubelet, here KWOK, is about to): the scheduler's
            // NodeResourcesFit refuses it for now and retries on the node's
            // update, so the pod is still on its way whatever the status says.
            // A Pending pod neither refused by the scheduler (PodScheduled
            // False) nor seen by its kubelet (container statuses) is on its
            // way too; one that is Unschedulable or waiting for its image may
            // stay so, and is accepted once the status is up to date.
            bool refused = std::any_of(p->status.conditions.begin(), p->status.conditions.end(),
                                       [](const auto& c) { return c.type == "PodScheduled" && c.status == "False"; });
            bool seen = !p->status.container_statuses.empty() || !p->status.init_container_statuses.empty();
            if (node->allocatable.empty())
              out.push_back(m + " (node has no allocatable yet)");
            else if (p->status.phase == "Pending" && !refused && !seen)
              out.push_back(m + " (not scheduled or started yet)");
            else
              not_running.push_back(m);
          }
      } else if (!pl.should_continue_running) {
        for (auto* p : pods) out.push_back("DaemonSet " + dn + ": pod " + p->metadata.name + " remains on node " + nn);
      }
    }
    // Pods bound to nodes that no longer exist: pod GC deletes them
    // (gcOrphaned). A pod never bound (spec.nodeName empty, e.g. Pending for
    // lack of memory) whose target node is gone stays until the DaemonSet
    // syncs for another reason (getUnscheduledPodsWithoutNode in manage; the
    // controller has no node delete handler): nothing is about to happen.
    for (const auto& [nn, pods] : by_node)
      for (auto* p : pods)
        if (!p->spec.node_name.empty())
          out.push_back("DaemonSet " + dn + ": pod " + p->metadata.name + " remains on node " + nn);
    // A status that counts the right nodes but not yet their Ready pods: a
    // pod update always enqueues the DaemonSet (updatePod), so numberReady
    // is about to be written. (A stale desiredNumberScheduled is left alone.)
    if (st.desired_number_scheduled == expected && st.number_ready != ready)
      out.push_back("DaemonSet " + dn + ": status.numberReady is " + std::to_string(st.number_ready) +
                    ", Ready pods on the nodes that should run it: " + std::to_string(ready));
    if (stale_desired && st.desired_number_scheduled != expected)
      stale_desired->push_back("DaemonSet " + dn + ": status.desiredNumberScheduled is " +
                               std::to_string(st.desired_number_scheduled) +
                               ", nodes that should run it: " + std::to_string(expected));
    bool status_current = st.observed_generation >= ds->metadata.generation &&
                          st.desired_number_scheduled == expected && st.current_number_scheduled == expected &&
                          st.number_misscheduled == 0;
    if (!status_current) out.insert(out.end(), not_running.begin(), not_running.end());
  }
  return out;
}

}  // namespace gpuops::real

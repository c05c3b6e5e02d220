// The read verbs: get, list (label and field selectors, limit/continue,
// Tables) and watch (its initial state; the session streams it). Mirrors
// k8s.io/apiserver pkg/endpoints/handlers/get.go (GetResource,
// ListResource) and watch.go (serveWatch), with the continue token of
// pkg/storage/continue.go and the Table of handlers/response.go
// (transformResponseObject, asTable).
#include <algorithm>
#include <stdexcept>

#include "core/base/base64.h"
#include "core/codec/codec.h"
#include "simulator/apiserver/api_server_impl.h"
#include "simulator/apiserver/api_table.h"

namespace gpuops::simulator {

namespace json = boost::json;
namespace http = boost::beast::http;
using internal::ApiError;
using internal::ListOptions;
using internal::Resource;
using internal::throw_api;

namespace {

// Whether the Accept header's negotiation picked a Table (dispatch()
// refused the request when it picked nothing).
bool wants_table(const internal::ResourceRequest& r) {
  std::optional<std::string> kind = internal::negotiate_output(
      r.http, r.res.custom ? internal::Endpoint::kCustomResource : internal::Endpoint::kResource);
  return kind && *kind == "Table";
}

json::object row_for(const Resource& r, const json::object& obj, core::Time now, const std::string& include) {
  json::object row;
  row["cells"] = table_cells(r.kind_name, obj, now);
  if (include == "Object") {
    row["object"] = obj;
  } else if (include != "None") {
    json::object partial;
    partial["kind"] = "PartialObjectMetadata";
    partial["apiVersion"] = "meta.k8s.io/v1";
    const json::value* m = obj.if_contains("metadata");
    partial["metadata"] = m ? *m : json::object();
    row["object"] = partial;
  }
  return row;
}

json::object make_table(const Resource& r, const std::vector<json::object>& objs, core::Time now,
                        const std::string& include, json::object metadata) {
  json::object t;
  t["kind"] = "Table";
  t["apiVersion"] = "meta.k8s.io/v1";
  t["metadata"] = std::move(metadata);
  t["columnDefinitions"] = table_columns(r.kind_name);
  json::array rows;
  for (const auto& o : objs) rows.push_back(row_for(r, o, now, include));
  t["rows"] = rows;
  return t;
}

// An integer query parameter, `fallback` when absent; 400 `message` when it
// is not one.
int64_t int_param(const internal::ResourceRequest& r, const std::string& k, int64_t fallback,
                  const std::string& message) {
  if (r.param(k).empty()) return fallback;
  try {
    return std::stoll(r.param(k));
  } catch (const std::exception&) {
    throw_api(400, message);
  }
}

}  // namespace

json::value ApiServer::Impl::get(const ResourceRequest& r, const std::optional<core::Object>& current) {
  // GetOptions.resourceVersion: the cacher parses it (an error that is no
  // Status: 500, ErrorToAPIStatus) and waits until it has come that far.
  if (!r.param("resourceVersion").empty()) {
    std::string error;
    std::optional<uint64_t> rv = internal::parse_resource_version(r.param("resourceVersion"), error);
    if (!rv) throw ApiError{500, "", error, {}};
    internal::wait_until_fresh(*rv, cluster.store().resource_version());
  }
  if (!current) internal::throw_not_found(r.res, r.route.name);
  json::object j = core::encode(*current);
  if (wants_table(r)) {
    json::object md;
    md["resourceVersion"] = std::to_string(cluster.store().resource_version());
    return make_table(r.res, {j}, cluster.now(), r.param("includeObject"), md);
  }
  return j;
}

json::value ApiServer::Impl::list_or_watch(const ResourceRequest& r, const std::shared_ptr<Session>& s, bool& watching,
                                           json::storage_ptr sp) {
  ListOptions o;
  o.labels = LabelQuery::parse(r.param("labelSelector"));
  o.fields = FieldQuery::parse(r.param("fieldSelector"));
  o.fields.check_supported(r.res.kind_name);
  o.table = wants_table(r);
  o.include = r.param("includeObject");
  const bool watching_requested = internal::truthy(r.param("watch"));
  internal::validate_list_options(r, watching_requested);
  if (watching_requested) return watch(r, o, s, watching);
  return list(r, o, std::move(sp));
}

json::value ApiServer::Impl::watch(const ResourceRequest& r, const ListOptions& o, const std::shared_ptr<Session>& s,
                                   bool& watching) {
  const Resource& res = r.res;
  const std::string& ns = r.route.ns;
  ObjectStore& store = cluster.store();
  internal::WatchSpec spec;
  spec.res = &res;
  spec.ns = ns;
  spec.labels = o.labels;
  spec.fields = o.fields;
  spec.table = o.table;
  spec.include_object = o.include;
  spec.bookmarks = internal::truthy(r.param("allowWatchBookmarks"));
  std::string rv_text = r.param("resourceVersion");
  std::vector<std::pair<std::string, json::object>> initial;
  std::set<std::string> visible;
  uint64_t start_rv = store.resource_version();
  std::chrono::seconds timeout(int_param(r, "timeoutSeconds", 1800, "invalid timeoutSeconds"));
  auto matches = [&](const core::Object& obj, const json::object& j) {
    return o.labels.matches(meta_of(obj).labels) && o.fields.matches(j);
  };
  auto key_of = [](const core::Object& obj) { return meta_of(obj).namespace_ + "/" + meta_of(obj).name; };
  if (rv_text.empty() || rv_text == "0") {
    // "Get State and Start at Most Recent": synthetic ADDED events.
    for (const auto& obj : watch_candidates(res, ns, o.fields)) {
      json::object j = core::encode(obj);
      if (!matches(obj, j)) continue;
      initial.emplace_back("ADDED", j);
      visible.insert(key_of(obj));
    }
  } else {
    // "Start at Exact": the events after that version, coalesced
    // (ObjectStore::events_since), over what was visible at it.
    // Cacher.Watch returns ParseResourceVersion's storage.InvalidError as
    // it is, an error that is no Status: 500 with its text
    // (responsewriters.ErrorToAPIStatus). A version past the store's is
    // taken: the watch starts after it.
    std::string error;
    std::optional<uint64_t> parsed = internal::parse_resource_version(rv_text, error);
    if (!parsed) throw ApiError{500, "", error, {}};
    uint64_t rv = *parsed;
    // The cacher's watcher sends only events after the version asked for.
    start_rv = std::max(start_rv, rv);
    std::vector<WatchEvent> events;
    try {
      events = store.events_since(rv, res.kind, ns);
    } catch (const core::ClusterError& e) {
      // The cacher answers an expired version in-stream (newErrWatcher).
      initial.emplace_back("ERROR", internal::status_object(410, "Expired", e.what(), {}));
    }
    std::set<std::string> changed;
    for (const auto& ev : events) changed.insert(key_of(ev.object));
    for (const auto& obj : watch_candidates(res, ns, o.fields)) {
      std::string key = key_of(obj);
      if (changed.count(key)) continue;
      if (matches(obj, core::encode(obj))) visible.insert(key);
    }
    for (const auto& ev : events) {
      json::object j = core::encode(ev.object);
      bool m = matches(ev.object, j);
      if (ev.type == EventType::kDeleted) {
        if (m) initial.emplace_back("DELETED", j);
      } else if (m) {
        initial.emplace_back(ev.type == EventType::kAdded ? "ADDED" : "MODIFIED", j);
        visible.insert(key_of(ev.object));
      }
    }
  }
  watching = true;
  if (!s) return nullptr;  // handle_raw_request_for_fuzzing: no connection to stream to
  start_watch(s, std::move(spec), std::move(initial), start_rv, std::move(visible), timeout, r.http);
  return nullptr;
}

std::shared_ptr<const ApiServer::Impl::ListSnapshot> ApiServer::Impl::snapshot_for(const Resource& res,
                                                                                   const std::string& ns) {
  ObjectStore& store = cluster.store();
  std::shared_ptr<const ListSnapshot> snap = list_snapshot;
  if (snap && snap->res == &res && snap->ns == ns && snap->rv == store.resource_version()) return snap;
  auto fresh = std::make_shared<ListSnapshot>();
  fresh->res = &res;
  fresh->ns = ns;
  fresh->rv = store.resource_version();
  if (res.kind == Kind::kPod) {
    std::vector<const PodRecord*> recs = store.list_pods(ns);
    fresh->pods.reserve(recs.size());
    fresh->keys.reserve(recs.size());
    for (const PodRecord* rec : recs) {
      fresh->pods.push_back(*rec);
      fresh->keys.push_back(rec->namespace_() + "/" + rec->name);
    }
  } else {
    fresh->objects = store.list(res.kind, ns);
    fresh->keys.reserve(fresh->objects.size());
    for (const auto& obj : fresh->objects) {
      const core::ObjectMeta& m = meta_of(obj);
      fresh->keys.push_back(m.namespace_ + "/" + m.name);
    }
  }
  fresh->sorted = std::is_sorted(fresh->keys.begin(), fresh->keys.end());
  // Prototypes of pods no longer listed would only hold memory.
  if (pod_json.size() > 1024) pod_json.clear();
  return fresh;
}

std::shared_ptr<const ApiServer::Impl::ListSnapshot> ApiServer::Impl::pods_on_node(const Resource& res,
                                                                                   const std::string& ns,
                                                                                   const std::string& node) {
  ObjectStore& store = cluster.store();
  auto snap = std::make_shared<ListSnapshot>();
  snap->res = &res;
  snap->ns = ns;
  snap->rv = store.resource_version();
  std::vector<const PodRecord*> recs = store.list_pods_on_node(node, ns);
  snap->pods.reserve(recs.size());
  snap->keys.reserve(recs.size());
  for (const PodRecord* rec : recs) {
    snap->pods.push_back(*rec);
    snap->keys.push_back(rec->namespace_() + "/" + rec->name);
  }
  snap->sorted = std::is_sorted(snap->keys.begin(), snap->keys.end());
  if (pod_json.size() > 1024) pod_json.clear();  // as snapshot_for
  return snap;
}

std::vector<core::Object> ApiServer::Impl::watch_candidates(const Resource& res, const std::string& ns,
                                                            const FieldQuery& fields) {
  ObjectStore& store = cluster.store();
  const std::string* node = res.kind == Kind::kPod ? fields.exact_match("spec.nodeName") : nullptr;
  if (!node) return store.list(res.kind, ns);
  std::vector<core::Object> out;
  for (const PodRecord* rec : store.list_pods_on_node(*node, ns)) out.emplace_back(rec->pod());
  return out;
}

json::value ApiServer::Impl::list(const ResourceRequest& r, const ListOptions& o, json::storage_ptr sp) {
  const Resource& res = r.res;
  ObjectStore& store = cluster.store();
  // storage.ValidateListOptions: the continue token (no resourceVersion
  // beside it), else the resourceVersion, which the watch cache must have
  // reached (waitUntilFreshAndList, for every resourceVersionMatch).
  std::string cont = r.param("continue");
  std::string start = cont.empty() ? "" : internal::decode_continue(cont);
  const std::string rv_text = r.param("resourceVersion");
  if (!cont.empty() && !rv_text.empty() && rv_text != "0")
    throw_api(400, "specifying resource version is not allowed when using continue");
  if (cont.empty() && !rv_text.empty()) {
    std::string error;
    std::optional<uint64_t> rv = internal::parse_resource_version(rv_text, error);
    if (!rv) throw_api(400, "invalid resource version: " + error);
    internal::wait_until_fresh(*rv, store.resource_version());
  }
  int64_t limit = int_param(r, "limit", 0, "invalid limit");
  // A page costs the page: the snapshot of the kind is taken once per
  // paged list (at its first page, or when the store changed since), the
  // walk starts after the continue key, and only the page's items are
  // encoded (plus, with a field selector, the objects it tests). A pod list
  // with a spec.nodeName=<node> term walks the pods on that node only (the
  // watch cache lists from its spec.nodeName index, MatcherIndex): the
  // other pods would fail that term, so the page, its continue key and
  // everything else are what the walk over every pod gives.
  const std::string* node = res.kind == Kind::kPod ? o.fields.exact_match("spec.nodeName") : nullptr;
  std::shared_ptr<const ListSnapshot> snap =
      node ? pods_on_node(res, r.route.ns, *node) : snapshot_for(res, r.route.ns);
  const std::vector<std::string>& keys = snap->keys;
  size_t first = 0;
  if (!start.empty() && snap->sorted)
    first = static_cast<size_t>(std::upper_bound(keys.begin(), keys.end(), start) - keys.begin());
  bool selecting = !o.labels.empty() || !o.fields.empty();
  const bool pods = res.kind == Kind::kPod;
  auto encode_item = [&](size_t i) {
    return pods ? pod_json.encode(snap->pods[i], sp) : json::object(core::encode(snap->objects[i]), sp);
  };
  auto item_labels = [&](size_t i) -> const core::Labels& {
    return pods ? snap->pods[i].shared_meta().labels : meta_of(snap->objects[i]).labels;
  };
  // The page's items: a Table's rows are built from their JSON; a list's
  // items are written as text one by one (`text`, comma separated), the
  // list's envelope around them, as the API server's streaming list
  // encoder writes a list (streamingEncodeList, encodeItemsObjectIterator,
  // apimachinery/pkg/runtime/serializer/json/collections.go); the bytes are
  // those of serialising the whole list as one value.
  std::vector<json::object> rows;
  std::string text;
  int64_t count = 0;
  auto take = [&](size_t i, std::optional<json::object>& j) {
    ++count;
    if (o.table) {
      rows.push_back(j ? std::move(*j) : encode_item(i));
      return;
    }
    if (count > 1) text += ',';
    if (j)
      text += json::serialize(*j);
    else if (pods)
      pod_json.append_serialized(snap->pods[i], text);
    else
      text += json::serialize(core::encode(snap->objects[i]));
  };
  std::string last_key;
  bool more = false;
  int64_t remaining = 0;
  for (size_t i = first; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    if (!start.empty() && key <= start) continue;  // only when the keys are not sorted
    std::optional<json::object> j;
    if (selecting) {
      if (!o.labels.matches(item_labels(i))) continue;
      if (!o.fields.empty()) {
        // metadata.name and metadata.namespace are in the key ("ns/name"):
        // tested without building the object.
        const size_t slash = key.find('/');
        std::optional<bool> by_name = slash == std::string::npos
                                          ? std::nullopt
                                          : o.fields.matches_name(std::string_view(key).substr(0, slash),
                                                                  std::string_view(key).substr(slash + 1));
        if (by_name) {
          if (!*by_name) continue;
        } else {
          j = encode_item(i);
          if (!o.fields.matches(*j)) continue;
        }
      }
    }
    if (limit > 0 && count >= limit) {
      more = true;
      if (selecting) break;  // remainingItemCount is only sent without selectors
      if (snap->sorted) {
        remaining = static_cast<int64_t>(keys.size() - i);
        break;
      }
      ++remaining;
      continue;
    }
    take(i, j);
    last_key = key;
  }
  if (!node) list_snapshot = more ? snap : nullptr;  // a node's pods are not the kind's snapshot
  json::object md;
  md["resourceVersion"] = std::to_string(store.resource_version());
  if (more) {
    md["continue"] = internal::encode_continue(store.resource_version(), last_key);
    if (o.labels.empty() && o.fields.empty()) md["remainingItemCount"] = remaining;
  }
  if (o.table) return make_table(res, rows, cluster.now(), o.include, md);
  json::object page;
  page["kind"] = std::string(res.kind_name) + "List";
  page["apiVersion"] = internal::api_version(res);
  page["metadata"] = std::move(md);
  page["items"] = json::array();
  // The envelope ends with the empty items array and the closing brace:
  // the items go between the brackets.
  std::string envelope = json::serialize(page);
  constexpr std::string_view kEnd = "[]}";
  if (envelope.size() < kEnd.size() || envelope.compare(envelope.size() - kEnd.size(), kEnd.size(), kEnd) != 0)
    throw std::logic_error("list envelope does not end with its items");
  std::string& body = serialized_body.emplace();
  body.reserve(envelope.size() + text.size());
  body.append(envelope, 0, envelope.size() - 2);
  body += text;
  body += "]}";
  return nullptr;
}

}  // namespace gpuops::simulator

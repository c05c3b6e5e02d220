// simulator/apiserver/api_server_impl.h: the API server's insides, shared by its files
// (Internal to simulator/apiserver/: included by its files only).
//
// The files are cut as k8s.io/apiserver cuts pkg/endpoints:
//   api_server.cpp          the server: accept loop, TLS sessions (Session),
//                           timeouts and limits, the connection budget,
//                           the tick, start/stop, the drain of the
//                           watches' feed
//   api_handle.cpp          the token check, handle() (one request, one
//                           answer) and dispatch() (the router: one call
//                           per verb)
//   api_watch_feed.cpp      what open watches want (WatchInterest) and the
//                           store's writes queued for the drain
//   api_kubeconfig.cpp      the kubeconfig for clients of the server
//   api_route.{h,cpp}       the resource table, paths and query
//                           (pkg/endpoints/request/requestinfo.go)
//   api_status.{h,cpp}      errors as Status objects
//                           (apimachinery pkg/api/errors,
//                           handlers/responsewriters/status.go)
//   api_auth.cpp            the bearer token (authentication/request/bearertoken)
//   api_negotiation.cpp     the Accept header (handlers/negotiation)
//   api_discovery.cpp       /version, /api, /apis, ... and /openapi/v3
//                           (pkg/endpoints/discovery, kube-openapi handler3)
//   api_handlers_rest.cpp   what the verbs share: request bodies, name and
//                           namespace checks (handlers/rest.go)
//   api_handlers_read.cpp   get, list, watch (handlers/get.go, watch.go)
//   api_list_options.cpp    their options: ListOptions validation, continue
//                           tokens, resourceVersion (storage/continue.go)
//   api_handlers_create.cpp create (handlers/create.go)
//   api_handlers_update.cpp update (handlers/update.go)
//   api_handlers_patch.cpp  patch and server-side apply (handlers/patch.go)
//   api_handlers_delete.cpp delete (handlers/delete.go)
// Every handler runs on the I/O thread with the cluster mutex held (handle()).
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url/url_view.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/connection_budget.h"
#include "core/codec/documents.h"
#include "core/codec/patch.h"
#include "core/kube/selector.h"
#include "simulator/apiserver/api_pki.h"
#include "simulator/apiserver/api_route.h"
#include "simulator/apiserver/api_server.h"
#include "simulator/apiserver/api_status.h"
#include "simulator/apiserver/block_queue.h"
#include "simulator/store/pod_json.h"

namespace gpuops::simulator {

// apimachinery's selectors and patches (core/kube/selector.h,
// core/codec/patch.h), as the handlers use them.
using core::check_object_name;
using core::check_patched_identity;
using core::FieldQuery;
using core::json_patch;
using core::LabelQuery;
using core::merge_patch;
using core::patch_merge_key;
using core::strategic_merge_patch;

class Session;  // one connection (api_server.cpp)

namespace internal {

using Request = boost::beast::http::request<boost::beast::http::string_body>;

// A store write on its way to the open watches: what the write left, kept
// at the write (StoreWrite) and turned into JSON on the I/O thread.
struct FeedEvent {
  EventType type;
  Kind kind;
  uint64_t rv;  // the object's resourceVersion
  // Kind::kPod: the record as written (base and status shared), but for its
  // name and uid while `ids_pending`: those are then in `ids`, copied there
  // on the writer's thread without allocating (set_pod), and take_ids()
  // moves them into `pod` on the I/O thread before anything reads them.
  PodRecord pod;
  std::unique_ptr<const core::Object> object;  // other kinds
  static constexpr size_t kIds = 96;           // a pod's name and uid, when both fit
  std::array<char, kIds> ids;
  uint16_t name_size = 0;
  uint16_t uid_size = 0;
  bool ids_pending = false;

  // The writer's side (Feed::on_write): `pod` = `r` as above. Throws
  // std::bad_alloc (then the slot is not queued).
  void set_pod(const PodRecord& r);
  // The I/O thread's side: pod.name and pod.uid from `ids` (no-op when
  // they are there already).
  void take_ids() {
    if (!ids_pending) return;
    pod.name.assign(ids.data(), name_size);
    pod.uid.assign(ids.data() + name_size, uid_size);
    ids_pending = false;
  }

  // Drops what the event holds of the store's objects (the pod's template
  // part and status, the object), keeping the strings' buffers for the
  // slot's next use (BlockQueue).
  void release() {
    pod.base.reset();
    pod.status.reset();
    object.reset();
  }

  const std::string& namespace_() const { return object ? meta_of(*object).namespace_ : pod.namespace_(); }
  // After take_ids() for a pod.
  const std::string& name() const { return object ? meta_of(*object).name : pod.name; }
  const core::Labels& labels() const { return object ? meta_of(*object).labels : pod.shared_meta().labels; }
};

// Which kinds and namespaces some open watch is on, asked by the store on
// every write (ApiServer::Impl::Feed::wants) from the thread that writes,
// and changed on the I/O thread: thread-safe. A watch is counted from
// begin_watch (under the cluster mutex, so before any write it must see)
// until its session closes.
class WatchInterest {
 public:
  // `ns` empty: every namespace (and cluster-scoped kinds).
  void add(Kind kind, const std::string& ns);
  void remove(Kind kind, const std::string& ns);
  bool wants(Kind kind, const std::string& ns) const;

 private:
  static constexpr size_t kKinds = static_cast<size_t>(Kind::kNVIDIADriver) + 1;
  std::array<std::atomic<int>, kKinds> all_{};   // watches of every namespace
  std::array<std::atomic<int>, kKinds> some_{};  // watches of one namespace
  mutable std::mutex mu_;
  std::map<std::pair<Kind, std::string>, int> namespaces_;  // under mu_
};

// What a watch streams: the resource and namespace watched, its selectors,
// Table rendering, and whether it gets BOOKMARK events.
struct WatchSpec {
  const Resource* res = nullptr;
  std::string ns;
  LabelQuery labels;
  FieldQuery fields;
  bool table = false;
  std::string include_object;
  bool bookmarks = false;
};

// The options of a collection GET that list and watch share
// (metainternalversion.ListOptions as ListResource decodes them, and the
// Table the Accept header asks for).
struct ListOptions {
  LabelQuery labels;
  FieldQuery fields;
  bool table = false;
  std::string include;  // includeObject: "Object", "None", else metadata
};

// One request for a resource, as the verbs' handlers see it (roughly
// handlers.RequestScope with the request's RequestInfo).
struct ResourceRequest {
  const Request& http;
  boost::urls::url_view url;                 // the request target, parsed
  std::map<std::string, std::string> query;  // query_of(url)
  Route route;
  const Resource& res;   // *route.res
  bool dry_run = false;  // dryRun=All

  // The query parameter `k`, "" when absent.
  std::string param(const std::string& k) const {
    auto it = query.find(k);
    return it == query.end() ? "" : it->second;
  }
};

// ---- authentication (api_auth.cpp; authentication/request/bearertoken) ----

// The token an Authorization header presents ("Bearer <token>", the scheme
// in any case), nullopt when it presents none.
std::optional<std::string_view> bearer_token(std::string_view header);

// ---- the Accept header (api_negotiation.cpp; handlers/negotiation) ----

// What a path serves, for the conversions an Accept clause may ask for.
enum class Endpoint {
  kResource,        // a built-in kind: as=Table, PartialObjectMetadata(List)
  kCustomResource,  // the same, and no protobuf of the object itself
  kDiscovery,       // /api, /apis, ...: no conversion, or aggregated discovery
};
// The answer NegotiateOutputMediaType picks for the request's Accept header
// (a missing or empty one takes JSON): "" for the object as it is, else the
// kind of the conversion asked for ("Table", "PartialObjectMetadata", ...);
// nullopt when no clause names a media type the server has (JSON, YAML,
// protobuf) with a conversion this endpoint makes. The body is JSON
// whichever media type was picked (docs/SERVE.md).
std::optional<std::string> negotiate_output(const Request& req, Endpoint endpoint);
// 406 NotAcceptable, negotiation.NewNotAcceptableError's Status.
[[noreturn]] void throw_not_acceptable();

// ---- list and watch options (api_list_options.cpp; storage/continue.go) ----

// storage.EncodeContinue: base64.RawURLEncoding of
// {"v":"meta.k8s.io/v1","rv":N,"start":"<key>\0"}.
std::string encode_continue(uint64_t rv, const std::string& start);
// The start key of a continue token (without its "\0"), else 400 "invalid
// continue token: continue key is not valid..." (storage.DecodeContinue,
// which refuses a key path.Clean would change, "../" and the like).
std::string decode_continue(const std::string& token);
// APIObjectVersioner.ParseResourceVersion: "" and "0" are 0; else the
// number, or nullopt with `error` the storage.InvalidError's text
// ("resourceVersion: Invalid value: ...: strconv.ParseUint: ...").
std::optional<uint64_t> parse_resource_version(const std::string& rv, std::string& error);
// A read at resourceVersion `rv` when the store is at `current`: nothing
// when it has come that far, else the watch cache's answer after its wait,
// 504 Timeout "Timeout: Too large resource version: <rv>, current:
// <current>" with retryAfterSeconds 1 (given at once, without the wait).
void wait_until_fresh(uint64_t rv, uint64_t current);
// mirrors ValidateListOptions (apimachinery pkg/apis/meta/internalversion/
// validation) for a list or, `watch`, a watch: resourceVersionMatch,
// continue and sendInitialEvents, 422 "ListOptions.meta.k8s.io \"\" is
// invalid: ...".
void validate_list_options(const ResourceRequest& r, bool watch);

// ---- what the verbs share (api_handlers_rest.cpp; handlers/rest.go) ----

// A request body: JSON or YAML, one object. Else 400 "the object provided
// is unrecognized: ...".
boost::json::value read_body(const std::string& body);
// etcd refuses a request over its --max-request-bytes (1.5 MiB by default),
// after the API server has validated the object, and kube-apiserver v1.37
// answers that 500 "etcdserver: request is too large", no reason (measured).
// The simulator's store has no such limit of its own: the object's JSON
// (a little larger than the protobuf etcd receives, so a few objects near
// the bound are refused here and not there) is held to it, so that writes
// cannot grow one object without bound. Not on a dry run (nothing stored).
inline constexpr size_t kMaxStoredObjectBytes = 1536 * 1024;
void check_stored_size(const core::Object& obj);
// Whether `req`'s body is decoded off the I/O thread before it is handled: a
// YAML body (not starting with '{') of at least kDecodeElsewhereBytes to
// create, replace or apply an object. yaml-cpp takes about a second per MiB;
// on the I/O thread that second would hold every other client.
inline constexpr size_t kDecodeElsewhereBytes = 64 * 1024;
bool decode_elsewhere(const Request& req);
// A JSON body (a patch, DeleteOptions). Else 400 "error decoding patch: ...".
boost::json::value parse_json(const std::string& body);
// `v` as a typed object (core::decode_object, whose InputError escapes).
// `big`: the number of the body float64 could not hold, named as written.
core::Object decode_value(const boost::json::value& v, const std::string& file = "request body",
                          const std::optional<core::OutOfRangeNumber>& big = std::nullopt);
// A JSON request body's first number float64 cannot hold (core::
// first_out_of_range_number; a YAML or protobuf body has none). For a custom
// resource the decoding into an unstructured object refuses it: 400 "<Kind>
// in version \"<v>\" cannot be handled as a <Kind>: json: cannot unmarshal
// number 1e400 into Go value of type float64" (measured, kube-apiserver
// v1.37.2); a built-in kind's typed decoding names the field (decode_value).
std::optional<core::OutOfRangeNumber> body_out_of_range_number(const ResourceRequest& r);
// `v`, an object, with the route's apiVersion and kind, decoded; an
// InputError is answered naming the route's object.
core::Object decode_for_route(const ResourceRequest& r, boost::json::value v);
// 400 unless the object's name is the one on the URL (check_object_name).
void check_name(const ResourceRequest& r, const core::ObjectMeta& m);
// The patched or replaced object `v` (PATCH, PUT) keeps its name and, for a
// custom resource, its kind and apiVersion (check_patched_identity,
// core/codec/patch.h), answered as the API server answers: 400 without
// details, or 422 Invalid naming the object's own group and kind.
void check_identity(const ResourceRequest& r, const boost::json::value& v);
// A namespaced object without a namespace gets the request's; another one
// is 400 (rest.EnsureObjectNamespaceMatchesRequestNamespace).
void ensure_namespace(const ResourceRequest& r, core::ObjectMeta& m);

// The values of the query parameter `k`, in order (url.Values[k]; a
// parameter's options take the first).
std::vector<std::string> query_values(const ResourceRequest& r, const std::string& k);

// One field error of a field.ErrorList: its type ("FieldValueNotSupported",
// ...), path and ErrorBody ("Unsupported value: ...").
struct FieldError {
  std::string reason;
  std::string field;
  std::string body;
};
// 422 Invalid as apierrors.NewInvalid(GroupKind{group, kind}, name, errs)
// answers: "<kind>.<group> \"<name>\" is invalid: <aggregate>", a cause per
// error.
[[noreturn]] void throw_invalid(const std::string& group, const std::string& kind, const std::string& name,
                                const std::vector<FieldError>& errs);
// json.Marshal of a []string (a field error's value).
std::string json_string_list(const std::vector<std::string>& values);
// mirrors ValidateDryRun (apimachinery pkg/apis/meta/v1/validation): every
// value "All", else `dryRun: Unsupported value: ["x"]: supported values:
// "All"`.
std::vector<FieldError> validate_dry_run(const std::vector<std::string>& dry_run);
// mirrors ValidateCreateOptions, ValidateUpdateOptions and
// ValidatePatchOptions (`kind` "CreateOptions", "UpdateOptions",
// "PatchOptions"; `apply`: a server-side apply patch) over the query's
// fieldManager, force, dryRun and fieldValidation: 422 "<kind>.meta.k8s.io
// \"\" is invalid: ..." as the create, update and patch handlers answer.
void validate_write_options(const ResourceRequest& r, const char* kind, bool apply);

}  // namespace internal

struct ApiServer::Impl {
  using Request = internal::Request;
  using Resource = internal::Resource;
  using ResourceRequest = internal::ResourceRequest;

  Impl(FakeCluster& c, Options o) : cluster(c), opt(std::move(o)) {}

  FakeCluster& cluster;
  Options opt;
  // Before io: sessions release their place when the io_context destroys them.
  core::ConnectionBudget budget{opt.max_connections};
  ServingPki pki;
  std::string token;
  std::string host;  // as in url()
  boost::asio::io_context io{1};
  boost::asio::ssl::context ssl_ctx{boost::asio::ssl::context::tls_server};
  boost::asio::ip::tcp::acceptor acceptor{io};
  // Large YAML bodies are decoded here (decode_elsewhere). After io: joined
  // before io is destroyed, and what it posts back still finds io.
  boost::asio::thread_pool decode_pool{1};
  boost::asio::steady_timer ticker{io};
  boost::asio::steady_timer accept_timer{io};
  std::chrono::milliseconds accept_delay{0};  // after failed accepts
  std::optional<boost::asio::signal_set> signals;
  std::mutex mu;  // the cluster
  std::map<int, std::weak_ptr<Session>> watchers;
  int next_watcher = 1;
  // The store's writes to the open watches (the watch cache's dispatch of
  // events, k8s.io/apiserver pkg/storage/cacher). The store gives Feed only
  // writes of kinds and namespaces some watch is on (`interest`); each is
  // kept in `pending` (a PodRecord copy for a pod, the typed object else),
  // and one drain() is posted to the I/O thread per batch, not one handler
  // per write. drain() moves the batch to `inflight` (and the blocks it has
  // delivered back to `pending`, BlockQueue) and delivers it in slices of
  // kDrainSlice events, posting itself again in between, so that the
  // watches' writes (and other requests) go on during a large batch.
  struct Feed : StoreSubscriber {
    explicit Feed(Impl& i) : impl(i) {}
    bool wants(Kind kind, const std::string& ns) const override { return impl.interest.wants(kind, ns); }
    void on_write(const StoreWrite& w) override;  // under mu
    Impl& impl;
  };
  static constexpr size_t kDrainSlice = 256;
  // Flow control (drain): the feed waits while a watch has more than
  // kWatchBuffer bytes of events unsent, until its writes bring it under
  // (a client that reads is not outrun by a burst), for at most
  // kDrainWait; a watch that has not caught up by then is let go (its
  // backlog then grows under Options' bounds, as without waiting) until it
  // has. As the cacher's dispatch blocks on a watcher whose buffer is full
  // for a time budget (cacheWatcher.add, k8s.io/apiserver
  // pkg/storage/cacher); the cacher then closes it, here Options' bounds
  // decide.
  static constexpr size_t kWatchBuffer = 1 << 20;
  static constexpr std::chrono::milliseconds kDrainWait{1000};
  bool drain_waiting = false;  // I/O thread
  boost::asio::steady_timer drain_timer{io};
  internal::WatchInterest interest;
  Feed feed{*this};
  BlockQueue<internal::FeedEvent> pending;   // under mu
  bool drain_posted = false;                 // under mu
  BlockQueue<internal::FeedEvent> inflight;  // I/O thread (and under mu in drain's take_from)
  std::thread thread;
  std::atomic<bool> running{false};
  std::chrono::steady_clock::time_point last_tick;
  // Server-side apply: the last configuration each field manager applied,
  // per object (object_key() + "\n" + manager).
  std::map<std::string, boost::json::value> applied;
  // The objects of the last paged list that left a continue token, kept
  // while the store does not change (same resourceVersion), so each continue
  // page is served from one copy instead of a fresh copy of the whole kind.
  struct ListSnapshot {
    const Resource* res = nullptr;  // the Resource listed
    std::string ns;
    uint64_t rv = 0;
    std::vector<core::Object> objects;  // other kinds
    std::vector<PodRecord> pods;        // pods, as stored (not materialised)
    std::vector<std::string> keys;      // "ns/name" of each object, same order
    bool sorted = true;                 // keys ascending (always, for one namespace)
  };
  std::shared_ptr<const ListSnapshot> list_snapshot;
  // Pod JSON built once per shared template part and status (list pages).
  PodJsonEncoder pod_json;
  // The answer's body when a handler wrote it as text (a list); handle()
  // sends it instead of serialising dispatch()'s value, and clears it.
  std::optional<std::string> serialized_body;

  // ---- the server (api_server.cpp) ----
  void accept();
  void schedule_tick();
  // The I/O thread's side of Feed: takes `pending`, delivers a slice.
  void drain();
  // Ends the feed's wait (drain) and posts it again; no-op when not waiting.
  void resume_drain();
  // The resourceVersion up to which every write has been delivered to the
  // open watches, for BOOKMARK events: everything before the first write
  // still pending or in flight, else the store's version (writes of kinds
  // no watch was on have nothing to deliver).
  uint64_t delivered_rv();
  void serve_loop();
  // Handles one request. Returns false when the session took over the
  // connection (a watch).
  // `decoded`: the body as read_body decoded it off the I/O thread
  // (decode_elsewhere), or nullptr; `early`: the error that decoding
  // answered instead, or nullptr.
  bool handle(const Request& req, const std::shared_ptr<Session>& s,
              boost::beast::http::response<boost::beast::http::string_body>& res,
              const boost::json::value* decoded = nullptr, const internal::ApiError* early = nullptr);
  // The request's object: `predecoded` while handle() runs with one, else
  // read_body of the body.
  boost::json::value read_request_body(const ResourceRequest& r) const;
  const boost::json::value* predecoded = nullptr;  // I/O thread
  // The bearer token of a request's header is the server's
  // (authenticator/request/bearertoken).
  bool authenticated(const boost::beast::http::request_header<>& h) const;
  // The checks on a request whose header is read and body is not: 401
  // without the token, 413 for a Content-Length over max_request_body_bytes,
  // else 0, and then the parser's body limit is set (a chunked body is
  // checked as it comes).
  int check_header(boost::beast::http::request_parser<boost::beast::http::string_body>& p) const;
  // The answer to a request that is not a watch: routes it to discovery or
  // to one handler per verb below. A list page is built in `sp` (the
  // caller's arena for this answer); other answers may use the default
  // resource. `status` is the answer's HTTP code (200 unless a handler sets
  // it); `watching` is set when the request became a watch. A handler that
  // wrote its answer as text (list()) sets `serialized_body` instead.
  boost::json::value dispatch(const Request& req, const std::shared_ptr<Session>& s, int& status, bool& watching,
                              boost::json::storage_ptr sp);
  // Hands a watch to its session: `initial` (the events before the live
  // ones, an ERROR last when the version asked for is gone: the stream then
  // ends), the version the live events start after, the "ns/name" keys the
  // watcher has seen, its timeout.
  void start_watch(const std::shared_ptr<Session>& s, internal::WatchSpec spec,
                   std::vector<std::pair<std::string, boost::json::object>> initial, uint64_t rv,
                   std::set<std::string> visible, std::chrono::seconds timeout, const Request& req);

  // ---- discovery (api_discovery.cpp) ----
  // The answer to a discovery path (/version, /api, /apis, /apis/apps,
  // /api/v1, /apis/apps/v1, /openapi/v3 and its two documents), nullopt for
  // any other path. Throws 405 for a method but GET.
  std::optional<boost::json::value> discovery(const std::vector<std::string>& segs,
                                              boost::beast::http::verb method) const;

  // ---- the verbs (api_handlers_*.cpp) ----
  // `current` is the object the route names as stored (nullopt when
  // absent); `status` as for dispatch().

  // GET of a collection: a list, or a watch with watch=true (get.go
  // ListResource, which hands watches to watch.go serveWatch).
  boost::json::value list_or_watch(const ResourceRequest& r, const std::shared_ptr<Session>& s, bool& watching,
                                   boost::json::storage_ptr sp);
  // A list page: a Table (as a value), or else the list written as text
  // into `serialized_body` (the value returned is then null).
  boost::json::value list(const ResourceRequest& r, const internal::ListOptions& o, boost::json::storage_ptr sp);
  boost::json::value watch(const ResourceRequest& r, const internal::ListOptions& o, const std::shared_ptr<Session>& s,
                           bool& watching);
  // The snapshot a list page of `res` in `ns` walks: the kept one while the
  // store has not changed since, else a fresh one.
  std::shared_ptr<const ListSnapshot> snapshot_for(const Resource& res, const std::string& ns);
  // The pods of `ns` (all when empty) whose spec.nodeName is `node`, as a
  // snapshot of its own (not kept): what a list with the field selector
  // spec.nodeName=<node> walks instead of every pod, the watch cache's
  // spec.nodeName index (ObjectStore::list_pods_on_node). Same order and
  // keys as the snapshot_for() of the pods, less the pods elsewhere.
  std::shared_ptr<const ListSnapshot> pods_on_node(const Resource& res, const std::string& ns, const std::string& node);
  // The objects a watch of `res` in `ns` with field selector `fields` is
  // started from, in list order: for pods with a spec.nodeName=<node> term,
  // the pods on that node, else every object of the kind (the caller
  // matches the selectors).
  std::vector<core::Object> watch_candidates(const Resource& res, const std::string& ns, const FieldQuery& fields);
  // GET of one object (get.go GetResource).
  boost::json::value get(const ResourceRequest& r, const std::optional<core::Object>& current);
  // POST to a collection (create.go createHandler).
  boost::json::value create(const ResourceRequest& r, int& status);
  // Stores a new object, its errors as the create handler answers them.
  core::Object store_create(const ResourceRequest& r, const core::Object& obj);
  // PUT of an object or its status (update.go UpdateResource).
  boost::json::value update(const ResourceRequest& r, const std::optional<core::Object>& current);
  // Decodes `v` as the new state of the object and stores it (the part of
  // an update that a patch's result goes through too). `patched`: `v` is a
  // patch's result (no UID precondition), else a PUT body.
  boost::json::value store_update(const ResourceRequest& r, const std::optional<core::Object>& current,
                                  boost::json::value v, bool patched);
  // PATCH (patch.go PatchResource): JSON, merge and strategic merge patches,
  // and server-side apply (apply()).
  boost::json::value patch(const ResourceRequest& r, const std::optional<core::Object>& current, int& status);
  boost::json::value apply(const ResourceRequest& r, const std::optional<core::Object>& current, int& status);
  // DELETE of an object (delete.go DeleteResource).
  boost::json::value remove(const ResourceRequest& r, const std::optional<core::Object>& current);
};

}  // namespace gpuops::simulator

// The API server's request handling (simulator/apiserver/api_server_impl.h):
// the token check on a request's header, handle() (one request to one
// answer, under the cluster's mutex) and the router dispatch() to the
// verbs' handlers (api_handlers_*.cpp). The connections and the accept loop
// are api_server.cpp's.
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url.hpp>

#include <iostream>
#include <string>
#include <string_view>

#include "core/base/errors.h"
#include "simulator/apiserver/api_server_impl.h"

namespace gpuops::simulator {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
namespace urls = boost::urls;
using internal::ApiError;
using internal::Request;
using internal::status_object;
using internal::throw_api;
using internal::to_api_error;

// The field manager a write is recorded under (managedFields' `manager`):
// the request's fieldManager, else the User-Agent up to its first '/',
// without unprintable characters and cut to 128 bytes (managerOrUserAgent
// and prefixFromUserAgent, k8s.io/apiserver pkg/endpoints/handlers/rest.go;
// bytes here, runes there). kubectl label sends fieldManager=kubectl-label.
std::string manager_or_user_agent(const std::string& manager, std::string_view user_agent) {
  if (!manager.empty()) return manager;
  std::string out;
  for (char ch : user_agent.substr(0, user_agent.find('/'))) {
    const auto b = static_cast<unsigned char>(ch);
    if (b < 0x20 || b == 0x7f) continue;
    if (out.size() + 1 > 128) break;
    out.push_back(ch);
  }
  return out;
}

}  // namespace

json::value ApiServer::Impl::dispatch(const Request& req, const std::shared_ptr<Session>& s, int& status,
                                      bool& watching, json::storage_ptr sp) {
  urls::result<urls::url_view> parsed = urls::parse_origin_form(req.target());
  if (!parsed) throw_api(400, "invalid request target");
  urls::url_view u = *parsed;
  std::vector<std::string> segs;
  for (auto seg : u.segments()) segs.push_back(std::string(seg));
  while (!segs.empty() && segs.back().empty()) segs.pop_back();
  auto q = internal::query_of(u);
  http::verb method = req.method();
  status = 200;

  if (auto doc = discovery(segs, method)) {
    // The discovery documents are negotiated (their handlers write with
    // WriteObjectNegotiated); /version and /openapi are not.
    if (!segs.empty() && (segs[0] == "api" || segs[0] == "apis") &&
        !internal::negotiate_output(req, internal::Endpoint::kDiscovery))
      internal::throw_not_acceptable();
    return std::move(*doc);
  }

  internal::Route route;
  if (!internal::parse_route(segs, route) || (route.res->custom && !cluster.store().gpu_operator_crds()))
    throw_api(404, "the server could not find the requested resource");
  ResourceRequest r{req, u, std::move(q), route, *route.res};

  const bool read_or_delete = method == http::verb::get || method == http::verb::delete_;
  if (!internal::writable(r.res) && (!read_or_delete || route.status)) internal::throw_method_not_allowed();
  // Each verb's handler negotiates the answer's media type first
  // (negotiation.NegotiateOutputMediaType), before it reads options or body.
  if (!internal::negotiate_output(r.http,
                                  r.res.custom ? internal::Endpoint::kCustomResource : internal::Endpoint::kResource))
    internal::throw_not_acceptable();
  r.dry_run = r.param("dryRun") == "All";
  // The writes of this request carry its field manager (StoreWrite::writer);
  // the controllers that run after it write under their own names.
  const auto user_agent = req[http::field::user_agent];
  WriterScope writer(cluster.store(), manager_or_user_agent(r.param("fieldManager"),
                                                            std::string_view(user_agent.data(), user_agent.size())));
  if (route.name.empty()) {  // the collection
    if (method == http::verb::get) return list_or_watch(r, s, watching, std::move(sp));
    if (method == http::verb::post) return create(r, status);
    internal::throw_method_not_allowed();
  }
  std::optional<core::Object> current = cluster.store().get(r.res.kind, r.res.namespaced ? route.ns : "", route.name);
  switch (method) {
    case http::verb::get: return get(r, current);
    case http::verb::put: return update(r, current);
    case http::verb::patch: return patch(r, current, status);
    case http::verb::delete_: return remove(r, current);
    default: internal::throw_method_not_allowed();
  }
}

bool ApiServer::Impl::authenticated(const http::request_header<>& h) const {
  auto it = h.find(http::field::authorization);
  if (it == h.end()) return false;
  std::optional<std::string_view> presented =
      internal::bearer_token(std::string_view(it->value().data(), it->value().size()));
  return presented && *presented == token;
}

int ApiServer::Impl::check_header(http::request_parser<http::string_body>& p) const {
  if (!authenticated(p.get())) return 401;
  if (auto n = p.content_length(); n && *n > opt.max_request_body_bytes) return 413;
  p.body_limit(opt.max_request_body_bytes);
  return 0;
}

json::value ApiServer::Impl::read_request_body(const ResourceRequest& r) const {
  return predecoded ? *predecoded : internal::read_body(r.http.body());
}

bool ApiServer::Impl::handle(const Request& req, const std::shared_ptr<Session>& s,
                             http::response<http::string_body>& res, const json::value* decoded,
                             const ApiError* early) {
  res.version(req.version());
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-cache, private");
  auto reply_status = [&](const ApiError& e) {
    res.result(static_cast<http::status>(e.code));
    res.body() = json::serialize(status_object(e.code, e.reason, e.message, e.details));
  };
  if (early) {
    reply_status(*early);
    return true;
  }
  // The body decoded off the I/O thread, for this request's handler only.
  predecoded = decoded;
  struct Forget {
    const json::value*& p;
    ~Forget() { p = nullptr; }
  } forget{predecoded};
  // Authenticated already, on the header (Session::on_header).
  std::string target(req.target());
  if (target == "/healthz" || target == "/readyz" || target == "/livez") {
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.body() = "ok";
    return true;
  }
  bool mutating = req.method() != http::verb::get;
  std::unique_lock<std::mutex> lock(mu);
  try {
    int status = 200;
    bool watching = false;
    // The answer's memory, freed at once after it is written: a
    // monotonic_resource by plain pointer, so the values are not walked
    // on destruction either.
    json::monotonic_resource arena;
    serialized_body.reset();
    json::value body = dispatch(req, s, status, watching, json::storage_ptr(&arena));
    if (watching) return false;
    if (mutating && status < 300) {
      try {
        cluster.run();
      } catch (const std::exception& e) {
        std::cerr << "gpuops serve: controllers: " << e.what() << "\n";
      }
    }
    res.result(static_cast<http::status>(status));
    if (serialized_body) {
      res.body() = std::move(*serialized_body);
      serialized_body.reset();
    } else {
      res.body() = json::serialize(body);
    }
  } catch (const ApiError& e) {
    reply_status(e);
  } catch (const core::InputError& e) {
    reply_status(to_api_error(e, nullptr, ""));
  } catch (const core::ClusterError& e) {
    reply_status(to_api_error(e, nullptr, ""));
  } catch (const std::exception& e) {
    reply_status(ApiError{500, "InternalError", std::string("Internal error occurred: ") + e.what(), {}});
  }
  return true;
}

}  // namespace gpuops::simulator

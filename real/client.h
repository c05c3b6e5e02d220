// real/client.h: HTTP/1.1 to a Kubernetes API server, over Boost.Beast with
// OpenSSL, authenticated as the RestConfig says.
//
// What it mirrors in client-go:
//  - TLS (transport/transport.go TLSConfigFor, transport/cache.go): CA bundle
//    from RestConfig::ca_data, else the system roots; insecure_skip_tls_verify
//    turns verification off but the client certificate is still sent;
//    tls_server_name replaces the URL host for SNI and verification; no SNI is
//    sent for an IP address, whose certificate must carry it as an IP SAN; TLS
//    1.2 at least; no h2 in ALPN. Client certificates and keys are loaded from
//    memory, never from temporary files.
//  - Auth (rest/config.go, transport/round_trippers.go, transport/token_source.go,
//    plugin/pkg/client/auth/exec/exec.go): credentials only over https; a
//    `token` as is; a `token_file` re-read when older than a minute and after a
//    401; an exec plugin run with KUBERNETES_EXEC_INFO, its env and
//    interactiveMode, its ExecCredential cached until expirationTimestamp or a
//    401 (then the request is sent once more with fresh credentials, since a
//    401 means nothing was done). Basic auth is sent when configured.
//  - Retries (rest/request.go, rest/with_retry.go): 429 and 5xx answers that
//    carry Retry-After are retried after that many seconds, up to max_retries
//    times, for any method (bodies are in memory, so rewindable); GETs are also
//    retried on 5xx without Retry-After (exponential backoff) and on a
//    connection reset or EOF (after a second); a write is resent only when it
//    failed on a reused keep-alive connection before any answer arrived.
//    Connection refused, TLS and DNS failures are not retried.
//  - Errors (apimachinery pkg/api/errors, rest/request.go transformResponse):
//    a non-2xx answer becomes ApiError, whose what() is one line built from the
//    upstream Status: "<VERB> <path>: <code> <reason>: <message> [causes: field:
//    message; ...]", or the start of a non-Status body (proxies).
//
// No credential (token, password, key, exec output) is ever put in an error
// message, a log line or a Warning. Not thread-safe: one Client per thread.
#pragma once

#include <boost/beast/http/verb.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/base/errors.h"
#include "real/kubeconfig.h"

namespace gpuops::real {

// A non-2xx answer from the API server (after retries). http_status() is the
// HTTP code; reason() the Status reason ("NotFound", "Conflict", "Expired",
// "Invalid", ... or "" when the body was not a Status); status() the Status
// object (null when the body was not one). A ClusterError, so exit code 3
// unless the caller maps it (ApiCluster maps 400/422 on writes to InputError).
class ApiError : public core::ClusterError {
 public:
  ApiError(const std::string& what, int http_status, std::string reason, boost::json::value status)
      : core::ClusterError(what, http_status), reason_(std::move(reason)), status_(std::move(status)) {}
  const std::string& reason() const { return reason_; }
  const boost::json::value& status() const { return status_; }

 private:
  std::string reason_;
  boost::json::value status_;
};

// One API request. `path` is the API path ("/api/v1/nodes"); the client puts
// RestConfig::path_prefix before it. Query values are percent-encoded when sent.
struct Request {
  boost::beast::http::verb method = boost::beast::http::verb::get;
  std::string path;
  std::vector<std::pair<std::string, std::string>> query;
  std::string body;
  std::string content_type;  // sent when body is not empty
};

struct Response {
  int status = 0;
  std::string body;
};

struct ClientOptions {
  // client-go rest.Request maxRetries.
  int max_retries = 10;
  // Retries of a GET answered 5xx without Retry-After (backoff 200 ms, x2).
  int max_backoff_retries = 4;
  // The longest one Retry-After is obeyed for: a larger value (or one too
  // large to parse) waits this long, so max_retries bound the whole wait
  // (gpuops' bound; client-go waits as told, under its context's deadline).
  std::chrono::milliseconds max_retry_after{10000};
  // An exec credential plugin must exit within this, writing at most
  // exec_output_limit bytes to stdout; else it is killed and the request
  // fails (core::ClusterError).
  std::chrono::milliseconds exec_timeout{120000};
  size_t exec_output_limit = 1024 * 1024;
  // A paged list ends when the server gives no continue token; one that
  // gives back a token it already gave, or more than this many pages, is a
  // server error (core::ClusterError), not a list without end.
  size_t max_list_pages = 100000;
  std::chrono::milliseconds connect_timeout{30000};  // dial + TLS handshake (client-go: 30 s, 10 s)
  std::chrono::milliseconds request_timeout{60000};  // one request/response exchange
  // How to wait between retries; defaults to std::this_thread::sleep_for.
  // Tests record the waits instead.
  std::function<void(std::chrono::milliseconds)> sleep;
  // Wall clock for exec credential expiry and token-file age; defaults to
  // system_clock::now.
  std::function<std::chrono::system_clock::time_point()> now;
  // Where the server's `Warning:` headers are printed ("Warning: <text>", as
  // kubectl does, each text once); nullptr = std::cerr.
  std::ostream* warnings = nullptr;
  std::string user_agent = "gpuops";
  // Largest response body accepted for a non-watch request (Beast's default is
  // 8 MB, too small for big lists).
  uint64_t body_limit = 1024ull * 1024 * 1024;
  // File descriptor whose terminal-ness decides exec interactiveMode; 0 = stdin.
  int stdin_fd = 0;
};

class Client {
 public:
  // Throws core::InputError when the TLS material of `config` does not load
  // (bad PEM CA, certificate or key), naming the field.
  explicit Client(RestConfig config, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Sends `request` with retries. Returns the 2xx answer. Throws ApiError for
  // any other answer, core::ClusterError when the server cannot be reached, the
  // TLS handshake fails (the message says why: unknown CA, name mismatch, ...)
  // or the exec plugin fails.
  Response send(const Request& request);

  // Sends `request` and decodes the 2xx answer as JSON, allocated from `sp`
  // (the default resource when null; a monotonic_resource for a list page
  // that is read once). Throws as send(), and ClusterError when the body is
  // not JSON.
  boost::json::value send_json(const Request& request, boost::json::storage_ptr sp = {});
  // The body of an answer to `request` as JSON, as send_json() decodes it
  // (for a caller that read the body with send() and looked at it first).
  // Throws ClusterError when the body is not JSON.
  boost::json::value parse_json(const Request& request, const std::string& body,
                                boost::json::storage_ptr sp = {}) const;

  enum class WatchEnd {
    kStopped,   // on_event returned false
    kClosed,    // the server ended the stream cleanly (timeoutSeconds)
    kTimedOut,  // `max_duration` passed; the connection was closed
  };

  // Streams a watch (`request` should carry watch=1) on its own connection,
  // calling on_event with each event ({"type":..., "object":...}) as soon as it
  // is complete, however the bytes are chunked. Throws ApiError when the answer
  // is not 200 (after the retries of send), ClusterError("... watch dropped
  // ...") when the connection breaks mid-stream or an event is not JSON.
  WatchEnd watch(const Request& request, const std::function<bool(const boost::json::object&)>& on_event,
                 std::chrono::milliseconds max_duration);

  const RestConfig& config() const;
  const ClientOptions& options() const;

  // Number of requests put on the wire (each retry counts), for tests and
  // benchmarks that check the request count does not grow with cluster size.
  int requests_sent() const;
  // Response body bytes received by send()/send_json() (as decoded from the
  // chunked or sized body, headers not counted; watches not counted), for
  // benchmarks.
  uint64_t bytes_received() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-encodes a query value (RFC 3986 unreserved characters kept), as
// url.QueryEscape but with %20 for space.
std::string query_escape(const std::string& s);

// One clear line for a Status object answered with HTTP `code`:
// "<code> <reason>: <message> [causes: <field>: <message>; ...]".
std::string describe_status(int code, const boost::json::value& status, const std::string& raw_body);

}  // namespace gpuops::real

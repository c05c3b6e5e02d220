#include "real/client.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/base/base64.h"
#include "core/codec/documents.h"
#include "real/client_internal.h"

namespace gpuops::real {

using internal::ExecCredential;
using internal::run_exec_plugin;
using internal::trim;

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
namespace json = boost::json;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using std::chrono::milliseconds;
using Clock = std::chrono::system_clock;

bool is_ip(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

using core::base64_encode;

// A failure below HTTP: DNS, TCP, TLS, a dropped connection, a timeout.
struct NetError {
  error_code ec;
  std::string stage;          // "connect", "TLS handshake", "send", "receive"
  bool reused = false;        // on a keep-alive connection used before
  bool got_response = false;  // some of the answer had arrived
  std::string detail;         // certificate verification detail
};

// mirrors IsConnectionReset / IsProbableEOF (apimachinery pkg/util/net)
bool is_reset_or_eof(const error_code& ec) {
  return ec == asio::error::connection_reset || ec == asio::error::eof || ec == http::error::end_of_stream ||
         ec == http::error::partial_message || ec == asio::error::broken_pipe || ec == ssl::error::stream_truncated;
}

std::string verb_name(http::verb v) { return std::string(http::to_string(v)); }

// The read buffer of a connection: beast's largest read (http read_some_op).
constexpr size_t kReadBufferSize = 64 * 1024;
// One watch event, or a watch's error answer, at most (streaming.Decoder's
// maxBytes in apimachinery pkg/runtime/serializer/streaming).
constexpr size_t kMaxWatchEventBytes = 16 * 1024 * 1024;

struct Conn {
  std::unique_ptr<beast::tcp_stream> tcp;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buf;
  bool reused = false;
  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }
};

}  // namespace

namespace internal {

std::string trim(std::string s) {
  auto issp = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && issp(s.back())) s.pop_back();
  size_t i = 0;
  while (i < s.size() && issp(s[i])) ++i;
  return s.substr(i);
}

}  // namespace internal

std::string query_escape(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string describe_status(int code, const json::value& status, const std::string& raw_body) {
  // mirrors the Status handling of rest/request.go transformResponse and
  // apimachinery pkg/api/errors: the HTTP code takes precedence.
  std::string out = std::to_string(code);
  const json::object* st = status.if_object();
  if (!st || !st->contains("kind") || !(*st).at("kind").is_string() || (*st).at("kind").as_string() != "Status") {
    std::string body = raw_body.substr(0, 200);
    for (auto& c : body)
      if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    body = trim(body);
    std::string text = std::string(http::obsolete_reason(static_cast<http::status>(code)));
    out += " " + text;
    if (!body.empty()) out += ": " + body;
    return out;
  }
  auto str = [](const json::object* o, const char* k) -> std::string {
    if (!o) return "";
    auto* v = o->if_contains(k);
    return v && v->is_string() ? std::string(v->as_string()) : "";
  };
  std::string reason = str(st, "reason");
  std::string message = str(st, "message");
  out += " " + (reason.empty() ? std::string(http::obsolete_reason(static_cast<http::status>(code))) : reason);
  if (!message.empty()) out += ": " + message;
  const json::object* details = st->contains("details") ? st->at("details").if_object() : nullptr;
  if (details && details->contains("causes") && details->at("causes").is_array()) {
    std::string causes;
    for (const auto& c : details->at("causes").as_array()) {
      const json::object* co = c.if_object();
      std::string field = str(co, "field");
      std::string msg = str(co, "message");
      std::string r = str(co, "reason");
      std::string one = field.empty() ? "" : field + ": ";
      one += msg.empty() ? r : msg;
      // a cause that only repeats the message adds nothing
      if (one.empty() || message.find(one) != std::string::npos) continue;
      causes += (causes.empty() ? "" : "; ") + one;
    }
    if (!causes.empty()) out += " [causes: " + causes + "]";
  }
  return out;
}

struct Client::Impl {
  RestConfig cfg;
  ClientOptions opt;
  asio::io_context ioc;
  std::unique_ptr<ssl::context> ssl_ctx;
  std::unique_ptr<Conn> pooled;
  int sent = 0;
  uint64_t received = 0;  // response body bytes, non-watch requests
  std::set<std::string> warned;

  // tokenFile cache (NewCachedFileTokenSource, transport/token_source.go)
  std::string file_token;
  std::optional<Clock::time_point> file_token_read;

  // exec credential cache (exec.go Authenticator.cachedCreds)
  std::optional<ExecCredential> exec_cred;
  std::string exec_cert_in_ctx;  // the client cert the TLS context carries now

  Clock::time_point now() const { return opt.now ? opt.now() : Clock::now(); }
  void sleep(milliseconds d) {
    if (opt.sleep)
      opt.sleep(d);
    else
      std::this_thread::sleep_for(d);
  }
  bool https() const { return cfg.scheme == "https"; }
  std::string where() const {
    return cfg.scheme + "://" + (cfg.host.find(':') != std::string::npos ? "[" + cfg.host + "]" : cfg.host) + ":" +
           cfg.port;
  }

  // ---- TLS ----

  void build_ssl_context(const std::string& cert, const std::string& key, const char* cert_field,
                         const char* key_field) {
    auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
    error_code ec;
    if (cfg.insecure_skip_tls_verify) {
      ctx->set_verify_mode(ssl::verify_none);
    } else {
      ctx->set_verify_mode(ssl::verify_peer);
      if (!cfg.ca_data.empty()) {
        ctx->add_certificate_authority(asio::buffer(cfg.ca_data), ec);
        if (ec)
          throw core::InputError(cfg.origin, 0, "certificate-authority-data",
                                 "unable to load root certificates: no valid PEM certificate found");
      } else {
        ctx->set_default_verify_paths(ec);
      }
    }
    if (!cert.empty()) {
      ctx->use_certificate_chain(asio::buffer(cert), ec);
      if (ec)
        throw core::InputError(cfg.origin, 0, cert_field, "cannot load the client certificate: not a PEM certificate");
      ctx->use_private_key(asio::buffer(key), ssl::context::pem, ec);
      if (ec) throw core::InputError(cfg.origin, 0, key_field, "cannot load the client key: not a PEM private key");
      if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
        throw core::InputError(cfg.origin, 0, key_field, "the client key does not match the client certificate");
    }
    ssl_ctx = std::move(ctx);
    exec_cert_in_ctx = cert;
  }

  // ---- running asio operations synchronously, with deadlines ----

  template <class Start>
  error_code run(Start&& start) {
    error_code result = asio::error::would_block;
    start([&result](error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  std::unique_ptr<Conn> connect() {
    auto c = std::make_unique<Conn>();
    tcp::resolver resolver(ioc);
    error_code ec;
    auto results = resolver.resolve(cfg.host, cfg.port, ec);
    if (ec) throw NetError{ec, "resolve", false, false, ""};
    c->tcp = std::make_unique<beast::tcp_stream>(ioc);
    beast::tcp_stream& t = *c->tcp;
    t.expires_after(opt.connect_timeout);
    ec = run([&](auto h) { t.async_connect(results, std::move(h)); });
    if (ec) throw NetError{ec, "connect", false, false, ""};
    t.socket().set_option(asio::socket_base::keep_alive(true), ec);
    t.socket().set_option(tcp::no_delay(true), ec);
    if (!https()) return c;

    c->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(std::move(*c->tcp), *ssl_ctx);
    c->tcp.reset();
    SSL* s = c->tls->native_handle();
    std::string name = cfg.tls_server_name.empty() ? cfg.host : cfg.tls_server_name;
    // SNI only for host names (crypto/tls never sends an IP literal).
    if (!is_ip(name)) SSL_set_tlsext_host_name(s, name.c_str());
    if (!cfg.insecure_skip_tls_verify) {
      // Hostname or IP SAN verification, as Go's crypto/x509 VerifyHostname.
      X509_VERIFY_PARAM* param = SSL_get0_param(s);
      if (is_ip(name)) {
        X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
      } else {
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        SSL_set1_host(s, name.c_str());
      }
    }
    beast::get_lowest_layer(*c->tls).expires_after(opt.connect_timeout);
    ec = run([&](auto h) { c->tls->async_handshake(ssl::stream_base::client, std::move(h)); });
    if (ec) {
      std::string detail;
      long vr = SSL_get_verify_result(s);
      if (vr != X509_V_OK) detail = X509_verify_cert_error_string(vr);
      if (vr == X509_V_ERR_HOSTNAME_MISMATCH || vr == X509_V_ERR_IP_ADDRESS_MISMATCH)
        detail += " (the certificate is not valid for " + name + ")";
      throw NetError{ec, "TLS handshake", false, false, detail};
    }
    return c;
  }

  std::string connect_message(const NetError& e) const {
    std::string m = "cannot reach the API server " + where();
    if (!cfg.context.empty()) m += " (context \"" + cfg.context + "\")";
    m += ": " + e.stage + " failed: ";
    if (e.ec == beast::error::timeout)
      m += "timed out";
    else if (!e.detail.empty())
      m += "certificate verify failed: " + e.detail;
    else
      m += e.ec.message();
    return m;
  }

  // ---- credentials ----

  std::string token_from_file(bool force) {
    // mirrors cachingTokenSource (period 1 minute, leeway 10 s) over
    // fileTokenSource: trimmed content; an empty file is an error; on a read
    // error the previous token is kept.
    auto t = now();
    if (!force && file_token_read && t - *file_token_read < std::chrono::seconds(50) && !file_token.empty())
      return file_token;
    FILE* f = std::fopen(cfg.token_file.c_str(), "rb");
    std::string text;
    if (f) {
      char b[4096];
      size_t n;
      while ((n = std::fread(b, 1, sizeof b, f)) > 0) text.append(b, n);
      std::fclose(f);
    }
    text = trim(text);
    if (text.empty()) {
      if (!file_token.empty()) return file_token;
      throw core::ClusterError("cannot read the token file \"" + cfg.token_file + "\"" +
                               (f ? ": the file is empty" : ": " + std::string(std::strerror(errno))));
    }
    file_token = text;
    file_token_read = t;
    return file_token;
  }

  // Makes sure exec credentials are current; returns true when the TLS
  // client certificate changed (so connections must be re-established).
  void ensure_exec() {
    if (exec_cred && (!exec_cred->expiry || now() < *exec_cred->expiry)) return;
    exec_cred = run_exec_plugin(cfg, opt);
    if (exec_cred->cert != exec_cert_in_ctx && (!exec_cred->cert.empty() || cfg.client_certificate_data.empty())) {
      // A new certificate: new TLS context and connections (exec.go closes
      // the connections it tracked when the certificate rotates).
      const std::string& cert = exec_cred->cert.empty() ? cfg.client_certificate_data : exec_cred->cert;
      const std::string& key = exec_cred->cert.empty() ? cfg.client_key_data : exec_cred->key;
      build_ssl_context(cert, key, "exec clientCertificateData", "exec clientKeyData");
      pooled.reset();
    }
  }

  // The Authorization header for the next request ("" for none). Credentials
  // only over TLS (IsConfigTransportTLS in clientcmd client_config.go).
  std::string authorization() {
    if (!https()) return "";
    if (!cfg.token.empty()) return "Bearer " + cfg.token;
    if (!cfg.token_file.empty()) return "Bearer " + token_from_file(false);
    if (!cfg.username.empty() || !cfg.password.empty())
      return "Basic " + base64_encode(cfg.username + ":" + cfg.password);
    if (cfg.exec) {
      ensure_exec();
      if (!exec_cred->token.empty()) return "Bearer " + exec_cred->token;
    }
    return "";
  }

  // After a 401: drop what can be refreshed. Returns whether anything was.
  bool invalidate_credentials() {
    if (!https()) return false;
    if (!cfg.token.empty()) return false;
    if (!cfg.token_file.empty()) {
      file_token_read.reset();
      return true;
    }
    if (!cfg.username.empty() || !cfg.password.empty()) return false;
    if (cfg.exec) {
      exec_cred.reset();
      return true;
    }
    return false;
  }

  // ---- one exchange ----

  std::string target(const Request& r) const {
    std::string t = cfg.path_prefix + r.path;
    char sep = '?';
    for (const auto& [k, v] : r.query) {
      t += sep + query_escape(k) + "=" + query_escape(v);
      sep = '&';
    }
    return t;
  }

  http::request<http::string_body> build(const Request& r) {
    http::request<http::string_body> req{r.method, target(r), 11};
    bool v6 = cfg.host.find(':') != std::string::npos;
    req.set(http::field::host, (v6 ? "[" + cfg.host + "]" : cfg.host) + ":" + cfg.port);
    req.set(http::field::user_agent, opt.user_agent);
    req.set(http::field::accept, "application/json");
    std::string auth = authorization();
    // A token file or an exec plugin can yield what the kubeconfig check
    // (load_rest_config) could not see; net/http refuses such a header.
    if (!valid_header_value(auth))
      throw core::ClusterError("invalid header field value for \"Authorization\": the credentials of context \"" +
                               cfg.context + "\" have a control character (from " +
                               (!cfg.token_file.empty() ? "token file \"" + cfg.token_file + "\""
                                : cfg.exec              ? "exec plugin \"" + cfg.exec->command + "\""
                                                        : std::string("the kubeconfig")) +
                               ")");
    if (!auth.empty()) req.set(http::field::authorization, auth);
    if (!r.body.empty()) {
      req.set(http::field::content_type, r.content_type.empty() ? "application/json" : r.content_type);
      req.body() = r.body;
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  template <class F>
  auto on_stream(Conn& c, F&& f) {
    if (c.tls) return f(*c.tls);
    return f(*c.tcp);
  }

  void print_warnings(const http::fields& h) {
    // mirrors rest/warnings.go: "299 - \"text\"" headers printed as "Warning: text"
    for (auto it = h.find(http::field::warning); it != h.end() && it->name() == http::field::warning; ++it) {
      std::string v(it->value());
      auto a = v.find('"');
      auto b = v.rfind('"');
      std::string text = (a != std::string::npos && b > a) ? v.substr(a + 1, b - a - 1) : v;
      if (!warned.insert(text).second) continue;
      (opt.warnings ? *opt.warnings : std::cerr) << "Warning: " << text << "\n";
    }
  }

  struct Raw {
    int status = 0;
    std::string body;
    std::string retry_after;
  };

  Raw exchange(const Request& r) {
    if (!pooled) pooled = connect();
    Conn& c = *pooled;
    bool reused = c.reused;
    auto req = build(r);
    ++sent;
    c.lowest().expires_after(opt.request_timeout);
    error_code ec =
        on_stream(c, [&](auto& s) { return run([&](auto h) { http::async_write(s, req, std::move(h)); }); });
    if (ec) {
      pooled.reset();
      throw NetError{ec, "send", reused, false, ""};
    }
    http::response_parser<http::string_body> p;
    p.body_limit(opt.body_limit);
    p.header_limit(256 * 1024);
    // Beast reads at most the buffer's free capacity (at least 512 bytes,
    // at most 64 KiB) per read; the parser empties the buffer into the body
    // after each, so an unreserved buffer reads a large answer 512 bytes at
    // a time (one TLS read and one completion handler each).
    if (c.buf.capacity() < kReadBufferSize) c.buf.reserve(kReadBufferSize);
    ec = on_stream(c, [&](auto& s) { return run([&](auto h) { http::async_read(s, c.buf, p, std::move(h)); }); });
    if (ec) {
      bool got = p.got_some();
      pooled.reset();
      throw NetError{ec, "receive", reused, got, ""};
    }
    auto& res = p.get();
    print_warnings(res.base());
    Raw out;
    out.status = static_cast<int>(res.result_int());
    received += res.body().size();
    out.body = std::move(res.body());
    out.retry_after = std::string(res[http::field::retry_after]);
    if (!res.keep_alive())
      pooled.reset();
    else
      c.reused = true;
    return out;
  }

  // The retry policy after a non-2xx answer; nullopt = give up.
  std::optional<milliseconds> retry_delay(const Raw& r, http::verb method, int& attempts, int& backoffs,
                                          bool& refreshed) {
    if (r.status == 401 && !refreshed && invalidate_credentials()) {
      refreshed = true;
      return milliseconds(0);
    }
    if (r.status != 429 && r.status < 500) return std::nullopt;
    // mirrors checkWait (rest/request.go): Retry-After in seconds
    if (!r.retry_after.empty() && attempts < opt.max_retries) {
      // A whole number of seconds; larger than max_retry_after (including
      // past any integer type) waits max_retry_after.
      const std::string& ra = r.retry_after;
      bool digits = !ra.empty() && ra.find_first_not_of("0123456789") == std::string::npos;
      if (digits) {
        ++attempts;
        size_t first = std::min(ra.find_first_not_of('0'), ra.size());
        if (ra.size() - first > 9) return opt.max_retry_after;
        return std::min(milliseconds(std::stoll(ra) * 1000), opt.max_retry_after);
      }
    }
    if (method == http::verb::get && backoffs < opt.max_backoff_retries) {
      return milliseconds(200 << backoffs++);
    }
    return std::nullopt;
  }

  [[noreturn]] void throw_api_error(const Request& r, const Raw& raw) {
    error_code ec;
    json::value st = json::parse(raw.body, ec, {}, core::json_parse_options());
    if (ec) st = nullptr;
    std::string reason;
    if (auto* o = st.if_object(); o && o->contains("reason") && o->at("reason").is_string())
      reason = std::string(o->at("reason").as_string());
    if (auto* o = st.if_object(); !o || !o->contains("kind") || o->at("kind") != "Status") {
      st = nullptr;
      reason.clear();
    }
    std::string m =
        verb_name(r.method) + " " + cfg.path_prefix + r.path + ": " + describe_status(raw.status, st, raw.body);
    if (raw.status == 401) m += " (the credentials of context \"" + cfg.context + "\" were refused)";
    throw ApiError(m, raw.status, reason, std::move(st));
  }

  Response send(const Request& r) {
    int attempts = 0, backoffs = 0, resets = 0;
    bool refreshed = false, stale_retried = false;
    for (;;) {
      Raw raw;
      try {
        raw = exchange(r);
      } catch (const NetError& e) {
        // A keep-alive connection the server had closed: resend once at once.
        if (e.reused && !e.got_response && !stale_retried && e.ec != beast::error::timeout) {
          stale_retried = true;
          continue;
        }
        // mirrors IsNextRetry for GETs on connection reset / EOF (request.go)
        if (r.method == http::verb::get && is_reset_or_eof(e.ec) && resets < opt.max_retries &&
            (e.stage == "send" || e.stage == "receive")) {
          ++resets;
          sleep(milliseconds(1000));
          continue;
        }
        throw core::ClusterError(connect_message(e));
      }
      if (raw.status >= 200 && raw.status < 300) return Response{raw.status, std::move(raw.body)};
      if (auto d = retry_delay(raw, r.method, attempts, backoffs, refreshed)) {
        if (d->count() > 0) sleep(*d);
        continue;
      }
      throw_api_error(r, raw);
    }
  }

  WatchEnd watch(const Request& r, const std::function<bool(const json::object&)>& on_event,
                 milliseconds max_duration) {
    auto deadline = std::chrono::steady_clock::now() + max_duration;
    int attempts = 0, backoffs = 0;
    bool refreshed = false;
    for (;;) {
      std::unique_ptr<Conn> c;
      http::response_parser<http::buffer_body> p;
      p.body_limit(boost::none);
      p.header_limit(256 * 1024);
      try {
        c = connect();
        auto req = build(r);
        ++sent;
        c->lowest().expires_after(opt.request_timeout);
        error_code ec =
            on_stream(*c, [&](auto& s) { return run([&](auto h) { http::async_write(s, req, std::move(h)); }); });
        if (ec) throw NetError{ec, "send", false, false, ""};
        c->lowest().expires_at(std::min(deadline, std::chrono::steady_clock::now() + opt.request_timeout));
        ec = on_stream(
            *c, [&](auto& s) { return run([&](auto h) { http::async_read_header(s, c->buf, p, std::move(h)); }); });
        if (ec == beast::error::timeout && std::chrono::steady_clock::now() >= deadline) return WatchEnd::kTimedOut;
        if (ec) throw NetError{ec, "receive", false, false, ""};
      } catch (const NetError& e) {
        throw core::ClusterError(connect_message(e));
      }
      print_warnings(p.get().base());
      int status = static_cast<int>(p.get().result_int());
      json::stream_parser jp(json::storage_ptr(), core::json_parse_options());
      size_t event_bytes = 0;  // of the event being parsed
      std::string error_body;
      char buf[16384];
      while (!p.is_done()) {
        p.get().body().data = buf;
        p.get().body().size = sizeof buf;
        c->lowest().expires_at(deadline);
        error_code ec = on_stream(
            *c, [&](auto& s) { return run([&](auto h) { http::async_read_some(s, c->buf, p, std::move(h)); }); });
        if (ec == http::error::need_buffer) ec = {};
        size_t n = sizeof buf - p.get().body().size;
        if (status != 200) {
          error_body.append(buf, n);
          if (error_body.size() > kMaxWatchEventBytes)
            throw core::ClusterError("watch " + cfg.path_prefix + r.path + " answered " + std::to_string(status) +
                                     " with a body over " + std::to_string(kMaxWatchEventBytes) + " bytes");
        } else {
          size_t off = 0;
          while (off < n) {
            error_code jec;
            size_t used = jp.write_some(buf + off, n - off, jec);
            off += used;
            // mirrors streaming.Decoder's maxBytes (apimachinery
            // pkg/runtime/serializer/streaming, 16 MiB): one event may not
            // grow past it, however long the stream.
            event_bytes += used;
            if (!jec && !jp.done() && event_bytes > kMaxWatchEventBytes)
              throw core::ClusterError("watch " + cfg.path_prefix + r.path +
                                       " dropped: object to decode was longer than maximum allowed size (" +
                                       std::to_string(kMaxWatchEventBytes) + " bytes)");
            if (jec)
              throw core::ClusterError("watch " + cfg.path_prefix + r.path + " dropped: an event is not valid JSON");
            if (jp.done()) {
              event_bytes = 0;
              json::value ev = jp.release();
              jp.reset();
              if (!ev.is_object())
                throw core::ClusterError("watch " + cfg.path_prefix + r.path +
                                         " dropped: an event is not a JSON object");
              if (!on_event(ev.as_object())) return WatchEnd::kStopped;
            }
          }
        }
        if (ec == beast::error::timeout) {
          if (status == 200) return WatchEnd::kTimedOut;
          throw core::ClusterError(connect_message(NetError{ec, "receive", false, true, ""}));
        }
        if (ec) {
          if (status == 200)
            throw core::ClusterError("watch " + cfg.path_prefix + r.path + " dropped mid-stream: " + ec.message());
          throw core::ClusterError(connect_message(NetError{ec, "receive", false, true, ""}));
        }
      }
      if (status == 200) return WatchEnd::kClosed;
      Raw raw{status, error_body, std::string(p.get()[http::field::retry_after])};
      if (auto d = retry_delay(raw, r.method, attempts, backoffs, refreshed)) {
        if (d->count() > 0) sleep(*d);
        continue;
      }
      throw_api_error(r, raw);
    }
  }
};

Client::Client(RestConfig config, ClientOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->cfg = std::move(config);
  impl_->opt = std::move(options);
  if (impl_->https())
    impl_->build_ssl_context(impl_->cfg.client_certificate_data, impl_->cfg.client_key_data, "client-certificate-data",
                             "client-key-data");
}

Client::~Client() = default;

Response Client::send(const Request& request) { return impl_->send(request); }

json::value Client::send_json(const Request& request, json::storage_ptr sp) {
  Response r = send(request);
  return parse_json(request, r.body, std::move(sp));
}

json::value Client::parse_json(const Request& request, const std::string& body, json::storage_ptr sp) const {
  error_code ec;
  json::value v = json::parse(body, ec, std::move(sp), core::json_parse_options());
  if (ec)
    throw core::ClusterError(verb_name(request.method) + " " + impl_->cfg.path_prefix + request.path +
                             ": the answer is not JSON");
  return v;
}

Client::WatchEnd Client::watch(const Request& request, const std::function<bool(const json::object&)>& on_event,
                               milliseconds max_duration) {
  return impl_->watch(request, on_event, max_duration);
}

const RestConfig& Client::config() const { return impl_->cfg; }
const ClientOptions& Client::options() const { return impl_->opt; }

int Client::requests_sent() const { return impl_->sent; }
uint64_t Client::bytes_received() const { return impl_->received; }

}  // namespace gpuops::real

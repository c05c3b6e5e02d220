// tests/real/test_server.h: a small HTTP(S)/1.1 server on 127.0.0.1 that the
// tests script, to stand in for an API server that behaves or misbehaves on
// purpose, and certificates made at test time with OpenSSL.
#pragma once

#include <boost/beast/http.hpp>
#include <boost/json/array.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gpuops::real::testing {

// PEM certificate and key.
struct KeyPair {
  std::string cert;
  std::string key;
};

// Test PKI, generated once per process (EC P-256, valid from an hour ago for
// a day).
struct Pki {
  KeyPair ca;          // self-signed CA
  KeyPair other_ca;    // an unrelated CA
  KeyPair server;      // signed by ca; SANs IP:127.0.0.1, DNS:localhost
  KeyPair server_dns;  // signed by ca; SAN DNS:localhost only
  KeyPair client;      // signed by ca; CN=gpuops-admin, O=system:masters
  static const Pki& get();
};

// Makes a certificate for `cn` with `sans` ("IP:127.0.0.1,DNS:localhost"; may
// be empty) signed by `issuer` (self-signed CA when nullptr).
KeyPair make_cert(const std::string& cn, const std::string& sans, const KeyPair* issuer, bool is_ca);

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

// What the server saw of one request.
struct Seen {
  std::string method;
  std::string target;
  std::string authorization;
  std::string content_type;
  std::string host;
  std::string body;
  std::string client_cn;  // CN of the verified client certificate, "" if none
  std::string sni;        // server name the client sent, "" if none
};

// One request being answered. The handler calls reply(), or stream calls, or
// drop(); if it does none, the connection is dropped.
class Exchange {
 public:
  virtual ~Exchange() = default;
  virtual void reply(int status, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& headers = {}) = 0;
  virtual void begin_stream(int status) = 0;  // chunked transfer encoding
  virtual void chunk(const std::string& data) = 0;
  virtual void end_stream() = 0;  // the last chunk
  virtual void drop() = 0;        // close the connection now, mid-anything
  Seen seen;
};

class TestServer {
 public:
  struct Options {
    bool tls = true;
    KeyPair identity;       // server certificate; default Pki::get().server
    std::string client_ca;  // when set, client certificates signed by it are verified (optional, as the API server)
  };
  using Handler = std::function<void(const HttpRequest&, Exchange&)>;

  TestServer(Options options, Handler handler);
  ~TestServer();

  int port() const { return port_; }
  // "https://127.0.0.1:<port>" (or http).
  std::string url() const;
  std::vector<Seen> seen() const;
  int connections() const { return connections_; }

 private:
  void accept_loop();
  void serve(int fd);

  Options options_;
  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  mutable std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> fds_;
  std::vector<Seen> seen_;
  struct Tls;
  std::unique_ptr<Tls> tls_;
};

// A Kubernetes Status body.
std::string status_json(int code, const std::string& reason, const std::string& message,
                        const boost::json::array& causes = {});

// A temporary folder removed at destruction.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
  std::string write(const std::string& name, const std::string& content, bool executable = false) const;
};

// A List body ({kind, apiVersion v1, metadata.resourceVersion "10", items}).
boost::json::object list_json(const char* kind, boost::json::array items);

// A kubeconfig for `server` (its CA from Pki, bearer token "t", one context
// "x", current), written to `dir`/kubeconfig; returns its path.
std::string write_kubeconfig(const TestServer& server, const TempDir& dir);

}  // namespace gpuops::real::testing

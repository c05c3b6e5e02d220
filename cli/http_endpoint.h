// cli/http_endpoint.h: a small plain-HTTP/1.1 server (Boost.Beast) for
// `gpuops exporter`'s /metrics, /healthz and /readyz.
//
// GET and HEAD only (else 405); the request line and headers are bounded to
// 8 KiB and a request body to 0 bytes (a body: 413); a connection that sends
// nothing complete for 10 s, or takes longer than 30 s to read an answer, is
// closed. At most 64 connections are open at once: a new one takes the place
// of the one that has waited longest for its client (idle, or sending its
// request slowly), and is closed only when all 64 are being answered
// (core::ConnectionBudget). Keep-alive as the client asks. One thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace gpuops::cli {

// Raises this process's soft limit on open files (RLIMIT_NOFILE) to its hard
// limit, so a server's connection caps, not the default soft limit of 1024,
// bound its connections (mirrors Go's os package, which does this at start-up
// since Go 1.19: kube-apiserver and every Go exporter run so). Called by the
// servers (serve, exporter), which start no child process. Never throws; a
// failure leaves the limit as it was.
void raise_open_file_limit();

struct HttpAnswer {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class HttpEndpoint {
 public:
  // `target` is the request target without the query ("/metrics"). Called on
  // the server's thread; must not throw (an exception becomes a 500).
  using Handler = std::function<HttpAnswer(const std::string& target)>;

  // Listens on `address`:`port` (port 0: any free port; see port()). Throws
  // core::InputError when the address does not parse, core::ClusterError when
  // it cannot be bound (in use, no right), naming it.
  HttpEndpoint(const std::string& address, uint16_t port, Handler handler);
  ~HttpEndpoint();  // stops and joins
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Splits "HOST:PORT" / "[V6]:PORT" / ":PORT" (all addresses) into its parts.
// Throws core::InputError (field `flag`) when it is not one of these.
void split_listen_address(const std::string& flag, const std::string& value, std::string& host, uint16_t& port);

}  // namespace gpuops::cli

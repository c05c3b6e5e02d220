// core/base/connection_budget.h: how many connections one listening port of
// gpuops serves at once, and which one gives way when a new client comes and
// every place is taken. The bookkeeping only: the servers (serve's API
// server and placement view, the exporter's endpoint) own their sockets and
// close them when told to.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace gpuops::core {

// A connection is in one of two turns:
//  - the client's: the server waits for it (a TLS handshake, a request's
//    header, a body, or an answer the client does not read);
//  - the server's: it handles a request, or streams a watch the client reads.
// At the cap, a new connection takes the place of the one that has been in
// the client's turn longest, if that one has waited at least `grace` (it is
// closed); otherwise the new one is refused. So idle or slow clients,
// however many, cannot keep a client that talks at normal speed out: such a
// client is in its own turn for milliseconds, and `grace` protects it while
// it connects and sends its request, even from a crowd that reconnects as
// soon as it is closed (each reconnection would otherwise close the next
// oldest, the newcomer among them within `cap` steps). Go's net/http and kube-apiserver
// bound a connection's time (ReadHeaderTimeout, IdleTimeout) but not their
// number; golang.org/x/net/netutil.LimitListener, which Prometheus uses for
// --web.max-connections, bounds the number by not accepting, which idle
// clients fill. This is the bound of the first kind applied at the cap.
//
// Thread-safe. The `close` callbacks are called without the budget's lock
// held, on the thread that calls admit().
class ConnectionBudget {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = uint64_t;

  // `cap` >= 1: connections open at once (else std::invalid_argument).
  explicit ConnectionBudget(size_t cap, std::chrono::milliseconds grace = std::chrono::seconds(1));

  // A new connection, in the client's turn from now. Returns its id (never
  // 0). At the cap, the connection longest in the client's turn is closed
  // (its `close` called, and it no longer counts) to make room if it has
  // been in that turn for `grace` or more; else returns 0: close the new
  // connection.
  Id admit(std::function<void()> close);

  // The connection is in the client's turn from now (waits for the next
  // request, or for the client to read an answer). Unknown ids are ignored.
  void client_turn(Id id);
  // The connection is in the server's turn (a request is handled, a watch
  // streams). Unknown ids are ignored.
  void server_turn(Id id);
  // The connection is closed; its place is free. Idempotent.
  void release(Id id);

  size_t open() const;
  size_t cap() const { return cap_; }
  // Connections closed by admit() to make room, since construction.
  uint64_t evicted() const;

 private:
  struct Entry {
    std::function<void()> close;
    bool client_turn = true;
    Clock::time_point since;
  };
  const size_t cap_;
  const std::chrono::milliseconds grace_;
  mutable std::mutex mu_;
  std::map<Id, Entry> open_;
  Id next_ = 1;
  uint64_t evicted_ = 0;
};

}  // namespace gpuops::core

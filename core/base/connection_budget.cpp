// The connection budget; see connection_budget.h.
#include "core/base/connection_budget.h"

#include <stdexcept>

namespace gpuops::core {

ConnectionBudget::ConnectionBudget(size_t cap, std::chrono::milliseconds grace) : cap_(cap), grace_(grace) {
  if (cap == 0) throw std::invalid_argument("ConnectionBudget: cap must be at least 1");
}

ConnectionBudget::Id ConnectionBudget::admit(std::function<void()> close) {
  std::function<void()> evict;
  Id id = 0;
  {
    std::lock_guard lock(mu_);
    const auto now = Clock::now();
    if (open_.size() >= cap_) {
      auto oldest = open_.end();
      for (auto it = open_.begin(); it != open_.end(); ++it)
        if (it->second.client_turn && (oldest == open_.end() || it->second.since < oldest->second.since)) oldest = it;
      if (oldest == open_.end() || now - oldest->second.since < grace_) return 0;
      evict = std::move(oldest->second.close);
      open_.erase(oldest);
      ++evicted_;
    }
    id = next_++;
    open_[id] = Entry{std::move(close), true, now};
  }
  if (evict) evict();
  return id;
}

void ConnectionBudget::client_turn(Id id) {
  std::lock_guard lock(mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return;
  it->second.client_turn = true;
  it->second.since = Clock::now();
}

void ConnectionBudget::server_turn(Id id) {
  std::lock_guard lock(mu_);
  auto it = open_.find(id);
  if (it != open_.end()) it->second.client_turn = false;
}

void ConnectionBudget::release(Id id) {
  std::function<void()> drop;  // destroyed outside the lock (it may own a session)
  std::lock_guard lock(mu_);
  auto it = open_.find(id);
  if (it == open_.end()) return;
  drop = std::move(it->second.close);
  open_.erase(it);
}

size_t ConnectionBudget::open() const {
  std::lock_guard lock(mu_);
  return open_.size();
}

uint64_t ConnectionBudget::evicted() const {
  std::lock_guard lock(mu_);
  return evicted_;
}

}  // namespace gpuops::core

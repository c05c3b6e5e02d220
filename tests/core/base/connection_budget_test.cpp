// The connection budget: at the cap, the connection longest in its client's
// turn gives way; a full house of connections the server is busy with
// refuses the newcomer.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/base/connection_budget.h"

using namespace gpuops;

namespace {

void tick() { std::this_thread::sleep_for(std::chrono::milliseconds(2)); }

}  // namespace

using std::chrono::milliseconds;

TEST(ConnectionBudget, BelowTheCapEveryoneIsAdmitted) {
  core::ConnectionBudget b(3);
  std::vector<int> closed;
  for (int i = 0; i < 3; ++i) EXPECT_NE(b.admit([&, i] { closed.push_back(i); }), 0u);
  EXPECT_EQ(b.open(), 3u);
  EXPECT_TRUE(closed.empty());
  EXPECT_EQ(b.evicted(), 0u);
}

TEST(ConnectionBudget, AtTheCapTheLongestWaitingForItsClientGivesWay) {
  core::ConnectionBudget b(3, milliseconds(0));
  std::vector<int> closed;
  auto a = b.admit([&] { closed.push_back(1); });
  tick();
  auto c = b.admit([&] { closed.push_back(2); });
  tick();
  auto d = b.admit([&] { closed.push_back(3); });
  tick();
  // The first one sent a request (the server's turn), then waits again: it
  // is now the newest waiter.
  b.server_turn(a);
  b.client_turn(a);
  tick();
  auto e = b.admit([&] { closed.push_back(4); });
  EXPECT_NE(e, 0u);
  EXPECT_EQ(closed, (std::vector<int>{2}));
  EXPECT_EQ(b.open(), 3u);
  EXPECT_EQ(b.evicted(), 1u);
  // The evicted one's release (its session ends) changes nothing.
  b.release(c);
  EXPECT_EQ(b.open(), 3u);
  (void)d;
}

TEST(ConnectionBudget, ConnectionsTheServerIsBusyWithAreNeverClosed) {
  core::ConnectionBudget b(2, milliseconds(0));
  int closed = 0;
  auto a = b.admit([&] { ++closed; });
  auto c = b.admit([&] { ++closed; });
  b.server_turn(a);
  b.server_turn(c);
  EXPECT_EQ(b.admit([&] { ++closed; }), 0u);  // refused
  EXPECT_EQ(closed, 0);
  EXPECT_EQ(b.open(), 2u);
  b.release(a);
  EXPECT_NE(b.admit([&] { ++closed; }), 0u);
  EXPECT_EQ(closed, 0);
}

TEST(ConnectionBudget, ReleaseFreesThePlaceAndIsIdempotent) {
  core::ConnectionBudget b(1);
  auto a = b.admit([] {});
  b.release(a);
  b.release(a);
  EXPECT_EQ(b.open(), 0u);
  b.client_turn(a);  // unknown: ignored
  b.server_turn(a);
  EXPECT_EQ(b.open(), 0u);
  EXPECT_THROW(core::ConnectionBudget(0), std::invalid_argument);
}

// The close callback may release its own place (a session closed at once);
// the budget's lock is not held while it runs.
TEST(ConnectionBudget, CloseMayCallBackIntoTheBudget) {
  core::ConnectionBudget b(1, milliseconds(0));
  core::ConnectionBudget::Id a = 0;
  a = b.admit([&] { b.release(a); });
  tick();
  EXPECT_NE(b.admit([] {}), 0u);
  EXPECT_EQ(b.open(), 1u);
}

// A crowd that reconnects as soon as it is closed: without a grace, each
// reconnection closes the next oldest, and a newcomer would be closed
// within `cap` steps, before it could send its request.
TEST(ConnectionBudget, ANewcomerIsProtectedForTheGrace) {
  core::ConnectionBudget b(2, milliseconds(200));
  int closed = 0;
  b.admit([&] { ++closed; });
  b.admit([&] { ++closed; });
  // Everyone is younger than the grace: the newcomer is refused.
  EXPECT_EQ(b.admit([&] { ++closed; }), 0u);
  EXPECT_EQ(closed, 0);
  std::this_thread::sleep_for(milliseconds(250));
  bool legit_closed = false;
  EXPECT_NE(b.admit([&] { legit_closed = true; }), 0u);  // takes an old one's place
  EXPECT_EQ(closed, 1);
  // The crowd's reconnection takes the other old place; the next finds only
  // the young: refused, and the newcomer stays.
  EXPECT_NE(b.admit([&] { ++closed; }), 0u);
  EXPECT_EQ(closed, 2);
  EXPECT_EQ(b.admit([&] { ++closed; }), 0u);
  EXPECT_FALSE(legit_closed);
}

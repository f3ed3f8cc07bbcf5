// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The SA send queue's fairness among local users, through the real sockets and SO_PEERCRED
// (docs/security.md, known gap 1; core/fair_queue.h): a RESOLVE's misses queue under its peer uid,
// so one user's many queued misses delay another user's one miss by one turn, not by the queue.
#include "security_harness.h"

namespace ibat::server::security_test {
namespace {

using protocol::Status;

class FairTurns : public DaemonTest {
 protected:
  void SetUp() override {
    if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
    DaemonTest::SetUp();
  }
  std::size_t pending() { return on_loop([this] { return service_->resolver().stats().pending; }); }
};

// uid 65534 queues 20 misses behind one query in flight; root then asks one. Each answered query
// lets the next go: root's goes within two turns (nobody's turn came first), not after nobody's 19.
TEST_F(FairTurns, AnotherUsersOneMissGoesWithinOneTurnOfAFloodersQueue) {
  config_.policy.sa_max_inflight = 1;  // one query at a time: the order is the queue's
  config_.policy.sa_adaptive = false;  // no pacer window to reason about
  start();
  const std::size_t first = sa_.count();

  Client flooder(connect_as(config_.server.socket, Identity{}));
  ASSERT_TRUE(flooder.connected());
  constexpr std::uint32_t kFlood = 20;
  for (std::uint32_t id = 1; id <= kFlood; ++id) flooder.resolve(id, gid(0x1000 + id));
  flooder.request(protocol::Op::stats, 99);  // its resolves were all taken in before this is answered
  flooder.body(99);
  ASSERT_EQ(pending(), kFlood);  // one in flight, 19 queued

  Client root(config_.server.socket);
  const core::Gid mine = gid(0xA);
  root.resolve(1, mine);
  root.request(protocol::Op::stats, 2);
  root.body(2);
  ASSERT_EQ(sa_.count(), first + 1);  // nothing else sent yet

  std::size_t turn = 0;
  for (std::size_t i = first;; ++i) {
    const core::PathQuery q = sa_.wait_query(i);
    ASSERT_TRUE(q.dgid.has_value());
    answer(q, static_cast<std::uint16_t>(100 + i));
    if (*q.dgid == mine) break;
    ASSERT_LE(++turn, 2u) << "root's miss still queued behind uid 65534's";
  }
  EXPECT_EQ(root.status_of(1), Status::ok);
}

}  // namespace
}  // namespace ibat::server::security_test

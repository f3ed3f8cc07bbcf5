// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// NativeServer batching (docs/protocol.md, "Batching"): the RESOLVE frames a client writes at once
// reach the daemon in one read and are answered together: every frame answered, one read of the
// Resolver's clock for all of them, and one write carrying all their replies.
#include <set>

#include <gtest/gtest.h>

#include "daemon_fixture.h"
#include "server/daemon/native_server.h"
#include "server_test_support.h"
#include "test_client.h"

namespace ibat::server {
namespace {

using test_support::Client;
using test_support::gid;
using test_support::path_to;
using test_support::kLocalGid;

// The daemon fixture's folder and loop with only a NativeServer (no Service), so that the test
// sees the server's counters and the Resolver's clock.
class NativeBatchTest : public test_support::DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    server_.listen(config_.server.socket, 0600, NativeLimits{});
    const core::LocalPort port{kLocalGid, core::Lid{1}, core::Lid{1}, true};
    gate_.apply([&](core::Resolver& r) { r.on_local_port(port); });
    run_loop();
  }
  void TearDown() override {
    on_loop([this] {
      server_.abort_all();
      gate_.stop();
      return 0;
    });
    DaemonTest::TearDown();
  }

  BatchClock clock_;
  core::Policy policy_;
  core::Resolver resolver_{policy_, clock_, sa_};
  ResolverGate gate_{loop_, resolver_};
  PortRouter router_{gate_};
  ServerCounters counters_;
  NativeServer server_{loop_, router_, NativeHooks{{}, {}, {}, {}, &clock_}, counters_};
};

TEST_F(NativeBatchTest, FramesOfOneReadAreAnsweredTogetherWithOneClockReadAndOneWrite) {
  constexpr std::uint32_t kCount = 32;
  Client c(config_.server.socket);
  ASSERT_TRUE(c.connected());
  for (std::uint32_t n = 0; n < kCount; ++n) {  // cache every destination through the fake SA
    c.resolve(n + 1, gid(0x100 + n));
    const core::PathQuery q = sa_.wait_query(n);
    on_loop([&] {
      const core::QueryResult answer{core::Error::ok, path_to(*q.dgid, static_cast<std::uint16_t>(10 + n))};
      gate_.apply([&](core::Resolver& r) { r.on_query_result(q.id, answer); });
      return 0;
    });
    auto f = c.next();
    ASSERT_TRUE(f);
    ASSERT_EQ(f->header.status, protocol::Status::ok);
  }
  struct Snapshot {
    std::uint64_t reads, writes, clock;
  };
  auto snapshot = [&] {
    return on_loop([&] { return Snapshot{counters_.native.reads, counters_.native.writes, clock_.reads()}; });
  };
  const Snapshot before = snapshot();

  std::vector<std::uint8_t> batch;  // every request in one write
  for (std::uint32_t n = 0; n < kCount; ++n) {
    core::ResolveRequest r;
    r.target = gid(0x100 + n);
    protocol::append_resolve_request(batch, 1000 + n, r);
  }
  ASSERT_TRUE(c.send(batch));
  std::set<std::uint32_t> answered;
  for (std::uint32_t n = 0; n < kCount; ++n) {
    auto f = c.next();
    ASSERT_TRUE(f) << "reply " << n << " of " << kCount << " missing";
    EXPECT_EQ(f->header.status, protocol::Status::ok);
    answered.insert(f->header.id);
  }
  EXPECT_EQ(answered.size(), kCount);
  EXPECT_EQ(*answered.begin(), 1000u);
  EXPECT_EQ(sa_.count(), kCount) << "all answered from the cache";

  const Snapshot after = snapshot();
  EXPECT_EQ(after.reads - before.reads, 1u);
  EXPECT_EQ(after.writes - before.writes, 1u) << "the replies of one read leave in one write";
  EXPECT_EQ(after.clock - before.clock, 1u) << "one clock read for the whole batch";
}

}  // namespace
}  // namespace ibat::server

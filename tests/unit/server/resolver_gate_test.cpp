// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ResolverGate: every input re-arms the Resolver's timer, so a resolve queued with nothing else
// happening afterwards still meets its deadline, and a failed SA answer is retried without any
// further input. loop.run() returns as soon as no timer is armed, so a missing re-arm
// shows as a completion that never ran, not as a hang.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>

#include "server/daemon/resolver_gate.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;

const core::Gid kLocal = core::Gid::from_parts(0xfe80000000000000ull, 1);
const core::Gid kRemote = core::Gid::from_parts(0xfe80000000000000ull, 2);

struct SilentSa : core::QuerySink {  // never answers
  std::vector<core::QueryId> sent;
  void send_path_query(const core::PathQuery& q) override { sent.push_back(q.id); }
  void cancel_query(core::QueryId) override {}
};

struct ResolverGateTest : ::testing::Test {
  asio::io_context loop;
  core::SteadyClock clock;
  SilentSa sa;
  core::Resolver resolver{core::Policy{}, clock, sa};
  ResolverGate gate{loop, resolver};

  core::ResolveRequest request() {
    core::ResolveRequest r;
    r.target = kRemote;
    r.timeout = 20ms;
    return r;
  }
};

TEST_F(ResolverGateTest, ResolveAloneWakesTheResolverAtItsDeadline) {
  gate.apply([](core::Resolver& r) { r.on_local_port(core::LocalPort{kLocal, core::Lid{1}, core::Lid{1}, true}); });
  std::optional<core::Error> answer;
  gate.resolve(request(), [&](core::RequestId, const core::ResolveResult& r) { answer = r.error; });
  loop.run();
  ASSERT_TRUE(answer);
  EXPECT_EQ(*answer, core::Error::timeout);
  EXPECT_EQ(sa.sent.size(), 1u);
}

TEST_F(ResolverGateTest, FailedQueryAloneIsRetried) {
  gate.apply([](core::Resolver& r) { r.on_local_port(core::LocalPort{kLocal, core::Lid{1}, core::Lid{1}, true}); });
  core::ResolveRequest r = request();
  r.timeout = 5s;
  gate.resolve(r, [](core::RequestId, const core::ResolveResult&) {});
  ASSERT_EQ(sa.sent.size(), 1u);
  gate.apply([&](core::Resolver& target) {
    target.on_query_result(sa.sent[0], core::QueryResult{core::Error::timeout, {}});
  });
  EXPECT_EQ(sa.sent.size(), 1u);
  // The retry's ticks, the only input being the failed answer (the deadline ends the loop at worst).
  while (sa.sent.size() < 2 && loop.run_one() == 1) {
  }
  EXPECT_EQ(sa.sent.size(), 2u);
}

}  // namespace
}  // namespace ibat::server

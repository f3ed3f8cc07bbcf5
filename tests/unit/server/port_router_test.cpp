// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortRouter: on a host of several ports every request reaches the Resolver of its port: by source
// GID (none: the default port), by the kernel's device and port number; an unknown GID is
// `invalid` and an unknown kernel port `unreachable`, at once; cancels, flushes and PATHS pages
// find their ports; a port whose link is down fails its requests and leaves the others alone; a
// kernel neighbour joins its interface's port, where a resolve by IP then goes.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>

#include "server/daemon/port_router.h"

namespace ibat::server {
namespace {

core::Gid port_gid(std::uint64_t subnet, std::uint64_t guid) { return core::Gid::from_parts(subnet, guid); }
const core::Gid kRemoteA = port_gid(0xfe80000000000000ull, 0x200);
const core::Gid kRemoteB = port_gid(0xfe80000000000001ull, 0x300);

struct RecordingSa : core::QuerySink {
  std::vector<core::PathQuery> sent;
  void send_path_query(const core::PathQuery& q) override { sent.push_back(q); }
  void cancel_query(core::QueryId) override {}
};

struct Port {
  Port(asio::io_context& loop, const core::Clock& clock, std::string ca, int port, core::Gid port_gid)
      : device(std::move(ca)), number(port), gid(port_gid), resolver(policy(), clock, sa), gate(loop, resolver) {}
  static core::Policy policy() {
    core::Policy p;
    p.prefetch = core::Prefetch::off;
    p.sa_adaptive = false;  // every query sent at once, whatever the SaPacer's window
    return p;
  }
  void report(bool active, bool link_down = false) {
    state = core::LocalPort{gid, core::Lid{static_cast<std::uint16_t>(gid.interface_id())}, core::Lid{1}, active, link_down};
    gate.apply([&](core::Resolver& r) { r.on_local_port(state); });
  }
  void answer(std::size_t n, std::uint16_t dlid) {
    const core::PathQuery& q = sa.sent.at(n);
    core::PathRecord p;
    p.sgid = gid;
    p.dgid = *q.dgid;
    p.dlid = core::Lid{dlid};
    p.slid = state.lid;
    p.mtu = 4;
    p.rate = 3;
    gate.apply([&](core::Resolver& r) { r.on_query_result(q.id, core::QueryResult{core::Error::ok, p}); });
  }
  std::string device;
  int number;
  core::Gid gid;
  core::LocalPort state;
  RecordingSa sa;
  core::Resolver resolver;
  ResolverGate gate;
};

struct PortRouterTest : ::testing::Test {
  asio::io_context loop;
  core::SteadyClock clock;
  Port a{loop, clock, "mlx5_0", 1, port_gid(0xfe80000000000000ull, 0x10)};
  Port b{loop, clock, "mlx5_1", 1, port_gid(0xfe80000000000001ull, 0x11)};
  PortRouter router;
  std::map<core::RequestId, core::ResolveResult> results;

  PortRouterTest() {
    for (Port* p : {&a, &b}) router.add(RoutedPort{&p->gate, p->device, p->number, [p] { return p->state; }});
    a.report(true);
    b.report(true);
  }
  ~PortRouterTest() override {
    a.gate.stop();
    b.gate.stop();
  }
  core::Completion record() {
    return [this](core::RequestId id, const core::ResolveResult& r) { results[id] = r; };
  }
  core::ResolveRequest to(const core::Gid& dgid, std::optional<core::Gid> sgid = std::nullopt) {
    core::ResolveRequest r;
    r.target = dgid;
    r.sgid = sgid;
    return r;
  }
};

TEST_F(PortRouterTest, ASourceGidPicksItsPortAndNoneTheDefault) {
  router.resolve(to(kRemoteB, b.gid), record());
  ASSERT_EQ(b.sa.sent.size(), 1u);
  EXPECT_EQ(b.sa.sent[0].sgid, b.gid);
  EXPECT_TRUE(a.sa.sent.empty());

  router.resolve(to(kRemoteA), record());  // the first active port
  ASSERT_EQ(a.sa.sent.size(), 1u);
  router.set_default_port("mlx5_1:1");
  router.resolve(to(kRemoteA), record());
  EXPECT_EQ(b.sa.sent.size(), 2u);
  router.set_default_port("mlx5_1");  // a device of one port names it
  EXPECT_EQ(router.default_port(), 1u);

  router.set_default_port("");
  a.report(false);
  EXPECT_EQ(router.default_port(), 1u) << "the first *active* port";
}

TEST_F(PortRouterTest, AnUnknownSourceGidIsInvalidAtOnce) {
  core::RequestId id = router.resolve(to(kRemoteA, port_gid(0xfe80000000000000ull, 0x99)), record());
  EXPECT_EQ(id, 0u);
  ASSERT_TRUE(results.contains(0));
  EXPECT_EQ(results[0].error, core::Error::invalid);
  EXPECT_TRUE(a.sa.sent.empty() && b.sa.sent.empty());
}

TEST_F(PortRouterTest, TheKernelsDeviceAndPortPickThePortAndAnUnknownOneIsUnreachable) {
  router.resolve_on("mlx5_1", 1, to(kRemoteB, b.gid), record());
  EXPECT_EQ(b.sa.sent.size(), 1u);
  core::RequestId id = router.resolve_on("mlx5_7", 1, to(kRemoteB, b.gid), record());
  EXPECT_EQ(id, 0u);
  EXPECT_EQ(results[0].error, core::Error::unreachable);
  router.resolve_on("mlx5_1", 2, to(kRemoteB, b.gid), record());
  EXPECT_EQ(b.sa.sent.size(), 1u);
}

TEST_F(PortRouterTest, AKernelNeighbourJoinsItsInterfacesPortAndAResolveByIpGoesThere) {
  const core::IpAddr on_b = *core::IpAddr::parse("10.1.0.7");
  const core::IpAddr unknown = *core::IpAddr::parse("10.1.0.8");
  const core::HwAddr hw = core::HwAddr::from(0x48, kRemoteB);
  router.on_kernel_neighbour(on_b, hw, kernel::IpoibPort{"mlx5_1", 1});
  router.on_kernel_neighbour(unknown, hw, kernel::IpoibPort{"mlx5_9", 1});  // a port ibatd does not serve
  EXPECT_FALSE(a.resolver.knows_neighbour(on_b));
  EXPECT_TRUE(b.resolver.knows_neighbour(on_b));
  EXPECT_FALSE(a.resolver.knows_neighbour(unknown) || b.resolver.knows_neighbour(unknown));

  core::ResolveRequest by_ip;
  by_ip.target = on_b;
  router.resolve(by_ip, record());
  ASSERT_EQ(b.sa.sent.size(), 1u) << "the port whose interface learned the address, not the default (a)";
  EXPECT_EQ(*b.sa.sent[0].dgid, kRemoteB);
  EXPECT_TRUE(a.sa.sent.empty());

  // Not known which port (sysfs silent): every port holds it, the default port answers.
  const core::IpAddr anywhere = *core::IpAddr::parse("10.1.0.9");
  router.on_kernel_neighbour(anywhere, hw, std::nullopt);
  EXPECT_TRUE(a.resolver.knows_neighbour(anywhere) && b.resolver.knows_neighbour(anywhere));
  EXPECT_EQ(router.neighbours().size(), 2u) << "an address two ports hold alike is listed once";

  router.on_kernel_neighbour_removed(on_b, kernel::IpoibPort{"mlx5_0", 1});
  EXPECT_TRUE(b.resolver.knows_neighbour(on_b)) << "a removal on another port's interface is not b's";
  router.on_kernel_neighbour_removed(on_b, kernel::IpoibPort{"mlx5_1", 1});
  EXPECT_FALSE(b.resolver.knows_neighbour(on_b));
}

TEST_F(PortRouterTest, RequestIdsCarryTheirPortSoACancelFindsIt) {
  core::RequestId on_a = router.resolve(to(kRemoteA, a.gid), record());
  core::RequestId on_b = router.resolve(to(kRemoteB, b.gid), record());
  EXPECT_EQ(on_a >> 56, 0u);
  EXPECT_EQ(on_b >> 56, 1u);
  EXPECT_TRUE(router.cancel(on_b));
  EXPECT_EQ(results[on_b].error, core::Error::cancelled);
  EXPECT_FALSE(results.contains(on_a));
  EXPECT_FALSE(router.cancel(on_b));
  EXPECT_FALSE(router.cancel(0));
}

TEST_F(PortRouterTest, ALinkDownFailsItsPortsRequestsAndLeavesTheOtherPortAlone) {
  router.resolve(to(kRemoteA, a.gid), record());
  a.answer(0, 20);
  router.resolve(to(kRemoteB, b.gid), record());
  b.answer(0, 30);
  a.report(false, true);
  core::RequestId down = router.resolve(to(kRemoteA, a.gid), record());
  core::RequestId up = router.resolve(to(kRemoteB, b.gid), record());
  EXPECT_EQ(results[down].error, core::Error::unreachable);
  EXPECT_EQ(results[up].error, core::Error::ok);
  EXPECT_EQ(results[up].path.dlid, core::Lid{30});
  a.report(true);
  core::RequestId back = router.resolve(to(kRemoteA, a.gid), record());
  EXPECT_EQ(results[back].error, core::Error::ok) << "the cache was kept";
  EXPECT_EQ(results[back].path.dlid, core::Lid{20});
}

TEST_F(PortRouterTest, PathsPagesGoThroughEveryPortAndAFlushReachesOneOrAll) {
  for (int n = 0; n < 3; ++n) {
    router.resolve(to(port_gid(0xfe80000000000000ull, 0x200 + n), a.gid), record());
    a.answer(n, static_cast<std::uint16_t>(20 + n));
  }
  for (int n = 0; n < 2; ++n) {
    router.resolve(to(port_gid(0xfe80000000000001ull, 0x300 + n), b.gid), record());
    b.answer(n, static_cast<std::uint16_t>(30 + n));
  }
  std::vector<core::Gid> seen;
  std::uint32_t cursor = 0;
  for (int pages = 0; pages < 10; ++pages) {
    core::Resolver::EntryPage page = router.entries_page(cursor, 2);
    for (const auto& e : page.entries) seen.push_back(e.sgid);
    if (!page.next) break;
    cursor = *page.next;
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), a.gid), 3);
  EXPECT_EQ(std::count(seen.begin(), seen.end(), b.gid), 2);
  EXPECT_EQ(router.entries().size(), 5u);

  std::vector<std::size_t> sizes;
  std::vector<core::Gid> walked;
  auto walk = [&](bool serving_only) {
    sizes.clear();
    walked.clear();
    router.for_each_entry_page(serving_only, 2, [&](const std::vector<core::CacheEntryView>& page) {
      sizes.push_back(page.size());
      for (const auto& e : page) walked.push_back(e.sgid);
    });
  };
  walk(true);
  EXPECT_EQ(std::count(walked.begin(), walked.end(), a.gid), 3);
  EXPECT_EQ(std::count(walked.begin(), walked.end(), b.gid), 2);
  for (std::size_t size : sizes) EXPECT_LE(size, 2u);
  a.report(false, true);
  walk(true);
  EXPECT_EQ(walked, (std::vector<core::Gid>{b.gid, b.gid})) << "a port whose cable is out serves none";
  walk(false);
  EXPECT_EQ(walked.size(), 5u);
  a.report(true);

  EXPECT_EQ(router.flush_all(1), 2u);
  EXPECT_EQ(a.resolver.stats().entries, 3u);
  EXPECT_EQ(router.flush_all(), 3u);
}

}  // namespace
}  // namespace ibat::server

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The privilege rule of ibatd's native socket, checked through the real SO_PEERCRED and
// SO_PEERGROUPS of connections opened by other users (docs/security.md): NEIGH_ADD, NEIGH_DEL
// and FLUSH are `denied` to a plain user (state unchanged, counted, connection kept) and allowed
// to root and to members of admin_group (primary or supplementary); every read-only op is open.
#include "security_harness.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sstream>

namespace ibat::server::security_test {
namespace {

using protocol::Op;
using protocol::Status;

const core::IpAddr kIp = *core::IpAddr::parse("10.0.0.2");

// NEIGH_ADD id 1, NEIGH_DEL id 2 (of another address), FLUSH id 3.
std::vector<std::uint8_t> privileged_requests() {
  std::vector<std::uint8_t> out;
  protocol::append_neigh_add(out, 1, protocol::NeighAdd{kIp, core::HwAddr::from(0x48, gid(0xA)), core::Lid{7}});
  protocol::append_neigh_del(out, 2, protocol::NeighDel{kIp});  // ok only if the add happened
  protocol::append_flush(out, 3, protocol::FlushRequest{});
  return out;
}

class PrivilegedOps : public DaemonTest {
 protected:
  void SetUp() override {
    if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
    DaemonTest::SetUp();
  }
  // Sends the three privileged requests as `who` and returns their statuses.
  std::vector<Status> privileged_as(const Identity& who) {
    Client c(connect_as(config_.server.socket, who));
    EXPECT_TRUE(c.connected());
    EXPECT_TRUE(c.send(privileged_requests()));
    std::vector<Status> statuses;
    for (std::uint32_t id = 1; id <= 3; ++id) statuses.push_back(c.status_of(id).value_or(Status::malformed));
    return statuses;
  }
  std::size_t neighbours() { return on_loop([this] { return service_->resolver().neighbours().size(); }); }
  std::size_t entries() { return on_loop([this] { return service_->resolver().entries().size(); }); }
};

const std::vector<Status> kAllDenied{Status::denied, Status::denied, Status::denied};
const std::vector<Status> kAllOk{Status::ok, Status::ok, Status::ok};

TEST_F(PrivilegedOps, PlainUserIsDeniedEveryPrivilegedOpAndChangesNothing) {
  start();
  Client root(config_.server.socket);
  warm(root, 100, gid(0xA), 10);

  EXPECT_EQ(privileged_as(Identity{}), kAllDenied);
  EXPECT_EQ(neighbours(), 0u);    // NEIGH_ADD did not happen
  EXPECT_EQ(entries(), 1u);       // FLUSH did not happen
  EXPECT_EQ(server_counters().denied, 3u);
}

TEST_F(PrivilegedOps, PlainUserKeepsTheConnectionAndEveryReadOnlyOp) {
  start();
  Client root(config_.server.socket);
  warm(root, 100, gid(0xA), 10);

  Client nobody(connect_as(config_.server.socket, Identity{}));
  ASSERT_TRUE(nobody.connected());
  ASSERT_TRUE(nobody.send(privileged_requests()));
  for (std::uint32_t id = 1; id <= 3; ++id) EXPECT_EQ(nobody.status_of(id), Status::denied);
  nobody.resolve(4, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(nobody.status_of(4), Status::ok);
  const std::pair<Op, std::uint32_t> reads[] = {{Op::stats, 5}, {Op::paths, 6}, {Op::neigh_list, 7}};
  for (auto [op, id] : reads) {
    nobody.request(op, id);
    EXPECT_FALSE(nobody.body(id).empty()) << protocol::to_string(op);
  }
  nobody.request(Op::watch, 8);
  nobody.request(Op::stats, 9);  // orders the WATCH before the event
  nobody.body(9);
  on_loop([this] { service_->port(0).on_sm_changed(); });
  auto event = nobody.next();
  ASSERT_TRUE(event);
  EXPECT_EQ(event->header.id, 8u);
  EXPECT_EQ(server_counters().protocol_errors, 0u);
}

TEST_F(PrivilegedOps, RootIsAllowed) {
  start();
  EXPECT_EQ(privileged_as(Identity{0, 0, {}}), kAllOk);
  EXPECT_EQ(neighbours(), 0u);  // added, then deleted
  EXPECT_EQ(server_counters().denied, 0u);
}

TEST_F(PrivilegedOps, AdminGroupMembersAreAllowedOthersNot) {
  auto group = some_group();
  if (!group) GTEST_SKIP() << "no usable group in /etc/group";
  config_.server.admin_group = group->first;
  start();
  EXPECT_EQ(privileged_as(Identity{65534, 65534, {group->second}}), kAllOk) << "supplementary " << group->first;
  EXPECT_EQ(privileged_as(Identity{65534, group->second, {}}), kAllOk) << "primary " << group->first;
  EXPECT_EQ(privileged_as(Identity{65534, 65534, {65534}}), kAllDenied) << "not in " << group->first;
  EXPECT_EQ(server_counters().denied, 3u);
}

TEST_F(PrivilegedOps, WithoutAdminGroupOnlyRootMayAdministerWhateverTheGroups) {
  auto group = some_group();
  if (!group) GTEST_SKIP() << "no usable group in /etc/group";
  ASSERT_TRUE(config_.server.admin_group.empty());
  start();
  EXPECT_EQ(privileged_as(Identity{65534, 0, {0, group->second}}), kAllDenied) << "gid 0 is not uid 0";
}

TEST_F(PrivilegedOps, ReloadedAdminGroupAppliesToTheNextRequest) {
  auto group = some_group();
  if (!group) GTEST_SKIP() << "no usable group in /etc/group";
  start();
  Client member(connect_as(config_.server.socket, Identity{65534, 65534, {group->second}}));
  ASSERT_TRUE(member.connected());
  std::vector<std::uint8_t> flush;
  protocol::append_flush(flush, 1, protocol::FlushRequest{});
  ASSERT_TRUE(member.send(flush));
  EXPECT_EQ(member.status_of(1), Status::denied);

  DaemonConfig next = config_;
  next.server.admin_group = group->first;
  on_loop([&] { service_->reload(next); });
  flush.clear();
  protocol::append_flush(flush, 2, protocol::FlushRequest{});
  ASSERT_TRUE(member.send(flush));
  EXPECT_EQ(member.status_of(2), Status::ok);
}


// A plain user flooding privileged requests cannot flood the log: the first few denials are
// logged, the rest counted (docs/security.md, log rate limits). Before the limiter: one warning
// per request (20,000 lines).
TEST_F(PrivilegedOps, DeniedFloodLogsAFewLinesNotOnePerRequest) {
  start();
  std::ostringstream captured;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(captured)));
  constexpr std::uint32_t kFlood = 20'000;
  Client nobody(connect_as(config_.server.socket, Identity{}));
  ASSERT_TRUE(nobody.connected());
  std::vector<std::uint8_t> out;
  for (std::uint32_t id = 1; id <= kFlood; ++id) protocol::append_flush(out, id, protocol::FlushRequest{});
  ASSERT_TRUE(nobody.send(out));
  for (std::uint32_t id = 1; id <= kFlood; ++id) ASSERT_EQ(nobody.status_of(id), Status::denied) << id;
  EXPECT_EQ(server_counters().denied, kFlood) << "every denial is still counted";
  on_loop([] {});
  spdlog::set_default_logger(previous);
  const std::string log = captured.str();
  std::size_t lines = 0;
  for (char c : log) lines += c == '\n';
  EXPECT_LE(lines, 20u) << log.substr(0, 2000);
}

}  // namespace
}  // namespace ibat::server::security_test

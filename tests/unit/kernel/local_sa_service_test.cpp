// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibatd's local SA responder end to end without a kernel: the Service with a fake SA listens on an
// AF_UNIX datagram socket ([linux] local_sa_socket), the kernel twin sends the requests Linux
// sends and judges every reply as Linux would.
#include <cstring>
#include <filesystem>
#include <future>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <linux/netlink.h>
#include <poll.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../server/daemon_fixture.h"
#include "kernel_twin.h"
#include "server/daemon/service.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using test_support::gid;
using test_support::path_to;
using test_support::kLocalGid;

// The kernel's end of the channel: an autobound datagram socket connected to ibatd's.
class KernelTwin {
 public:
  explicit KernelTwin(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un self{};
    self.sun_family = AF_UNIX;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&self), sizeof(sa_family_t)), 0);
    sockaddr_un peer{};
    peer.sun_family = AF_UNIX;
    std::snprintf(peer.sun_path, sizeof(peer.sun_path), "%s", path.c_str());
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&peer), sizeof(peer)), 0);
  }
  ~KernelTwin() { ::close(fd_); }
  void send(const std::vector<std::uint8_t>& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }
  void ask(const twin::KernelQuery& q, std::uint32_t seq) { send(twin::build_resolve(q, seq)); }
  // The next reply datagram, judged for (seq, path_use); `ignored` when none came.
  twin::Verdict verdict(std::uint32_t seq, std::uint8_t path_use) {
    auto reply = next();
    if (!reply) return {twin::Outcome::ignored, {}, 0, "no reply"};
    return twin::judge(*reply, seq, path_use);
  }
  std::optional<std::vector<std::uint8_t>> next(std::chrono::milliseconds timeout = 5s) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return std::nullopt;
    std::vector<std::uint8_t> buffer(8192);
    const ssize_t n = ::recv(fd_, buffer.data(), buffer.size(), 0);
    if (n < 0) return std::nullopt;
    buffer.resize(static_cast<std::size_t>(n));
    return buffer;
  }

 private:
  int fd_ = -1;
};

// The daemon fixture with the responder bound to a datagram socket in the fixture's folder.
class LocalSaServiceTest : public test_support::DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    config_.linux_host.local_sa_socket = (dir_ / "local-sa.sock").string();
  }
  void answer(std::size_t index, core::QueryResult result) {
    const core::PathQuery q = sa_.wait_query(index);
    on_loop([&] { service_->port(0).on_query_result(q.id, result); });
  }
  nlohmann::json local_sa_stats() {
    return nlohmann::json::parse(on_loop([this] { return service_->stats_json(); }))["local_sa"];
  }
  twin::KernelQuery query(twin::Caller caller, const core::Gid& dgid) {
    twin::KernelQuery q;
    q.caller = caller;
    q.sgid = kLocalGid;
    q.dgid = dgid;
    return q;
  }
};

TEST_F(LocalSaServiceTest, MissIsResolvedThroughTheSaThenAnsweredFromTheCache) {
  start();
  KernelTwin kernel(config_.linux_host.local_sa_socket);
  const auto use = twin::path_use_of(twin::Caller::ipoib);
  kernel.ask(query(twin::Caller::ipoib, gid(2)), 1);
  answer(0, {core::Error::ok, path_to(gid(2), 22)});
  auto first = kernel.verdict(1, use);
  ASSERT_EQ(first.outcome, twin::Outcome::path) << first.why;
  EXPECT_EQ(first.paths[0].dlid, core::Lid{22});

  kernel.ask(query(twin::Caller::ipoib, gid(2)), 2);
  auto second = kernel.verdict(2, use);
  ASSERT_EQ(second.outcome, twin::Outcome::path) << second.why;
  EXPECT_EQ(second.paths[0].dlid, core::Lid{22});
  EXPECT_EQ(sa_.count(), 1u) << "the cached path must not be asked again";
  auto stats = local_sa_stats();
  EXPECT_EQ(stats["requests"], 2);
  EXPECT_EQ(stats["answered"], 2);
  EXPECT_EQ(stats["running"], true);
}

TEST_F(LocalSaServiceTest, RdmaCmGetsTheReversiblePathFlaggedForEveryCaller) {
  start();
  KernelTwin kernel(config_.linux_host.local_sa_socket);
  auto q = query(twin::Caller::rdma_cm, gid(3));
  q.service_id = 0x1000000000001234ULL;
  q.qos_class = 5;
  kernel.ask(q, 7);
  answer(0, {core::Error::ok, path_to(gid(3), 33)});
  auto verdict = kernel.verdict(7, twin::path_use_of(twin::Caller::rdma_cm));
  ASSERT_EQ(verdict.outcome, twin::Outcome::path) << verdict.why;
  EXPECT_EQ(verdict.first_flags, 0x2Bu);
  EXPECT_EQ(verdict.paths[0].service_id, 0x1000000000001234ULL);
  EXPECT_EQ(verdict.paths[0].qos_class, 5);
}

TEST_F(LocalSaServiceTest, ANonReversiblePathIsNeverGivenToAReversibleCaller) {
  start();
  KernelTwin kernel(config_.linux_host.local_sa_socket);
  kernel.ask(query(twin::Caller::rdma_cm, gid(4)), 1);
  answer(0, {core::Error::ok, path_to(gid(4), 44, false)});
  EXPECT_EQ(kernel.verdict(1, twin::path_use_of(twin::Caller::rdma_cm)).outcome, twin::Outcome::fallback);
  EXPECT_EQ(local_sa_stats()["errors"]["not_reversible"], 1);
}

TEST_F(LocalSaServiceTest, UnknownDestinationGetsAnErrorSoTheKernelAsksTheSa) {
  start();
  KernelTwin kernel(config_.linux_host.local_sa_socket);
  kernel.ask(query(twin::Caller::srp, gid(5)), 1);
  answer(0, {core::Error::no_record, {}});
  EXPECT_EQ(kernel.verdict(1, twin::path_use_of(twin::Caller::srp)).outcome, twin::Outcome::fallback);
  EXPECT_EQ(local_sa_stats()["errors"]["no-record"], 1);
}

TEST_F(LocalSaServiceTest, SilentSaMeansAnErrorAtTheDeadlineNotAKernelTimeout) {
  config_.linux_host.local_sa_deadline = std::chrono::milliseconds(50);
  start();
  KernelTwin kernel(config_.linux_host.local_sa_socket);
  kernel.ask(query(twin::Caller::ipoib, gid(6)), 1);
  sa_.wait_query(0);  // the SA never answers
  auto verdict = kernel.verdict(1, twin::path_use_of(twin::Caller::ipoib));
  EXPECT_EQ(verdict.outcome, twin::Outcome::fallback) << verdict.why;
  EXPECT_EQ(local_sa_stats()["errors"]["timeout"], 1);
}

TEST_F(LocalSaServiceTest, MalformedAndUnsupportedMessagesGetAnErrorAndAreCounted) {
  start();
  KernelTwin kernel(config_.linux_host.local_sa_socket);
  auto set_timeout = twin::build_resolve(query(twin::Caller::ipoib, gid(7)), 11);
  set_timeout[4] = 1;  // nlmsg_type 0x1001: SET_TIMEOUT is the kernel's to receive, not ours
  kernel.send(set_timeout);
  auto refused = kernel.next();
  ASSERT_TRUE(refused);
  nlmsghdr header{};
  std::memcpy(&header, refused->data(), sizeof(header));
  EXPECT_EQ(header.nlmsg_type, 0x1001) << "a reply keeps the request's type";
  EXPECT_EQ(header.nlmsg_seq, 11u);
  EXPECT_NE(header.nlmsg_flags & RDMA_NL_LS_F_ERR, 0);
  auto no_dgid = twin::build_resolve(query(twin::Caller::ipoib, gid(7)), 12);
  no_dgid.resize(16 + 68);
  no_dgid[0] = 16 + 68;
  kernel.send(no_dgid);
  EXPECT_EQ(kernel.verdict(12, 1).outcome, twin::Outcome::fallback);
  kernel.send({1, 2, 3});  // garbage: nothing to answer, only counted
  kernel.ask(query(twin::Caller::ipoib, gid(7)), 13);  // still serving after all of it
  answer(0, {core::Error::ok, path_to(gid(7), 77)});
  EXPECT_EQ(kernel.verdict(13, 1).outcome, twin::Outcome::path);
  auto errors = local_sa_stats()["errors"];
  EXPECT_EQ(errors["unsupported_op"], 1);
  EXPECT_EQ(errors["no_dgid"], 1);
  EXPECT_EQ(errors["truncated"], 1);
  EXPECT_EQ(errors["total"], 3);
}

TEST_F(LocalSaServiceTest, ShutdownAnswersPendingKernelRequestsWithAnError) {
  start();
  KernelTwin kernel(config_.linux_host.local_sa_socket);
  kernel.ask(query(twin::Caller::ipoib, gid(8)), 1);
  sa_.wait_query(0);
  std::promise<void> done;
  on_loop([&] { service_->shutdown([&] { done.set_value(); }, 100ms); });
  EXPECT_EQ(kernel.verdict(1, 1).outcome, twin::Outcome::fallback);
  done.get_future().wait();
}

TEST_F(LocalSaServiceTest, OffWhenConfiguredOff) {
  config_.linux_host.local_sa = false;
  start();
  EXPECT_FALSE(std::filesystem::exists(config_.linux_host.local_sa_socket));
  EXPECT_EQ(local_sa_stats()["running"], false);
}

TEST_F(LocalSaServiceTest, WithoutNetlinkRdmaTheDaemonRunsWithoutTheResponder) {
  const int probe = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_RDMA);
  if (probe >= 0) {
    ::close(probe);
    GTEST_SKIP() << "this kernel has NETLINK_RDMA";
  }
  config_.linux_host.local_sa_socket.clear();  // the default: the kernel's netlink channel
  start();
  EXPECT_EQ(local_sa_stats()["running"], false);
  EXPECT_EQ(nlohmann::json::parse(on_loop([this] { return service_->stats_json(); }))["resolves"], 0)
      << "the Service itself is up";
}

}  // namespace
}  // namespace ibat::server

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Tests of ibatd's Service without a fabric: a fake SA sink, the event loop on a thread, and
// blocking clients speaking the native protocol over a temp socket. Covers pipelining with out of
// order replies, malformed and truncated input, the per-connection cap, disconnects with requests
// in flight, privileged operations (injected check and real SO_PEERCRED), WATCH, STATS, shutdown
// with pending requests, and the warm cache across a restart (good and corrupt snapshot).
#include "server/daemon/service.h"

#include <filesystem>
#include <fstream>
#include <future>
#include <set>
#include <sstream>

#include <asio/post.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon_fixture.h"
#include "protocol/frame_splitter.h"
#include "server_test_support.h"
#include "test_client.h"
#include "protocol/messages.h"
#include "shm/table_file.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using protocol::Op;
using protocol::Status;

using test_support::gid;
using test_support::path_to;
using test_support::kLocalGid;
using test_support::FakeSa;
using test_support::Client;
using test_support::Frame;

// The daemon fixture with the warm-cache snapshot in the fixture's folder, written only on shutdown.
// The tests hold several SA queries unanswered at once: the SaPacer (whose window starts at one
// query) is off, its own tests are core.SaPacer.* and sim.Pacing.*.
class ServiceTest : public test_support::DaemonTest {
 protected:
  void SetUp() override {
    DaemonTest::SetUp();
    config_.snapshot.cache_file = (dir_ / "cache").string();
    config_.snapshot.interval_s = 0;
    config_.policy.sa_adaptive = false;
  }
  core::ResolveResult resolve_reply(const Frame& f) {
    auto decoded = protocol::decode_resolve_reply(f.header.status, f.payload);
    EXPECT_TRUE(decoded) << decoded.error();
    return decoded ? decoded.value() : core::ResolveResult{};
  }
};

TEST_F(ServiceTest, PipelinedRequestsAreAnsweredOutOfOrder) {
  start();
  Client c(config_.server.socket);
  ASSERT_TRUE(c.connected());
  c.resolve(1, gid(0xA));
  c.resolve(2, gid(0xB));
  core::PathQuery qa = sa_.wait_query(0);
  core::PathQuery qb = sa_.wait_query(1);
  EXPECT_EQ(*qa.dgid, gid(0xA));
  EXPECT_EQ(*qb.dgid, gid(0xB));
  answer(qb, 11);
  auto first = c.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->header.id, 2u);
  EXPECT_EQ(first->header.op, protocol::reply_op(Op::resolve));
  EXPECT_EQ(resolve_reply(*first).path.dlid.value, 11);
  answer(qa, 10);
  auto second = c.next();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->header.id, 1u);
  EXPECT_EQ(resolve_reply(*second).path.dlid.value, 10);
  // Now cached: answered at once, no new query.
  c.resolve(3, gid(0xA));
  auto third = c.next();
  ASSERT_TRUE(third);
  EXPECT_EQ(third->header.id, 3u);
  EXPECT_EQ(resolve_reply(*third).state, core::EntryState::valid);
  EXPECT_EQ(sa_.count(), 2u);
}

TEST_F(ServiceTest, MalformedFrameGetsAnErrorThenCloseAndOthersAreStillServed) {
  start();
  Client good(config_.server.socket);
  warm(good, 1, gid(0xA), 10);

  Client bad_version(config_.server.socket);
  std::vector<std::uint8_t> frame;
  protocol::append_empty_request(frame, 7, Op::stats);
  frame[4] = 9;  // version
  ASSERT_TRUE(bad_version.send(frame));
  auto error = bad_version.next();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->header.op, 0xFF);
  EXPECT_EQ(error->header.status, Status::unsupported);
  EXPECT_TRUE(bad_version.closed_by_peer());

  Client bad_payload(config_.server.socket);
  std::vector<std::uint8_t> short_resolve;
  protocol::append_frame(short_resolve, protocol::FrameHeader{1, 1, Status::ok, 0, 5, 3},
                         std::vector<std::uint8_t>{1, 0, 0});
  ASSERT_TRUE(bad_payload.send(short_resolve));
  error = bad_payload.next();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->header.op, 0xFF);
  EXPECT_EQ(error->header.status, Status::malformed);
  EXPECT_EQ(error->header.id, 5u);
  EXPECT_FALSE(error->text().empty());
  EXPECT_TRUE(bad_payload.closed_by_peer());

  Client huge(config_.server.socket);
  ASSERT_TRUE(huge.send({0xFF, 0xFF, 0xFF, 0xFF, 1, 1, 0, 0, 0, 0, 0, 1}));
  error = huge.next();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->header.status, Status::malformed);
  EXPECT_TRUE(huge.closed_by_peer());

  {  // truncated: half a frame, then the client goes away
    Client truncated(config_.server.socket);
    std::vector<std::uint8_t> half;
    protocol::append_empty_request(half, 1, Op::stats);
    half.resize(7);
    ASSERT_TRUE(truncated.send(half));
  }

  good.resolve(2, gid(0xA));
  auto reply = good.next();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->header.id, 2u);
  EXPECT_EQ(reply->header.status, Status::ok);
}

TEST_F(ServiceTest, UnknownOpIsUnsupportedButKeepsTheConnection) {
  start();
  Client c(config_.server.socket);
  std::vector<std::uint8_t> frame;
  protocol::append_frame(frame, protocol::FrameHeader{1, 0x42, Status::ok, 0, 3, 0}, {});
  ASSERT_TRUE(c.send(frame));
  auto f = c.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.status, Status::unsupported);
  EXPECT_EQ(f->header.op, 0xFF);  // ERROR, with the id and a message (docs/protocol.md)
  EXPECT_EQ(f->header.id, 3u);
  EXPECT_EQ(f->text(), "unknown op 66");
  c.request(Op::stats, 4);
  EXPECT_FALSE(c.body(4).empty());
}

TEST_F(ServiceTest, PerConnectionCapAnswersOverloadedAtOnce) {
  config_.server.max_outstanding_per_connection = 2;
  start();
  Client c(config_.server.socket);
  c.resolve(1, gid(0xA));
  c.resolve(2, gid(0xB));
  c.resolve(3, gid(0xC));
  auto f = c.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.id, 3u);
  EXPECT_EQ(f->header.status, Status::overloaded);
  // Another connection has its own budget.
  Client other(config_.server.socket);
  other.resolve(1, gid(0xD));
  sa_.wait_query(2);
  EXPECT_EQ(sa_.count(), 3u);
}

TEST_F(ServiceTest, DuplicateOutstandingIdIsMalformed) {
  start();
  Client c(config_.server.socket);
  c.resolve(1, gid(0xA));
  c.resolve(1, gid(0xB));
  auto f = c.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.op, 0xFF);
  EXPECT_EQ(f->header.status, Status::malformed);
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_EQ(on_loop([&] { return service_->resolver().stats().pending; }), 0u);
}

TEST_F(ServiceTest, DisconnectCancelsRequestsInFlight) {
  start();
  {
    Client c(config_.server.socket);
    c.resolve(1, gid(0xA));
    c.resolve(2, gid(0xB));
    sa_.wait_query(1);
    EXPECT_EQ(on_loop([&] { return service_->resolver().stats().pending; }), 2u);
  }
  // The loop notices the EOF; a STATS round trip on another connection orders after it.
  Client probe(config_.server.socket);
  for (int i = 0; i < 100 && on_loop([&] { return service_->resolver().stats().pending; }) != 0; ++i) {
    probe.request(Op::stats, static_cast<std::uint32_t>(i));
    probe.body(static_cast<std::uint32_t>(i));
  }
  EXPECT_EQ(on_loop([&] { return service_->resolver().stats().pending; }), 0u);
  // The late SA answer completes nothing and breaks nothing.
  answer(sa_.wait_query(0), 10);
  EXPECT_EQ(on_loop([&] { return service_->resolver().stats().pending; }), 0u);
}

TEST_F(ServiceTest, CancelAnswersTheTargetCancelled) {
  start();
  Client c(config_.server.socket);
  c.resolve(1, gid(0xA));
  sa_.wait_query(0);
  std::vector<std::uint8_t> out;
  protocol::append_cancel(out, 2, protocol::CancelRequest{1});
  ASSERT_TRUE(c.send(out));
  auto cancelled = c.next();
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->header.id, 1u);
  EXPECT_EQ(cancelled->header.status, Status::cancelled);
  auto ack = c.next();
  ASSERT_TRUE(ack);
  EXPECT_EQ(ack->header.id, 2u);
  EXPECT_EQ(ack->header.status, Status::ok);
}

TEST_F(ServiceTest, PrivilegedOperationsFollowTheInjectedCheck) {
  bool allow = false;
  start([&allow](const PeerCredentials&) { return allow; });
  Client c(config_.server.socket);
  protocol::NeighAdd add{*core::IpAddr::parse("10.0.0.2"), core::HwAddr::from(0x48, gid(0xA)), core::Lid{7}};
  std::vector<std::uint8_t> out;
  protocol::append_neigh_add(out, 1, add);
  protocol::append_flush(out, 2, protocol::FlushRequest{});
  ASSERT_TRUE(c.send(out));
  auto denied = c.next();
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->header.status, Status::denied);
  denied = c.next();
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->header.status, Status::denied);
  EXPECT_TRUE(on_loop([&] { return service_->resolver().neighbours().empty(); }));

  on_loop([&] { allow = true; });
  out.clear();
  protocol::append_neigh_add(out, 3, add);
  ASSERT_TRUE(c.send(out));
  auto ok = c.next();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->header.status, Status::ok);
  c.request(Op::neigh_list, 4);
  nlohmann::json list = nlohmann::json::parse(c.body(4));
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["ip"], "10.0.0.2");
  EXPECT_EQ(list[0]["slid"], 7);
}

// FLUSH says how many entries it dropped; NEIGH_DEL of an absent IP and NEIGH_ADD of a hardware
// address with a zero GID are refused (unreachable, invalid) instead of acknowledged.
TEST_F(ServiceTest, AdministrativeRepliesSayWhatHappened) {
  start([](const PeerCredentials&) { return true; });
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  std::vector<std::uint8_t> out;
  protocol::append_flush(out, 2, protocol::FlushRequest{gid(0xA), std::nullopt, std::nullopt});
  protocol::append_flush(out, 3, protocol::FlushRequest{gid(0xA), std::nullopt, std::nullopt});
  protocol::append_neigh_add(out, 4, protocol::NeighAdd{*core::IpAddr::parse("10.0.0.2"),
                                                        core::HwAddr::from(0x48, core::Gid{}), std::nullopt});
  protocol::append_neigh_del(out, 5, protocol::NeighDel{*core::IpAddr::parse("10.0.0.9")});
  c.send(out);
  for (std::uint32_t dropped : {1u, 0u}) {
    auto flushed = c.next();
    ASSERT_TRUE(flushed);
    EXPECT_EQ(flushed->header.status, Status::ok);
    auto count = protocol::decode_flush_reply(flushed->payload);
    ASSERT_TRUE(count) << count.error();
    EXPECT_EQ(count.value(), dropped);
  }
  auto add = c.next();
  ASSERT_TRUE(add);
  EXPECT_EQ(add->header.status, Status::invalid);
  auto del = c.next();
  ASSERT_TRUE(del);
  EXPECT_EQ(del->header.status, Status::unreachable);
  EXPECT_TRUE(on_loop([&] { return service_->resolver().neighbours().empty(); }));
}

// While the SA is silent the log says so once, and says when it answers again.
TEST_F(ServiceTest, SaSilenceIsLoggedOnceAndSoIsItsEnd) {
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  config_.policy.retry_base = 1ms;
  start();
  Client c(config_.server.socket);
  c.resolve(1, gid(0xA));
  for (std::size_t attempt = 0; attempt < 3; ++attempt) {
    core::PathQuery q = sa_.wait_query(attempt);
    on_loop([&] { service_->port(0).on_query_result(q.id, core::QueryResult{core::Error::timeout, {}}); });
  }
  answer(sa_.wait_query(3), 10);
  auto f = c.next();
  stop();
  spdlog::set_default_logger(previous);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.status, Status::ok);
  std::string text = log.str();
  EXPECT_THAT(text, ::testing::HasSubstr("[warning] SA not answering since "));
  EXPECT_EQ(text.find("SA not answering"), text.rfind("SA not answering")) << "once:\n" << text;
  EXPECT_THAT(text, ::testing::HasSubstr("[info] SA answering again after "));
  EXPECT_THAT(text, ::testing::HasSubstr(" s (3 queries timed out meanwhile)"));
}

// The real SO_PEERCRED path: a child that dropped to uid 65534 is refused FLUSH.
TEST_F(ServiceTest, NonRootPeerIsDeniedByItsCredentials) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch uid";
  start();
  std::vector<std::uint8_t> flush;
  protocol::append_flush(flush, 9, protocol::FlushRequest{});
  std::string path = config_.server.socket;
  pid_t child = ::fork();
  if (child == 0) {  // only syscalls from here: the parent has threads
    if (::setresgid(65534, 65534, 65534) != 0 || ::setresuid(65534, 65534, 65534) != 0) ::_exit(10);
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) ::_exit(11);
    if (::write(fd, flush.data(), flush.size()) != static_cast<ssize_t>(flush.size())) ::_exit(12);
    std::uint8_t reply[12];
    if (::read(fd, reply, sizeof(reply)) != 12) ::_exit(13);
    ::_exit(reply[6]);  // the status byte
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), static_cast<int>(Status::denied));

  Client root(config_.server.socket);  // this process is root: allowed
  ASSERT_TRUE(root.send(flush));
  auto ok = root.next();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->header.status, Status::ok);
}

TEST_F(ServiceTest, StatsHaveTheDocumentedFields) {
  start();
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  c.resolve(2, gid(0xA));
  c.next();
  c.request(Op::stats, 3);
  nlohmann::json stats = nlohmann::json::parse(c.body(3));
  for (const char* key : {"resolves", "cache_hits", "stale_hits", "provisional_hits", "misses", "coalesced",
                          "sa_queries", "sa_retries", "sa_timeouts", "sa_errors", "failures", "evictions",
                          "entries", "pending", "inflight", "sm_changes", "fabric", "server"}) {
    EXPECT_TRUE(stats.contains(key)) << key;
  }
  EXPECT_EQ(stats["resolves"], 2);
  EXPECT_EQ(stats["cache_hits"], 1);
  EXPECT_EQ(stats["sa_queries"], 1);
  EXPECT_EQ(stats["failures"]["total"], 0);
  EXPECT_TRUE(stats["failures"].contains("timeout"));
  EXPECT_EQ(stats["server"]["connections"], 1);
}

// What systemd shows in `systemctl status ibatd` (STATUS=): ports active, paths cached.
TEST_F(ServiceTest, StatusLineCountsActivePortsAndCachedPaths) {
  start();
  EXPECT_EQ(on_loop([this] { return service_->status_line(); }), "1 of 1 port active, 0 paths cached");
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  EXPECT_EQ(on_loop([this] { return service_->status_line(); }), "1 of 1 port active, 1 path cached");
  warm(c, 2, gid(0xB), 11);
  on_loop([this] { service_->port(0).on_local_port(core::LocalPort{kLocalGid, core::Lid{1}, core::Lid{1}, false}); });
  EXPECT_EQ(on_loop([this] { return service_->status_line(); }).rfind("0 of 1 port active, ", 0), 0u);
}

TEST_F(ServiceTest, StatsCarryTheFabricsGetTableCounters) {
  start();
  on_loop([this] {
    service_->set_fabric_stats(0, [] {
      fabric::FabricStats f;
      f.sa_gettables_sent = 4;
      f.sa_gettables_answered = 3;
      f.sa_table_records = 44;
      f.sa_table_bytes = 3216;
      f.oversized_mads = 1;
      f.sa_srtt_us = 180;
      f.sa_table_ns_per_record = 3330;
      f.sa_mad_timer_floor_us = 360;
      f.sa_table_timer_floor_us = 8000000;
      return f;
    });
  });
  Client c(config_.server.socket);
  c.request(Op::stats, 1);
  const nlohmann::json fabric = nlohmann::json::parse(c.body(1))["fabric"];
  EXPECT_EQ(fabric["sa_gettables_sent"], 4);
  EXPECT_EQ(fabric["sa_gettables_answered"], 3);
  EXPECT_EQ(fabric["sa_table_records"], 44);
  EXPECT_EQ(fabric["sa_table_bytes"], 3216);
  EXPECT_EQ(fabric["oversized_mads"], 1);
  EXPECT_EQ(fabric["sa_srtt_us"], 180);
  EXPECT_EQ(fabric["sa_table_ns_per_record"], 3330);
  EXPECT_EQ(fabric["sa_mad_timer_floor_us"], 360);
  EXPECT_EQ(fabric["sa_table_timer_floor_us"], 8000000);
}

TEST_F(ServiceTest, PathsListsTheCache) {
  start();
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  c.request(Op::paths, 2);
  std::string body = c.body(2);
  auto page = protocol::decode_paths_reply(std::span(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()));
  ASSERT_TRUE(page);
  EXPECT_EQ(page.value().next, 0u);
  nlohmann::json paths = nlohmann::json::parse(page.value().json);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0]["dgid"], gid(0xA).to_string());
  EXPECT_EQ(paths[0]["dlid"], 10);
  EXPECT_EQ(paths[0]["mtu"], 2048);
  EXPECT_EQ(paths[0]["state"], "valid");
}

// A listing is served a page per request: no request makes the loop build the whole cache, and
// the other clients' requests are answered between the pages.
TEST_F(ServiceTest, LargeListingComesInPagesWithOtherClientsServedBetween) {
  start();
  constexpr std::uint64_t kEntries = 2'500;
  std::vector<core::CacheEntryView> views;
  for (std::uint64_t n = 0; n < kEntries; ++n)
    views.push_back({kLocalGid, gid(0x1000 + n), core::Pkey{0xFFFF}, {}, core::EntryState::valid,
                     path_to(gid(0x1000 + n), static_cast<std::uint16_t>(100 + n)), 0ms, 0ms, core::Error::ok});
  on_loop([&] { service_->resolver().load_stale(views); });
  Client lister(config_.server.socket);
  Client other(config_.server.socket);
  std::set<std::string> seen;
  std::uint32_t cursor = 0, id = 1;
  int pages = 0;
  do {
    std::vector<std::uint8_t> out;
    protocol::append_paths_request(out, id, protocol::PathsRequest{cursor, 0});
    lister.send(out);
    std::string body = lister.body(id);
    auto page = protocol::decode_paths_reply(std::span(reinterpret_cast<const std::uint8_t*>(body.data()), body.size()));
    ASSERT_TRUE(page) << page.error();
    nlohmann::json entries = nlohmann::json::parse(page.value().json);
    ASSERT_LE(entries.size(), protocol::kPathsPageSize);
    for (const auto& e : entries) EXPECT_TRUE(seen.insert(e["dgid"].get<std::string>()).second) << e;
    other.resolve(1000 + id, gid(0x1000 + id), true);  // answered before the next page is asked for
    auto reply = other.next();
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->header.id, 1000 + id);
    EXPECT_EQ(reply->header.status, Status::ok);
    ASSERT_TRUE(page.value().next == 0 || page.value().next > cursor);
    cursor = page.value().next;
    ++pages;
    ++id;
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), kEntries);
  EXPECT_GE(pages, 3);
  // A smaller page on request; a cursor past the end is an empty last page; a bad body is malformed.
  std::vector<std::uint8_t> out;
  protocol::append_paths_request(out, 90, protocol::PathsRequest{0, 7});
  protocol::append_paths_request(out, 91, protocol::PathsRequest{0xFFFFFFF0u, 0});
  lister.send(out);
  std::string small = lister.body(90);
  auto seven = protocol::decode_paths_reply(std::span(reinterpret_cast<const std::uint8_t*>(small.data()), small.size()));
  ASSERT_TRUE(seven);
  EXPECT_EQ(nlohmann::json::parse(seven.value().json).size(), 7u);
  EXPECT_NE(seven.value().next, 0u);
  std::string past = lister.body(91);
  auto none = protocol::decode_paths_reply(std::span(reinterpret_cast<const std::uint8_t*>(past.data()), past.size()));
  ASSERT_TRUE(none);
  EXPECT_EQ(none.value().json, "[]");
  EXPECT_EQ(none.value().next, 0u);
  std::vector<std::uint8_t> bad;
  protocol::FrameHeader header;
  header.op = static_cast<std::uint8_t>(Op::paths);
  header.id = 92;
  protocol::append_frame(bad, header, std::vector<std::uint8_t>{1, 2, 3});
  lister.send(bad);
  auto error = lister.next();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->header.status, Status::malformed);
  EXPECT_TRUE(lister.closed_by_peer());
}

TEST_F(ServiceTest, SharedTableShrinksWhenARepublishLeavesItMostlyEmpty) {
  start();
  Client c(config_.server.socket);
  constexpr std::uint32_t kPaths = 40;  // more than 16 slots hold: the table grows
  for (std::uint32_t n = 0; n < kPaths; ++n) warm(c, 10 + n, gid(0x100 + n), static_cast<std::uint16_t>(20 + n));
  on_loop([] {});
  const std::string table_path = shm::table_path_for_socket(config_.server.socket);
  std::string error;
  auto grown = shm::open_table_file(table_path, ::geteuid(), error);
  ASSERT_TRUE(grown) << error;
  EXPECT_GE(grown->reader.slot_count(), kPaths * shm::kSlotsPerKey);
  EXPECT_EQ(on_loop([&] { return service_->table_published(); }), kPaths);

  on_loop([&] { service_->port(0).on_sm_changed(); });  // every path stale: the republish publishes none
  EXPECT_TRUE(grown->reader.moved());
  auto small = shm::open_table_file(table_path, ::geteuid(), error);
  ASSERT_TRUE(small) << error;
  EXPECT_EQ(small->reader.slot_count(), shm::kMinSlots);
  EXPECT_FALSE(small->reader.moved());
  EXPECT_EQ(on_loop([&] { return service_->table_published(); }), 0u);
}

TEST_F(ServiceTest, SharedTableHoldsTheValidPathsAndFollowsFlushAndSmChange) {
  start();
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  on_loop([] {});  // the result's handler, which publishes, has finished
  const std::string table_path = shm::table_path_for_socket(config_.server.socket);
  std::string error;
  auto table = shm::open_table_file(table_path, ::geteuid(), error);
  ASSERT_TRUE(table) << error;
  auto lookup = [&](const core::Gid& dgid) { return table->reader.lookup(table->reader.key_for(dgid, nullptr, nullptr)); };
  auto hit = lookup(gid(0xA));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->path.decode(), path_to(gid(0xA), 10));
  EXPECT_EQ(on_loop([&] { return service_->table_published(); }), 1u);

  std::vector<std::uint8_t> flush;
  protocol::append_flush(flush, 2, protocol::FlushRequest{gid(0xA), std::nullopt, std::nullopt});
  c.send(flush);
  auto reply = c.next();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->header.status, Status::ok);
  on_loop([] {});
  EXPECT_FALSE(lookup(gid(0xA))) << "flushed";

  warm(c, 3, gid(0xB), 11);
  on_loop([] {});
  EXPECT_TRUE(lookup(gid(0xB)));
  on_loop([&] { service_->port(0).on_sm_changed(); });
  EXPECT_FALSE(lookup(gid(0xB))) << "stale after an SM change";

  // Clients report their table hits; STATS counts them beside the socket's cache hits.
  warm(c, 4, gid(0xC), 12);
  on_loop([] {});
  hit = lookup(gid(0xC));
  ASSERT_TRUE(hit);
  std::vector<std::uint8_t> report;
  protocol::append_table_hits(report, 5, protocol::TableHits{hit->generation, 1000, {hit->slot}});
  c.send(report);
  reply = c.next();
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->header.id, 5u);
  EXPECT_EQ(reply->header.status, Status::ok);
  c.request(Op::stats, 6);
  nlohmann::json stats = nlohmann::json::parse(c.body(6));
  EXPECT_EQ(stats["table_hits"], 1000);
  EXPECT_EQ(stats["cache_hits"], 1) << "the reported key was marked used once";

  stop();
  EXPECT_FALSE(std::filesystem::exists(table_path)) << "removed when the daemon stops";
  EXPECT_FALSE(lookup(gid(0xB)));
}

// The table starts at its smallest and grows as paths are published: a reader of the first one
// learns it moved, and the file at the path holds every path in no more slots than two per path,
// rounded up to a power of two.
TEST_F(ServiceTest, SharedTableGrowsWithThePathsItHolds) {
  start();
  const std::string table_path = shm::table_path_for_socket(config_.server.socket);
  std::string error;
  auto first = shm::open_table_file(table_path, ::geteuid(), error);
  ASSERT_TRUE(first) << error;
  EXPECT_EQ(first->reader.slot_count(), shm::kMinSlots);
  Client c(config_.server.socket);
  constexpr std::uint16_t kPaths = 20;
  for (std::uint16_t n = 1; n <= kPaths; ++n) warm(c, n, gid(0x100 + n), static_cast<std::uint16_t>(10 + n));
  on_loop([] {});
  EXPECT_EQ(on_loop([&] { return service_->table_published(); }), kPaths);
  EXPECT_TRUE(first->reader.moved());
  auto grown = shm::open_table_file(table_path, ::geteuid(), error);
  ASSERT_TRUE(grown) << error;
  EXPECT_FALSE(grown->reader.moved());
  EXPECT_EQ(grown->reader.slot_count(), 64u);
  EXPECT_EQ(std::filesystem::file_size(table_path), shm::table_bytes(64));
  for (std::uint16_t n = 1; n <= kPaths; ++n) {
    auto hit = grown->reader.lookup(grown->reader.key_for(gid(0x100 + n), nullptr, nullptr));
    ASSERT_TRUE(hit) << n;
    EXPECT_EQ(hit->path.decode(), path_to(gid(0x100 + n), static_cast<std::uint16_t>(10 + n)));
  }
}

TEST_F(ServiceTest, WatchStreamsEvents) {
  start();
  Client c(config_.server.socket);
  c.request(Op::watch, 5);
  c.request(Op::stats, 6);  // orders the WATCH before the event below
  c.body(6);
  on_loop([&] { service_->port(0).on_sm_changed(); });
  auto event = c.next();
  ASSERT_TRUE(event);
  EXPECT_EQ(event->header.id, 5u);
  EXPECT_TRUE(event->header.more());
  nlohmann::json body = nlohmann::json::parse(event->text());
  EXPECT_EQ(body["event"], "sm_change");
  EXPECT_TRUE(body.contains("time_ms"));
}

TEST_F(ServiceTest, WatchReportsTheSmLidAndPathChanges) {
  config_.policy.revalidate_jitter = 0ms;
  start();
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  c.request(Op::watch, 5);
  c.request(Op::stats, 6);  // orders the WATCH before the events below
  c.body(6);
  auto next_event = [&](const std::string& name) {
    while (auto f = c.next()) {
      nlohmann::json e = nlohmann::json::parse(f->text());
      if (e["event"] == name) return e;
    }
    ADD_FAILURE() << "no " << name << " event";
    return nlohmann::json{};
  };
  std::size_t index = sa_.count();
  on_loop([&] {
    service_->port(0).on_local_port(core::LocalPort{kLocalGid, core::Lid{1}, core::Lid{7}, true});  // the new master
    service_->port(0).on_sm_changed();
  });
  EXPECT_EQ(next_event("sm_change")["sm_lid"], 7);
  answer(sa_.wait_query(index), 11);  // the revalidation finds another DLID
  nlohmann::json path = next_event("path");
  EXPECT_EQ(path["dgid"], gid(0xA).to_string());
  EXPECT_EQ(path["sgid"], kLocalGid.to_string());
  EXPECT_EQ(path["pkey"], "0xffff");
  EXPECT_EQ(path["old_dlid"], 10);
  EXPECT_EQ(path["dlid"], 11);
  EXPECT_EQ(path["old_state"], "stale");
  EXPECT_EQ(path["state"], "valid");
}

TEST_F(ServiceTest, ShutdownAnswersPendingRequestsCancelledAndWritesTheSnapshot) {
  start();
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  c.resolve(2, gid(0xB));
  sa_.wait_query(1);
  std::promise<void> done;
  asio::post(loop_, [&] { service_->shutdown([&] { done.set_value(); }); });
  auto cancelled = c.next();
  ASSERT_TRUE(cancelled);
  EXPECT_EQ(cancelled->header.id, 2u);
  EXPECT_EQ(cancelled->header.status, Status::cancelled);
  EXPECT_TRUE(c.closed_by_peer());
  ASSERT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(std::filesystem::exists(config_.snapshot.cache_file));
  EXPECT_FALSE(std::filesystem::exists(config_.server.socket));
}

// ibatd started by hand with the default config: the state directory (/var/lib/ibat) may not exist.
TEST_F(ServiceTest, MissingStateDirectoryIsCreatedForTheSnapshot) {
  config_.snapshot.cache_file = (dir_ / "state" / "cache").string();
  start();
  std::promise<void> done;
  asio::post(loop_, [&] { service_->shutdown([&] { done.set_value(); }); });
  ASSERT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(std::filesystem::is_regular_file(config_.snapshot.cache_file));
}

TEST_F(ServiceTest, WarmCacheSurvivesARestart) {
  start();
  {
    Client c(config_.server.socket);
    warm(c, 1, gid(0xA), 10);
  }
  std::promise<void> done;
  asio::post(loop_, [&] { service_->shutdown([&] { done.set_value(); }); });
  ASSERT_EQ(done.get_future().wait_for(5s), std::future_status::ready);
  stop();

  start();
  Client c(config_.server.socket);
  c.resolve(2, gid(0xA), /*cache_only=*/true);
  auto f = c.next();
  ASSERT_TRUE(f);
  ASSERT_EQ(f->header.status, Status::ok);
  core::ResolveResult r = resolve_reply(*f);
  EXPECT_EQ(r.path.dlid.value, 10);
  EXPECT_EQ(r.state, core::EntryState::stale);
}

TEST_F(ServiceTest, CorruptSnapshotIsIgnored) {
  std::ofstream(config_.snapshot.cache_file) << "IBATSNAP but not really a snapshot at all";
  start();
  Client c(config_.server.socket);
  c.resolve(1, gid(0xA), /*cache_only=*/true);
  auto f = c.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.status, Status::no_record);
  EXPECT_EQ(on_loop([&] { return service_->resolver().stats().entries; }), 0u);
}

TEST_F(ServiceTest, ReloadAppliesThePolicy) {
  start();
  DaemonConfig next = config_;
  next.policy.path_ttl = 42s;
  next.server.max_outstanding_per_connection = 1;
  on_loop([&] { service_->reload(next); });
  EXPECT_EQ(on_loop([&] { return service_->resolver().policy().path_ttl; }), 42s);
  Client c(config_.server.socket);
  c.resolve(1, gid(0xA));
  c.resolve(2, gid(0xB));
  auto f = c.next();
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.id, 2u);
  EXPECT_EQ(f->header.status, Status::overloaded);
}

TEST_F(ServiceTest, ASecondDaemonOnTheSameSocketIsRefused) {
  start();
  asio::io_context other_loop;
  FakeSa other_sink;
  Service other(other_loop, config_, other_sink);
  EXPECT_THROW(other.start(), std::runtime_error);
}

}  // namespace
}  // namespace ibat::server

namespace ibat::server {
namespace {

// The ACM endpoint with the real ib_acme (Debian ibacm) as the client.
class AcmEndpointTest : public ServiceTest {
 protected:
  static std::string run(const std::string& command) {
    std::string output;
    FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return output;
    std::array<char, 512> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) output += buf.data();
    ::pclose(pipe);
    return output;
  }
};

TEST_F(AcmEndpointTest, IbAcmeResolvesAGidAndReadsTheCounters) {
  if (!std::filesystem::exists("/usr/bin/ib_acme")) GTEST_SKIP() << "ib_acme (ibacm package) not installed";
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  Client c(config_.server.socket);
  warm(c, 1, gid(0xA), 10);
  std::string resolved = run("/usr/bin/ib_acme -S " + config_.server.acm_socket + " -f g -s " +
                             kLocalGid.to_string() + " -d " + gid(0xA).to_string());
  EXPECT_THAT(resolved, ::testing::HasSubstr("dlid: 10"));
  std::string counters = run("/usr/bin/ib_acme -S " + config_.server.acm_socket + " -P");
  EXPECT_THAT(counters, ::testing::HasSubstr("Route Cache Count"));
  EXPECT_THAT(counters, ::testing::HasSubstr("return status 0x0"));
}

}  // namespace
}  // namespace ibat::server

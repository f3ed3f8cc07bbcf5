// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibatd's limits against a rogue local client (docs/security.md), with the SA faked: a flooding
// connection is answered `overloaded` past its cap while another client keeps resolving; the
// global pending budget bounds the daemon (and is shared: the documented gap); a client that does
// not read its replies is cut off; connections beyond max_connections are closed at once (on
// each socket, and counted); an ACM client past its in-flight cap gets ENOMEM answers; a uid past
// its share of pending requests (both sockets) is answered `overloaded` while another uid is
// served, and every share it took comes back.
#include <malloc.h>
#include <sys/resource.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "security_harness.h"
#include "server/acm/acm_messages.h"
#include "server/acm/path_record_wire.h"

namespace ibat::server::security_test {
namespace {

using protocol::Op;
using protocol::Status;

class Limits : public DaemonTest {
 protected:
  // n connections, each answered a STATS; fewer if one was not (the test then fails on the size).
  std::vector<std::unique_ptr<Client>> open_answered(std::uint32_t n) {
    std::vector<std::unique_ptr<Client>> clients;
    for (std::uint32_t i = 0; i < n; ++i) {
      auto client = std::make_unique<Client>(config_.server.socket);
      client->request(Op::stats, i);
      if (client->body(i).empty()) break;
      clients.push_back(std::move(client));
    }
    return clients;
  }
  // A gauge of the daemon's once it is `n`, or after 5 s: it sees a client's close on a later turn
  // of its loop. Open connections by default (`acm_connections`: the ACM socket's).
  std::uint64_t wait_gauge(std::uint64_t n, std::uint64_t ServerStats::*gauge = &ServerStats::connections) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (server_counters().*gauge != n && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return server_counters().*gauge;
  }
};

// The fake SA leaves the floods unanswered, which the SaPacer rightly reads as an SA that does not
// keep up and shrinks its window to; these tests count the server's caps, so the window is off.
TEST_F(Limits, FloodingClientIsOverloadedWhileAnotherKeepsResolving) {
  config_.server.max_outstanding_per_connection = 8;
  config_.policy.sa_adaptive = false;
  start();
  Client victim(config_.server.socket);
  warm(victim, 1, gid(0xA), 10);
  const std::size_t queries_before = sa_.count();

  Client flooder(config_.server.socket);
  std::vector<std::uint8_t> flood;
  for (std::uint32_t id = 1; id <= 1000; ++id) {
    core::ResolveRequest r;
    r.target = gid(0x1000 + id);  // every one a miss the SA never answers
    protocol::append_resolve_request(flood, id, r);
  }
  ASSERT_TRUE(flooder.send(flood));
  for (std::uint32_t id = 9; id <= 1000; ++id) {  // beyond the first 8: refused at once, in order
    auto f = flooder.next();
    ASSERT_TRUE(f) << id;
    ASSERT_EQ(f->header.id, id);
    ASSERT_EQ(f->header.status, Status::overloaded);
  }
  sa_.wait_query(queries_before + 7);
  EXPECT_EQ(sa_.count(), queries_before + 8);  // the refused ones cost the SA nothing

  // The victim is unaffected: cached and uncached resolves succeed, listings answer.
  victim.resolve(2, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(victim.status_of(2), Status::ok);
  warm(victim, 3, gid(0xB), 11);
  victim.request(Op::stats, 4);
  EXPECT_FALSE(victim.body(4).empty());

  // The flooder is not punished beyond its cap: an answered query frees a slot.
  answer(sa_.wait_query(queries_before), 20);
  auto answered = flooder.next();
  ASSERT_TRUE(answered);
  EXPECT_LE(answered->header.id, 8u);
  EXPECT_EQ(answered->header.status, Status::ok);
  flooder.resolve(1001, gid(0xC));
  EXPECT_EQ(*sa_.wait_query(queries_before + 9).dgid, gid(0xC));  // after 8 floods + the victim's miss
  EXPECT_EQ(server_counters().protocol_errors, 0u);
}

// Known gap (docs/security.md): max_pending is one budget for every client, so enough flooding
// connections starve the others' cache misses. Cache hits never need it and keep working.
TEST_F(Limits, GlobalPendingBudgetBoundsTheDaemonAndCacheHitsSurviveItsExhaustion) {
  config_.server.max_outstanding_per_connection = 8;
  config_.policy.max_pending = 16;
  config_.policy.sa_adaptive = false;  // see FloodingClientIsOverloadedWhileAnotherKeepsResolving
  start();
  Client victim(config_.server.socket);
  warm(victim, 1, gid(0xA), 10);
  const std::size_t queries_before = sa_.count();

  Client flooders[3] = {Client(config_.server.socket), Client(config_.server.socket),
                        Client(config_.server.socket)};
  std::uint64_t next_gid = 0x1000;
  for (std::size_t k = 0; k < 2; ++k) {
    Client& f = flooders[k];
    for (std::uint32_t id = 1; id <= 8; ++id) f.resolve(id, gid(next_gid++));
    f.request(Op::stats, 99);  // its resolves were all taken in before this is answered
    f.body(99);
  }
  // 16 pending in total: the third flooder, within its own cap, is refused by the global budget.
  for (std::uint32_t id = 1; id <= 8; ++id) flooders[2].resolve(id, gid(next_gid++));
  for (std::uint32_t id = 1; id <= 8; ++id) EXPECT_EQ(flooders[2].status_of(id), Status::overloaded);
  EXPECT_EQ(on_loop([this] { return service_->resolver().stats().pending; }), 16u);
  sa_.wait_query(queries_before + 15);
  EXPECT_EQ(sa_.count(), queries_before + 16);

  victim.resolve(2, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(victim.status_of(2), Status::ok);  // cache hit: served
  victim.resolve(3, gid(0xB));
  EXPECT_EQ(victim.status_of(3), Status::overloaded);  // miss: starved (the gap)
}

TEST_F(Limits, ClientThatDoesNotReadItsRepliesIsCutOffAndOthersAreServed) {
  config_.server.max_queued_bytes_per_connection = 1u << 17;  // the smallest accepted
  start();
  Client victim(config_.server.socket);
  warm(victim, 1, gid(0xA), 10);

  Client reader_less(config_.server.socket);
  std::vector<std::uint8_t> batch;
  for (std::uint32_t id = 0; id < 100; ++id) protocol::append_empty_request(batch, id, Op::stats);
  bool cut_off = false;
  for (int round = 0; round < 10'000 && !cut_off; ++round) cut_off = !reader_less.send(batch);
  EXPECT_TRUE(cut_off) << "1,000,000 unread STATS replies were accepted";
  EXPECT_TRUE(reader_less.closed_by_peer());
  EXPECT_EQ(server_counters().slow_clients, 1u);

  victim.resolve(2, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(victim.status_of(2), Status::ok);
}

// Clients that each stay under their own reply cap still meet the daemon's one ceiling across all
// connections (server.max_queued_bytes_total): the connection holding the most is cut first, and
// one holding little, and the reading client, keep being served.
TEST_F(Limits, PastTheDaemonsReplyCeilingTheConnectionHoldingTheMostIsCutFirst) {
  config_.server.max_queued_bytes_total = 1u << 20;  // the smallest accepted; per connection: 4 MiB
  start();
  Client victim(config_.server.socket);
  warm(victim, 1, gid(0xA), 10);

  std::vector<std::uint8_t> few;
  for (std::uint32_t id = 0; id < 10; ++id) protocol::append_empty_request(few, id, Op::stats);
  Client light(config_.server.socket);  // unread for now, but small
  ASSERT_TRUE(light.send(few));

  Client hog(config_.server.socket);
  std::vector<std::uint8_t> batch;
  for (std::uint32_t id = 0; id < 100; ++id) protocol::append_empty_request(batch, id, Op::stats);
  bool cut_off = false;
  for (int round = 0; round < 10'000 && !cut_off; ++round) cut_off = !hog.send(batch);
  EXPECT_TRUE(cut_off) << "1,000,000 unread STATS replies were accepted";
  EXPECT_TRUE(hog.closed_by_peer());
  EXPECT_EQ(server_counters().cut_over_ceiling, 1u);
  EXPECT_EQ(server_counters().slow_clients, 0u);  // it stayed under its own 4 MiB

  for (std::uint32_t id = 0; id < 10; ++id) EXPECT_FALSE(light.body(id).empty()) << id;
  victim.resolve(2, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(victim.status_of(2), Status::ok);
}

// Past a uid's share of unread replies (server.max_queued_bytes_per_uid) that uid's connection
// holding the most is cut, not another user's slow reader that holds more than any one of its:
// with the daemon's ceiling alone, eight connections of uid 0 could push uid 65534's one reader
// over it and have that reader cut, being the largest.
TEST_F(Limits, PastAUidsShareOfUnreadRepliesThatUidsLargestIsCutNotAnotherUsersSlowReader) {
  if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
  config_.server.max_queued_bytes_per_uid = 1u << 20;
  config_.server.max_queued_bytes_total = 4u << 20;  // above one uid's share plus the reader
  start();
  Client probe(config_.server.socket);
  probe.request(Op::stats, 0);
  const std::size_t reply = probe.body(0).size() + protocol::kHeaderSize;
  ASSERT_GT(reply, 0u);

  // uid 65534 leaves about 800 KiB of replies unread (the socket buffer takes some of it).
  Client reader(connect_as(config_.server.socket, Identity{}));
  ASSERT_TRUE(reader.connected());
  const std::uint32_t asked = static_cast<std::uint32_t>((800u << 10) / reply);
  std::vector<std::uint8_t> many;
  for (std::uint32_t id = 0; id < asked; ++id) protocol::append_empty_request(many, id, Op::stats);
  ASSERT_TRUE(reader.send(many));

  // uid 0 asks for STATS on eight connections in turn, none read.
  std::vector<std::unique_ptr<Client>> hogs;
  for (int i = 0; i < 8; ++i) hogs.push_back(std::make_unique<Client>(config_.server.socket));
  std::vector<std::uint8_t> ten;
  for (std::uint32_t id = 0; id < 10; ++id) protocol::append_empty_request(ten, id, Op::stats);
  bool cut_off = false;
  for (int round = 0; round < 10'000 && !cut_off; ++round) {
    for (auto& hog : hogs) cut_off = cut_off || !hog->send(ten);
  }
  EXPECT_TRUE(cut_off) << "uid 0 left 800,000 STATS replies unread on 8 connections";
  EXPECT_GE(server_counters().cut_over_uid_share, 1u);
  EXPECT_EQ(server_counters().cut_over_ceiling, 0u);
  EXPECT_EQ(server_counters().slow_clients, 0u);

  for (std::uint32_t id = 0; id < asked; ++id) ASSERT_FALSE(reader.body(id).empty()) << id;  // never cut
}

// Root and admin_group get server.admin_share times each per-uid limit; everyone else one.
TEST_F(Limits, RootAndAdminGroupGetAdminShareTimesEachPerUidLimit) {
  if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
  config_.server.max_connections_per_uid = 2;
  config_.server.max_pending_per_uid = 2;
  config_.server.admin_share = 3;
  config_.server.admin_group = "daemon";  // Debian's gid 1
  config_.policy.sa_adaptive = false;  // see FloodingClientIsOverloadedWhileAnotherKeepsResolving
  start();
  const Identity admin{1, 1, {}};  // uid 1, primary group daemon
  const Identity nobody{};

  // Connections: 6 of uid 0, 6 of the admin_group member, 2 of nobody; one more of each is closed.
  std::vector<std::unique_ptr<Client>> root = open_answered(6);
  EXPECT_EQ(root.size(), 6u);
  std::vector<std::unique_ptr<Client>> admins, others;
  for (int i = 0; i < 6; ++i) admins.push_back(std::make_unique<Client>(connect_as(config_.server.socket, admin)));
  for (int i = 0; i < 2; ++i) others.push_back(std::make_unique<Client>(connect_as(config_.server.socket, nobody)));
  for (auto* group : {&admins, &others}) {
    for (std::size_t i = 0; i < group->size(); ++i) {
      (*group)[i]->request(Op::stats, 1);
      EXPECT_FALSE((*group)[i]->body(1).empty()) << i;
    }
  }
  EXPECT_EQ(server_counters().connections_refused_per_uid, 0u);
  for (const Identity& who : {Identity{0, 0, {}}, admin, nobody}) {
    Client extra(connect_as(config_.server.socket, who));
    EXPECT_TRUE(extra.closed_by_peer()) << who.uid;
  }
  EXPECT_EQ(server_counters().connections_refused_per_uid, 3u);

  // Pending requests: 6 misses of the admin_group member wait for the SA, the 7th is overloaded;
  // nobody's third likewise.
  const std::size_t queries_before = sa_.count();
  for (std::uint32_t i = 0; i < 6; ++i) admins[i / 3]->resolve(10 + i, gid(0x1000 + i));
  sa_.wait_query(queries_before + 5);
  admins[2]->resolve(20, gid(0x1100));
  EXPECT_EQ(admins[2]->status_of(20), Status::overloaded);
  others[0]->resolve(10, gid(0x2000));
  others[0]->resolve(11, gid(0x2001));
  sa_.wait_query(queries_before + 7);
  others[1]->resolve(12, gid(0x2002));
  EXPECT_EQ(others[1]->status_of(12), Status::overloaded);
  EXPECT_EQ(server_counters().pending_refused_per_uid, 2u);
  EXPECT_EQ(server_counters().clients_pending, 8u);
}

// The ERROR reply to an unknown op passes the same reply-queue cap as every other reply: a client
// that pipelines unknown ops and never reads is cut off, and the daemon's memory stays bounded
// (each 12-byte frame would otherwise leave a ~26-byte reply queued).
TEST_F(Limits, UnknownOpFloodFromAClientThatDoesNotReadIsCutOff) {
  config_.server.max_queued_bytes_per_connection = 1u << 17;  // the smallest accepted
  start();
  Client victim(config_.server.socket);
  warm(victim, 1, gid(0xA), 10);

  std::vector<std::uint8_t> batch;  // 1 MiB of frames with op 0x42
  for (std::uint32_t id = 0; batch.size() + protocol::kHeaderSize <= (1u << 20); ++id) {
    protocol::append_frame(batch, protocol::FrameHeader{protocol::kVersion, 0x42, Status::ok, 0, id, 0}, {});
  }
  const long peak_before = peak_rss_kib();
  Client hostile(config_.server.socket);
  bool cut_off = false;
  for (int round = 0; round < 16 && !cut_off; ++round) cut_off = !hostile.send(batch);
  const long peak_growth = peak_rss_kib() - peak_before;
  EXPECT_TRUE(cut_off) << "16 MiB of unknown-op frames were taken in without a reply being read";
  EXPECT_TRUE(hostile.closed_by_peer());
  EXPECT_EQ(server_counters().slow_clients, 1u);
  EXPECT_LT(peak_growth, 16 * 1024) << "KiB of peak RSS growth";

  victim.resolve(2, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(victim.status_of(2), Status::ok);
}

TEST_F(Limits, ConnectionsBeyondMaxConnectionsAreClosedAtOnce) {
  config_.server.max_connections = 3;
  start();
  std::vector<std::unique_ptr<Client>> clients = open_answered(3);
  ASSERT_EQ(clients.size(), 3u);
  Client extra(config_.server.socket);  // the kernel accepts it; the daemon closes it
  EXPECT_TRUE(extra.closed_by_peer());
  EXPECT_EQ(server_counters().connections, 3u);

  clients.front().reset();  // a slot frees up once the daemon sees the close
  ASSERT_EQ(wait_gauge(2), 2u);
  Client late(config_.server.socket);
  late.request(Op::stats, 7);
  EXPECT_FALSE(late.body(7).empty());
  clients.back()->request(Op::stats, 8);  // the ones already in were never disturbed
  EXPECT_FALSE(clients.back()->body(8).empty());
}

// One user (here the test's uid) cannot take more than max_connections_per_uid connections, though
// max_connections would allow more: the rest stay for other users.
TEST_F(Limits, ConnectionsOfOneUidBeyondItsShareAreClosedAtOnce) {
  config_.server.max_connections = 10;
  config_.server.max_connections_per_uid = 2;
  start();
  std::vector<std::unique_ptr<Client>> clients = open_answered(2);
  ASSERT_EQ(clients.size(), 2u);
  Client extra(config_.server.socket);
  EXPECT_TRUE(extra.closed_by_peer());
  EXPECT_EQ(server_counters().connections, 2u);
  EXPECT_EQ(server_counters().connections_refused_per_uid, 1u);
  EXPECT_EQ(server_counters().connections_refused, 0u);

  clients.front().reset();  // its share frees up once the daemon sees the close
  ASSERT_EQ(wait_gauge(1), 1u);
  Client late(config_.server.socket);
  late.request(Op::stats, 7);
  EXPECT_FALSE(late.body(7).empty());
}

// Counts the daemon's log lines that contain `needle`, and lets a test wait for the first.
class CountingSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit CountingSink(std::string needle) : needle_(std::move(needle)) {}
  std::size_t count() {
    std::lock_guard lock(mutex_);
    return count_;
  }
  bool wait_first() {
    std::unique_lock lock(mutex_);
    return seen_.wait_for(lock, 5s, [this] { return count_ > 0; });
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {  // called with mutex_ held
    if (std::string_view(msg.payload.data(), msg.payload.size()).find(needle_) == std::string_view::npos) return;
    ++count_;
    seen_.notify_all();
  }
  void flush_() override {}

 private:
  std::string needle_;
  std::condition_variable seen_;
  std::size_t count_ = 0;
};

// Out of file descriptors, accept() fails at once for every connection still in the backlog: the
// daemon must pause accepting (one log line per episode, no busy loop) and resume when a
// connection closes. The test process is the daemon: its descriptor limit is lowered so that the
// test's own clients exhaust it.
TEST_F(Limits, OutOfDescriptorsAcceptingPausesAndResumesWhenAConnectionCloses) {
  start();
  auto sink = std::make_shared<CountingSink>("Too many open files");
  // The daemon logs on its loop thread: swap its logger there.
  auto previous = on_loop([&] {
    auto p = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
    return p;
  });
  // One connection served before descriptors run out: the clients below connect faster than the
  // daemon accepts, so it creates its first connection objects with none left, and UBSan's vptr
  // check, whose first look at a type probes memory through a pipe, reports a valid object as
  // "invalid vptr" (it failed so in 5 runs of 6 under ctest's halt_on_error). Served once here,
  // the types are in UBSan's cache.
  {
    Client warm(config_.server.socket);
    warm.request(Op::stats, 1);
    ASSERT_FALSE(warm.body(1).empty());
  }
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &saved), 0);
  std::size_t open_fds = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++open_fds;
  rlimit lowered = saved;
  lowered.rlim_cur = open_fds + 40;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);

  // Each accepted connection costs two descriptors (ours and the daemon's): connect until socket()
  // fails here, then connect one more from a socket made beforehand: it waits in the backlog and
  // the daemon, with no descriptor left, cannot accept it. (No gtest assertion runs while the
  // process is out of descriptors: checking and reporting need some.)
  const int spare = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(spare, 0);
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < 100; ++i) {
    auto c = std::make_unique<Client>(config_.server.socket);
    if (!c->connected()) break;
    clients.push_back(std::move(c));
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", config_.server.socket.c_str());
  const bool spare_connected = ::connect(spare, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  Client waiting(spare);
  const bool ran_out = sink->wait_first();
  const double cpu_before = process_cpu_seconds();
  // A measurement window, not a synchronisation: a spinning accept loop logs per attempt.
  std::this_thread::sleep_for(300ms);
  const std::size_t lines = sink->count();
  const double cpu = process_cpu_seconds() - cpu_before;

  // Closing connections frees descriptors: the daemon accepts the waiting one and serves it. (The
  // limit goes back up at once: the sanitizers need descriptors to report anything.)
  const std::size_t connected = clients.size();
  for (std::size_t i = 0; i < 4 && i < clients.size(); ++i) clients[i].reset();
  ::setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_GE(connected, 4u);
  ASSERT_TRUE(spare_connected);
  ASSERT_TRUE(ran_out) << "the daemon never ran out of descriptors";
  EXPECT_LE(lines, 1u) << "log lines about one out-of-descriptors episode";
  EXPECT_LT(cpu, 0.25) << "CPU seconds in a 0.3 s window while paused";
  waiting.request(Op::stats, 1);
  EXPECT_FALSE(waiting.body(1).empty());
  Client late(config_.server.socket);
  late.request(Op::stats, 2);
  EXPECT_FALSE(late.body(2).empty());
  on_loop([&] { spdlog::set_default_logger(previous); });
}

// An ACM RESOLVE by DGID: a 16-byte header (RESOLVE length in host order) and one 72-byte
// acm_ep_addr_data entry (flags and type in host order, then the ibv_path_record).
std::vector<std::uint8_t> acm_resolve_by_dgid(std::uint64_t tid, const core::Gid& dgid) {
  std::vector<std::uint8_t> m(16 + acm::kEpLength, 0);
  m[0] = 1;  // version
  m[1] = static_cast<std::uint8_t>(acm::Opcode::resolve);
  const auto length = static_cast<std::uint16_t>(m.size());
  std::memcpy(&m[6], &length, sizeof(length));
  std::memcpy(&m[8], &tid, sizeof(tid));
  const std::uint32_t flags = acm::kEpFlagDest;
  const auto type = static_cast<std::uint16_t>(acm::EpType::path);
  std::memcpy(&m[16], &flags, sizeof(flags));
  std::memcpy(&m[20], &type, sizeof(type));
  core::PathRecord path;
  path.dgid = dgid;
  acm::encode_path_record(path, std::span<std::uint8_t, 64>(m.data() + 24, 64));
  return m;
}

// An ACM PERF_QUERY for the whole service (what `ib_acme -P` sends): a 16-byte header, length in
// network order.
std::vector<std::uint8_t> acm_perf_query(std::uint64_t tid) {
  std::vector<std::uint8_t> m(16, 0);
  m[0] = 1;  // version
  m[1] = static_cast<std::uint8_t>(acm::Opcode::perf_query);
  m[7] = 16;  // length, big-endian
  std::memcpy(&m[8], &tid, sizeof(tid));
  return m;
}

// The status byte of the answer to one ACM PERF_QUERY on `c`; nullopt when none came.
std::optional<std::uint8_t> acm_perf_status(Client& c, std::uint64_t tid) {
  if (!c.send(acm_perf_query(tid))) return std::nullopt;
  std::vector<std::uint8_t> header = c.read_bytes(16);
  if (header.size() != 16) return std::nullopt;
  const std::size_t length = (std::size_t{header[6]} << 8) | header[7];
  if (length > 16 && c.read_bytes(length - 16).size() != length - 16) return std::nullopt;
  return header[2];
}

TEST_F(Limits, AcmConnectionsBeyondMaxConnectionsAreRefusedAndCounted) {
  config_.server.max_connections = 2;
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  std::vector<std::unique_ptr<Client>> clients;
  for (std::uint64_t i = 0; i < 2; ++i) {
    clients.push_back(std::make_unique<Client>(config_.server.acm_socket));
    ASSERT_EQ(acm_perf_status(*clients.back(), i), 0u) << "connection " << i;
  }
  Client extra(config_.server.acm_socket);  // the kernel accepts it; the daemon closes it
  EXPECT_TRUE(extra.closed_by_peer());
  EXPECT_EQ(server_counters().acm_connections, 2u);
  EXPECT_EQ(server_counters().acm_connections_total, 2u);
  EXPECT_EQ(server_counters().acm_connections_refused, 1u);
  // The native socket counts apart: its own max_connections still has room.
  Client native(config_.server.socket);
  native.request(Op::stats, 1);
  EXPECT_FALSE(native.body(1).empty());
  EXPECT_EQ(server_counters().connections_refused, 0u);

  clients.front().reset();  // a slot frees up once the daemon sees the close
  ASSERT_EQ(wait_gauge(1, &ServerStats::acm_connections), 1u);
  Client late(config_.server.acm_socket);
  EXPECT_EQ(acm_perf_status(late, 7), 0u);
  EXPECT_EQ(acm_perf_status(*clients.back(), 8), 0u);  // the one already in was never disturbed
}

TEST_F(Limits, AcmClientThatDoesNotReadItsRepliesIsCutOff) {
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  Client reader_less(config_.server.acm_socket);
  std::vector<std::uint8_t> batch;  // 1000 PERF_QUERYs: 72 KB of replies
  for (std::uint64_t tid = 0; tid < 1000; ++tid) {
    std::vector<std::uint8_t> q = acm_perf_query(tid);
    batch.insert(batch.end(), q.begin(), q.end());
  }
  bool cut_off = false;
  for (int round = 0; round < 1000 && !cut_off; ++round) cut_off = !reader_less.send(batch);
  EXPECT_TRUE(cut_off) << "72 MB of unread ACM replies were accepted";
  EXPECT_EQ(server_counters().acm_slow_clients, 1u);

  Client other(config_.server.acm_socket);
  EXPECT_EQ(acm_perf_status(other, 1), 0u);
}

TEST_F(Limits, AcmErrorsAndBrokenMessagesAreCounted) {
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  Client c(config_.server.acm_socket);
  ASSERT_TRUE(c.send(acm_resolve_by_dgid(1, core::Gid{})));  // no destination: EDESTADDR
  std::vector<std::uint8_t> answer = c.read_bytes(16);
  ASSERT_EQ(answer.size(), 16u);
  EXPECT_EQ(answer[2], static_cast<std::uint8_t>(acm::Status::edestaddr));
  EXPECT_EQ(acm_perf_status(c, 2), 0u);  // a success is not an error
  EXPECT_EQ(server_counters().acm_errors, 1u);
  EXPECT_EQ(server_counters().acm_protocol_errors, 0u);

  std::vector<std::uint8_t> bad_version = acm_perf_query(3);
  bad_version[0] = 9;
  ASSERT_TRUE(c.send(bad_version));
  EXPECT_TRUE(c.read_bytes(1).empty()) << "the connection is closed without an answer";
  EXPECT_EQ(server_counters().acm_protocol_errors, 1u);
  EXPECT_EQ(server_counters().acm_errors, 1u);
}

TEST_F(Limits, AcmClientPastItsInFlightCapGetsEnomemAtOnce) {
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  Client acm(config_.server.acm_socket);
  ASSERT_TRUE(acm.connected());
  constexpr std::uint64_t kCap = 256;  // unanswered requests per ACM connection
  constexpr std::uint64_t kRequests = kCap + 44;
  for (std::uint64_t tid = 0; tid < kRequests; ++tid) {
    ASSERT_TRUE(acm.send(acm_resolve_by_dgid(tid, gid(0x1000 + tid))));
  }
  // The refused ones are answered at once with a header-only ENOMEM response echoing their tid.
  for (std::uint64_t tid = kCap; tid < kRequests; ++tid) {
    std::vector<std::uint8_t> response = acm.read_bytes(16);
    ASSERT_EQ(response.size(), 16u);
    EXPECT_EQ(response[1], acm::kOpAck | static_cast<std::uint8_t>(acm::Opcode::resolve));
    EXPECT_EQ(response[2], static_cast<std::uint8_t>(acm::Status::enomem));
    std::uint64_t echoed = 0;
    std::memcpy(&echoed, &response[8], sizeof(echoed));
    EXPECT_EQ(echoed, tid);
  }
  // Only the first kCap wait in the Resolver (the SA sees them sa_max_inflight at a time).
  EXPECT_EQ(on_loop([this] { return service_->resolver().stats().pending; }), kCap);

  // The native socket still answers (its misses would queue behind the ACM client's 256 in the
  // shared SA budget: a documented gap).
  Client native(config_.server.socket);
  native.request(Op::stats, 1);
  EXPECT_FALSE(native.body(1).empty());
}


// The status byte of the answer to the ACM RESOLVE `tid`, the next message on `c` (its path
// entries read and dropped); nullopt when none came.
std::optional<std::uint8_t> acm_resolve_status(Client& c, std::uint64_t tid) {
  std::vector<std::uint8_t> header = c.read_bytes(16);
  if (header.size() != 16) return std::nullopt;
  std::uint16_t length = 0;  // host order, as in every RESOLVE message
  std::memcpy(&length, &header[6], sizeof(length));
  if (length > 16 && c.read_bytes(length - 16u).size() != length - 16u) return std::nullopt;
  std::uint64_t echoed = 0;
  std::memcpy(&echoed, &header[8], sizeof(echoed));
  EXPECT_EQ(echoed, tid);
  return header[2];
}

constexpr auto kAcmSuccess = static_cast<std::uint8_t>(acm::Status::success);
constexpr auto kAcmEnomem = static_cast<std::uint8_t>(acm::Status::enomem);

// One uid's requests pending in the Resolver, counted over all its connections of both sockets,
// meet max_pending_per_uid: past it, every request of that uid (a cache hit too) is answered
// `overloaded` (ACM: ENOMEM) at once and asks the SA nothing, while another uid is still served on
// both sockets, its misses included.
TEST_F(Limits, PendingRequestsOfOneUidBeyondItsShareAreOverloadedWhileAnotherUidIsServed) {
  if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
  config_.server.max_pending_per_uid = 4;
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  config_.policy.sa_adaptive = false;  // see FloodingClientIsOverloadedWhileAnotherKeepsResolving
  start();
  Client root(config_.server.socket);  // the test's uid, 0
  warm(root, 1, gid(0xA), 10);
  const std::size_t queries_before = sa_.count();

  // Two connections of uid 0, two misses each: its whole share.
  Client first(config_.server.socket);
  Client second(config_.server.socket);
  first.resolve(1, gid(0x1001));
  first.resolve(2, gid(0x1002));
  second.resolve(1, gid(0x1003));
  second.resolve(2, gid(0x1004));
  sa_.wait_query(queries_before + 3);  // all four are in the Resolver
  EXPECT_EQ(server_counters().clients_pending, 4u);

  second.resolve(3, gid(0x1005));
  EXPECT_EQ(second.status_of(3), Status::overloaded);
  root.resolve(2, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(root.status_of(2), Status::overloaded);  // a hit too: refused before the cache is asked
  Client acm_root(config_.server.acm_socket);  // the other socket counts in the same share
  ASSERT_TRUE(acm_root.send(acm_resolve_by_dgid(7, gid(0x1006))));
  EXPECT_EQ(acm_resolve_status(acm_root, 7), kAcmEnomem);
  EXPECT_EQ(sa_.count(), queries_before + 4);  // the refused ones cost the SA nothing
  EXPECT_EQ(server_counters().pending_refused_per_uid, 3u);

  // Another uid is served on both sockets: a hit, and a miss that waits for the SA.
  Client nobody(connect_as(config_.server.socket, Identity{}));
  ASSERT_TRUE(nobody.connected());
  nobody.resolve(1, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(nobody.status_of(1), Status::ok);
  nobody.resolve(2, gid(0xB));
  answer(sa_.wait_query(queries_before + 4), 11);
  EXPECT_EQ(nobody.status_of(2), Status::ok);
  Client acm_nobody(connect_as(config_.server.acm_socket, Identity{}));
  ASSERT_TRUE(acm_nobody.connected());
  ASSERT_TRUE(acm_nobody.send(acm_resolve_by_dgid(8, gid(0xA))));
  EXPECT_EQ(acm_resolve_status(acm_nobody, 8), kAcmSuccess);
  EXPECT_EQ(server_counters().pending_refused_per_uid, 3u);

  // uid 0 is not punished beyond its share: an answer frees one.
  const core::PathQuery query = sa_.wait_query(queries_before);
  Client& asker = query.dgid->interface_id() <= 0x1002 ? first : second;
  answer(query, 20);
  auto answered = asker.next();
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->header.status, Status::ok);
  root.resolve(3, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(root.status_of(3), Status::ok);
  EXPECT_EQ(server_counters().clients_pending, 3u);

  // STATS names who asked what: uid 0 first (6 taken in, 3 refused, 3 pending, 4 connections),
  // then uid 65534 (3 taken in on both sockets, 2 connections).
  const nlohmann::json users =
      nlohmann::json::parse(on_loop([this] { return service_->stats_json(); }))["server"]["users"];
  ASSERT_EQ(users["top"].size(), 2u) << users.dump();
  EXPECT_EQ(users["top"][0], (nlohmann::json{{"uid", 0}, {"resolves", 6}, {"resolves_refused", 3}, {"pending", 3},
                                             {"connections", 4}, {"connections_refused", 0}}));
  EXPECT_EQ(users["top"][1], (nlohmann::json{{"uid", 65534}, {"resolves", 3}, {"resolves_refused", 0}, {"pending", 0},
                                             {"connections", 2}, {"connections_refused", 0}}));
  EXPECT_EQ(users["others"]["uids"], 0);
}

// Every share taken is given back once: on an SA answer, a CANCEL, and the close of a native and
// of an ACM connection with requests pending. The uid's count returns to 0 and it gets its whole
// share again (a share leaked would refuse the third request below, not the fourth).
TEST_F(Limits, AUidsPendingShareReturnsToZeroAfterAnswersCancelsAndCloses) {
  config_.server.max_pending_per_uid = 3;
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  config_.policy.sa_adaptive = false;  // see FloodingClientIsOverloadedWhileAnotherKeepsResolving
  start();
  Client c(config_.server.socket);
  c.resolve(1, gid(0x1001));
  c.resolve(2, gid(0x1002));
  const core::PathQuery query = sa_.wait_query(1);
  EXPECT_EQ(server_counters().clients_pending, 2u);

  answer(query, 20);  // an answer
  auto answered = c.next();
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->header.status, Status::ok);
  EXPECT_EQ(server_counters().clients_pending, 1u);
  const std::uint32_t waiting = answered->header.id == 1 ? 2 : 1;
  std::vector<std::uint8_t> cancel;
  protocol::append_cancel(cancel, 9, protocol::CancelRequest{waiting});  // a CANCEL
  ASSERT_TRUE(c.send(cancel));
  EXPECT_EQ(c.status_of(waiting), Status::cancelled);
  EXPECT_EQ(c.status_of(9), Status::ok);
  EXPECT_EQ(server_counters().clients_pending, 0u);

  c.resolve(3, gid(0x1003));  // closes, native and ACM, with requests pending
  c.resolve(4, gid(0x1004));
  Client acm(config_.server.acm_socket);
  ASSERT_TRUE(acm.send(acm_resolve_by_dgid(1, gid(0x2001))));
  sa_.wait_query(4);
  EXPECT_EQ(server_counters().clients_pending, 3u);
  c.close();
  acm.close();
  ASSERT_EQ(wait_gauge(0, &ServerStats::clients_pending), 0u);
  EXPECT_EQ(on_loop([this] { return service_->resolver().stats().pending; }), 0u);

  Client again(config_.server.socket);
  for (std::uint32_t id = 1; id <= 4; ++id) again.resolve(id, gid(0x3000 + id));
  EXPECT_EQ(again.status_of(4), Status::overloaded);  // the first three wait: the fourth's is the first reply
  EXPECT_EQ(server_counters().clients_pending, 3u);
  EXPECT_EQ(server_counters().pending_refused_per_uid, 1u);
}

// A share lowered by SIGHUP applies to the next request; those already pending stay.
TEST_F(Limits, ALowerPendingShareOnReloadAppliesToTheNextRequest) {
  config_.server.max_pending_per_uid = 4;
  config_.policy.sa_adaptive = false;  // see FloodingClientIsOverloadedWhileAnotherKeepsResolving
  start();
  Client c(config_.server.socket);
  c.resolve(1, gid(0x1001));
  c.resolve(2, gid(0x1002));
  sa_.wait_query(1);
  DaemonConfig next = config_;
  next.server.max_pending_per_uid = 2;
  on_loop([&] { service_->reload(next); });
  c.resolve(3, gid(0x1003));
  EXPECT_EQ(c.status_of(3), Status::overloaded);
  EXPECT_EQ(server_counters().clients_pending, 2u);
}

// The bytes the process's heap holds now: the sanitizer's count when there is one (its RSS also
// holds the quarantine of freed memory), else malloc's.
extern "C" std::size_t __sanitizer_get_current_allocated_bytes() __attribute__((weak));
std::size_t live_heap_bytes() {
  if (__sanitizer_get_current_allocated_bytes != nullptr) return __sanitizer_get_current_allocated_bytes();
  const struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Waits until `fd` has something to read or its peer closed it, without reading: the daemon has
// handled what was sent before (its reply came) or cut the connection.
bool answered_or_closed(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 10'000) == 1;
}

// 2,000 connections of one uid that never read: max_connections_per_uid lets 512 in, and 40 of
// those ask for 4 MiB of replies each (40,000 cache hits), 160 MiB in all. The daemon's reply
// ceiling (8 MiB here) cuts the connection holding the most each time it is passed, so the heap
// grows by less than the ceiling plus each connection's own buffers; another user is served.
TEST_F(Limits, TwoThousandNonReadingConnectionsOfOneUidStayUnderTheCeilingAndAnotherUserIsServed) {
  if (!can_switch_user()) GTEST_SKIP() << "needs root to switch uid";
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = std::max<rlim_t>(files.rlim_cur, std::min<rlim_t>(files.rlim_max, 8192));
  ::setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < 3000) GTEST_SKIP() << "needs 3,000 file descriptors";
  config_.server.max_queued_bytes_total = 8u << 20;
  start();
  Client root(config_.server.socket);
  warm(root, 1, gid(0xA), 10);

  std::vector<std::uint8_t> hits;  // 40,000 cache hits: about 4 MiB of replies
  for (std::uint32_t id = 0; id < 40'000; ++id) {
    core::ResolveRequest r;
    r.target = gid(0xA);
    r.cache_only = true;
    protocol::append_resolve_request(hits, id, r);
  }
  const std::size_t heap_before = live_heap_bytes();
  std::size_t heap_peak = heap_before;
  std::vector<std::unique_ptr<Client>> hogs;
  std::vector<std::uint8_t> stats;
  protocol::append_empty_request(stats, 1, Op::stats);
  for (int n = 0; n < 2000; ++n) {
    auto hog = std::make_unique<Client>(config_.server.socket);
    ASSERT_TRUE(hog->connected()) << n;
    // Blocks until the daemon has read it all; fails once it cut or refused the connection.
    hog->send(n < 40 ? hits : stats);
    ASSERT_TRUE(answered_or_closed(hog->fd())) << n;
    heap_peak = std::max(heap_peak, live_heap_bytes());
    hogs.push_back(std::move(hog));
  }

  const ServerStats s = server_counters();
  EXPECT_GT(s.cut_over_ceiling, 0u);
  // Root's own connection counts as its uid's; each connection cut freed a place.
  EXPECT_EQ(s.connections_refused_per_uid, 2000u + 1u - 512u - s.cut_over_ceiling);
  // The ceiling, plus 128 KiB for each connection's 64 KiB read buffer, socket and bookkeeping.
  EXPECT_LT(heap_peak - heap_before, (8u << 20) + 512u * (128u << 10)) << "bytes of heap growth";
  Client nobody(connect_as(config_.server.socket, Identity{}));
  ASSERT_TRUE(nobody.connected());
  nobody.resolve(1, gid(0xA), /*cache_only=*/true);
  EXPECT_EQ(nobody.status_of(1), Status::ok);
}

}  // namespace
}  // namespace ibat::server::security_test

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Attacks a hostile local user tried that ibatd withstood (docs/security.md §10), pinned so they
// stay withstood: every bad frame length closes with one malformed ERROR, byte-by-byte writes
// parse, a deep pipeline of misses is refused past the per-connection cap, hostile ACM messages
// get well-formed answers, an ACM client that never reads is cut off, a request from a source GID
// that is not the port's costs nothing, and a snapshot path that links to a secret file is
// refused without the secret showing up anywhere.
#include <fcntl.h>

#include <fstream>

#include "security_harness.h"
#include "server/acm/acm_constants.h"
#include "server/daemon/snapshot.h"

namespace ibat::server::security_test {
namespace {

using protocol::Op;
using protocol::Status;

class Held : public DaemonTest {};

TEST_F(Held, EveryOutOfRangeFrameLengthGetsOneMalformedErrorThenClose) {
  start();
  for (std::uint32_t length : {0u, 1u, 7u, 0xFFFFFFFFu}) {
    Client c(config_.server.socket);
    std::vector<std::uint8_t> frame = {static_cast<std::uint8_t>(length >> 24), static_cast<std::uint8_t>(length >> 16),
                                       static_cast<std::uint8_t>(length >> 8), static_cast<std::uint8_t>(length),
                                       1, static_cast<std::uint8_t>(Op::stats), 0, 0, 0, 0, 0, 9};
    ASSERT_TRUE(c.send(frame));
    auto error = c.next();
    ASSERT_TRUE(error) << length;
    EXPECT_EQ(error->header.op, 0xFF) << length;
    EXPECT_EQ(error->header.status, Status::malformed) << length;
    EXPECT_FALSE(error->text().empty()) << length;
    EXPECT_TRUE(c.closed_by_peer()) << length;  // and nothing else came before the close
  }
  EXPECT_EQ(server_counters().protocol_errors, 4u);
}

TEST_F(Held, RequestsWrittenOneByteAtATimeAreParsed) {
  start();
  Client c(config_.server.socket);
  std::vector<std::uint8_t> bytes;
  core::ResolveRequest r;
  r.target = gid(0xA);
  r.cache_only = true;
  protocol::append_resolve_request(bytes, 1, r);
  protocol::append_empty_request(bytes, 2, Op::stats);
  for (std::uint8_t b : bytes) ASSERT_TRUE(c.send({b}));
  EXPECT_EQ(c.status_of(1), Status::no_record);
  EXPECT_FALSE(c.body(2).empty());
}

TEST_F(Held, DeepPipelineOfMissesIsOverloadedPastTheCapAndCostsTheSaNothingMore) {
  start();  // the default cap: 1024 unanswered requests per connection
  const std::uint32_t cap = config_.server.max_outstanding_per_connection;
  Client c(config_.server.socket);
  std::vector<std::uint8_t> flood;
  for (std::uint32_t id = 1; id <= 5000; ++id) {
    core::ResolveRequest r;
    r.target = gid(0x10000 + id);
    protocol::append_resolve_request(flood, id, r);
  }
  ASSERT_TRUE(c.send(flood));
  for (std::uint32_t id = cap + 1; id <= 5000; ++id) ASSERT_EQ(c.status_of(id), Status::overloaded) << id;
  EXPECT_EQ(on_loop([this] { return service_->resolver().stats().pending; }), cap);
}

TEST_F(Held, SourceGidThatIsNotThePortsIsInvalidAndAsksNothing) {
  start();
  Client c(config_.server.socket);
  std::vector<std::uint8_t> out;
  for (std::uint32_t id = 1; id <= 1000; ++id) {
    core::ResolveRequest r;
    r.target = id % 2 ? core::Target{core::Lid{static_cast<std::uint16_t>(id)}} : core::Target{gid(0x20000 + id)};
    r.sgid = core::Gid::from_parts(0xfe80000000000000ULL, 0xBAD0000 + id);  // another host's GID
    protocol::append_resolve_request(out, id, r);
  }
  ASSERT_TRUE(c.send(out));
  for (std::uint32_t id = 1; id <= 1000; ++id) ASSERT_EQ(c.status_of(id), Status::invalid) << id;
  EXPECT_EQ(sa_.count(), 0u);
  core::Resolver::TableSizes sizes = on_loop([this] { return service_->resolver().table_sizes(); });
  EXPECT_EQ(sizes.pending + sizes.jobs + sizes.lid_failures, 0u);
}

TEST_F(Held, AcmClientThatNeverReadsIsCutOff) {
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  start();
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", config_.server.acm_socket.c_str());
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  // A RESOLVE without entries: answered at once (EDESTTYPE), 16 bytes each way.
  std::vector<std::uint8_t> batch;
  for (int i = 0; i < 4096; ++i) {
    const std::uint8_t request[16] = {1, 1, 0, 0, 0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, static_cast<std::uint8_t>(i)};
    batch.insert(batch.end(), std::begin(request), std::end(request));
  }
  constexpr std::size_t kMaxBytes = 64u << 20;  // far beyond the 1 MiB cut-off plus socket buffers
  std::size_t sent = 0;
  bool cut = false;
  while (sent < kMaxBytes && !cut) {
    ssize_t n = ::send(fd, batch.data(), batch.size(), MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      ASSERT_GT(::poll(&p, 1, 5000), 0) << "ibatd neither reads nor closes after " << sent << " bytes";
      cut = (p.revents & (POLLERR | POLLHUP)) != 0;
    } else {
      cut = true;  // EPIPE / ECONNRESET: the daemon closed the connection
    }
  }
  ::close(fd);
  EXPECT_TRUE(cut) << sent << " bytes sent and never cut off";
  Client native(config_.server.socket);  // the daemon still serves
  native.request(Op::stats, 1);
  EXPECT_FALSE(native.body(1).empty());
}

// 50 ACM messages with correct framing and hostile contents (entry counts, flags, types, partial
// entries, endpoint indices, random bytes): each gets one well-formed response echoing its tid on
// the same connection, and the daemon keeps serving.
TEST_F(Held, HostileAcmEncodingsAreAnsweredWellFormed) {
  config_.server.acm_socket = (dir_ / "acm.sock").string();
  config_.policy.request_timeout = 200ms;  // an IP nobody knows is answered once it runs out
  start();
  std::uint64_t seed = 0x9E3779B97F4A7C15ULL;
  auto next_random = [&seed] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(seed >> 33);
  };
  std::size_t answered_queries = sa_.count();
  Client acm(config_.server.acm_socket);
  for (std::uint64_t tid = 1; tid <= 50; ++tid) {
    const std::uint8_t opcode = static_cast<std::uint8_t>(1 + tid % 3);
    const std::size_t entries = next_random() % 9;
    std::size_t length = 16 + entries * 72;
    if (tid % 7 == 0 && length > 16) length -= 2;  // a partial entry
    std::vector<std::uint8_t> m(length);
    for (auto& b : m) b = static_cast<std::uint8_t>(next_random());
    m[0] = 1;
    m[1] = opcode;
    if (opcode == 1) {
      const auto length16 = static_cast<std::uint16_t>(length);
      std::memcpy(&m[6], &length16, 2);  // RESOLVE: host order
    } else {
      m[6] = static_cast<std::uint8_t>(length >> 8);
      m[7] = static_cast<std::uint8_t>(length);
    }
    std::memcpy(&m[8], &tid, 8);
    for (std::size_t e = 0; e + 72 <= length - 16; e += 72) {  // flags and types near the valid ones
      const std::uint32_t flags[] = {0, acm::kEpFlagSource, acm::kEpFlagDest, 3, next_random()};
      const std::uint16_t types[] = {1, 2, 3, 0x10, static_cast<std::uint16_t>(next_random())};
      std::memcpy(&m[16 + e], &flags[next_random() % 5], 4);
      std::memcpy(&m[20 + e], &types[next_random() % 5], 2);
    }
    ASSERT_TRUE(acm.send(m)) << tid;
    std::vector<std::uint8_t> header;
    for (int wait = 0; wait < 50 && header.empty(); ++wait) {
      header = acm.read_bytes(16, 100ms);
      // A request the fake SA would have to answer: it answers `no record` at once.
      while (sa_.count() > answered_queries) {
        core::PathQuery q = sa_.wait_query(answered_queries++);
        on_loop([&] { service_->port(0).on_query_result(q.id, core::QueryResult{core::Error::no_record, {}}); });
      }
    }
    if (header.size() < 16) {
      std::vector<std::uint8_t> rest = acm.read_bytes(16 - header.size());
      header.insert(header.end(), rest.begin(), rest.end());
    }
    ASSERT_EQ(header.size(), 16u) << "no answer to message " << tid;
    EXPECT_EQ(header[0], 1) << tid;
    EXPECT_EQ(header[1], opcode | acm::kOpAck) << tid;
    std::uint64_t echoed = 0;
    std::memcpy(&echoed, &header[8], 8);
    EXPECT_EQ(echoed, tid);
    std::uint16_t reply_length = 0;
    if (opcode == 1) std::memcpy(&reply_length, &header[6], 2);
    else reply_length = static_cast<std::uint16_t>(header[6] << 8 | header[7]);
    ASSERT_GE(reply_length, 16) << tid;
    ASSERT_LE(reply_length, acm::kMaxMessageLength) << tid;
    EXPECT_EQ(acm.read_bytes(reply_length - 16u).size(), reply_length - 16u) << tid;
  }

  Client native(config_.server.socket);  // the daemon still serves
  native.request(Op::stats, 1);
  EXPECT_FALSE(native.body(1).empty());
}

TEST_F(Held, SnapshotLinkedToASecretFileIsRefusedWithoutShowingIt) {
  const std::string secret = (dir_ / "shadow").string();
  std::ofstream(secret) << "root:$6$SECRETHASHSECRETHASH:19000:0:99999:7:::\n";
  const std::filesystem::path cache = dir_ / "ibatd.cache";
  std::filesystem::create_symlink(secret, cache);
  SnapshotContents loaded = load_snapshot_file(cache.string(), std::chrono::system_clock::now(), 1000);
  EXPECT_FALSE(loaded.ok());
  EXPECT_TRUE(loaded.entries.empty());
  EXPECT_EQ(loaded.error.find("SECRETHASH"), std::string::npos) << loaded.error;
  EXPECT_EQ(loaded.error.find("root:"), std::string::npos) << loaded.error;
}

}  // namespace
}  // namespace ibat::server::security_test

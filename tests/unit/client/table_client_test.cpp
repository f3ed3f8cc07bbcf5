// libibat and the shared path table: a GID resolve that hits a valid entry is answered from the
// table without a request to the daemon, with the same path the socket would give; misses,
// FORCE_SA, and tables that are foreign (writable by others) or corrupt go to the socket.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "client/convert.h"
#include "client/table_client.h"
#include "fake_server.h"
#include "ibat.h"
#include "mad/path_record.h"
#include "protocol/messages.h"
#include "shm/table_file.h"

namespace ibat::test {
namespace {

namespace protocol = ibat::protocol;
using namespace std::chrono_literals;

const core::Gid kLocal = core::Gid::from_parts(0xfe80000000000000ull, 0x0002c903000a0001ull);

core::PathRecord path_to(std::uint16_t lid) {
  core::PathRecord p;
  p.dgid = core::Gid::from_parts(0xfe80000000000000ull, 0x0002c903000b0000ull | lid);
  p.sgid = kLocal;
  p.dlid = core::Lid{lid};
  p.slid = core::Lid{1};
  p.sl = 2;
  p.mtu = 4;
  p.rate = 16;
  p.pkt_life = 18;
  p.hop_limit = 1;
  p.flow_label = 77;
  return p;
}

ibat_target gid_target(const core::Gid& gid) {
  ibat_target t{};
  t.type = IBAT_TARGET_GID;
  std::memcpy(t.u.gid.raw, gid.raw.data(), 16);
  return t;
}

// Answers every RESOLVE no_record, so a request that reached the daemon is visible in the result.
void answer_no_record(FakeServer& server, const ReceivedFrame& f) {
  if (f.header.op != static_cast<std::uint8_t>(protocol::Op::resolve)) return;
  std::vector<std::uint8_t> out;
  protocol::append_resolve_reply(out, f.header.id, core::ResolveResult{core::Error::no_record, {}, {}, {}});
  server.reply(out);
}

struct SharedTable : ::testing::Test {
  FakeServer server{answer_no_record};
  std::unique_ptr<shm::TableFile> table;
  ibat_t* h = nullptr;

  void SetUp() override {
    std::string error;
    table = shm::TableFile::create(shm::table_path_for_socket(server.path()), 64, error);
    ASSERT_TRUE(table) << error;
    table->writer().set_defaults(kLocal, core::Pkey{0xFFFF});
    ASSERT_TRUE(table->writer().publish(shm::TableKey::of(kLocal, path_to(5).dgid, core::Pkey{0xFFFF}), path_to(5),
                                        monotonic_ms_now() - 2000));
  }
  void TearDown() override {
    if (h) ibat_close(h);
  }
  void open() { ASSERT_EQ(ibat_open(server.path().c_str(), &h), IBAT_OK); }
  static std::uint64_t monotonic_ms_now() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }
};

TEST_F(SharedTable, HitIsAnsweredFromTheTableAsTheSocketWould) {
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_path got{};
  ASSERT_EQ(ibat_resolve_sync(h, &t, nullptr, &got), IBAT_OK);

  ibat_path expected = client::to_c_path(core::ResolveResult{core::Error::ok, path_to(5), core::EntryState::valid, 0ms});
  auto record = mad::encode_path_record(path_to(5));
  std::memcpy(expected.record, record.data(), sizeof expected.record);
  // Produced 2 s ago; libibat reads the coarse clock, which may lag by a few ms.
  EXPECT_GE(got.age_ms, 1900u);
  EXPECT_LT(got.age_ms, 60'000u);
  expected.age_ms = got.age_ms;
  EXPECT_EQ(std::memcmp(&got, &expected, sizeof got), 0);

  // The daemon saw no resolve: what it gets next is the hit report, then the miss below.
  ibat_target miss = gid_target(path_to(6).dgid);
  EXPECT_EQ(ibat_resolve_sync(h, &miss, nullptr, &got), IBAT_ENORECORD);
  auto frames = server.wait_for_requests(2);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].header.op, static_cast<std::uint8_t>(protocol::Op::table_hits));
  auto req = protocol::decode_resolve_request(frames[1].payload);
  ASSERT_TRUE(req);
  EXPECT_EQ(std::get<core::Gid>(req.value().target), path_to(6).dgid);
}

TEST_F(SharedTable, HitsAreReportedInBatchesWithTheirDistinctSlots) {
  ASSERT_TRUE(table->writer().publish(shm::TableKey::of(kLocal, path_to(7).dgid, core::Pkey{0xFFFF}), path_to(7), 1));
  open();
  ibat_target five = gid_target(path_to(5).dgid), seven = gid_target(path_to(7).dgid);
  ibat_path got{};
  for (int i = 0; i < 5; ++i) ASSERT_EQ(ibat_resolve_sync(h, i % 2 ? &seven : &five, nullptr, &got), IBAT_OK);
  ibat_close(h);  // sends what is counted
  h = nullptr;
  auto frames = server.wait_for_requests(1);
  ASSERT_EQ(frames.size(), 1u);
  auto report = protocol::decode_table_hits(frames[0].payload);
  ASSERT_TRUE(report) << report.error();
  EXPECT_EQ(report.value().hits, 5u);
  EXPECT_EQ(report.value().generation, table->writer().generation());
  ASSERT_EQ(report.value().slots.size(), 2u);
  EXPECT_EQ(table->writer().key_at(report.value().slots[0], report.value().generation),
            shm::TableKey::of(kLocal, path_to(5).dgid, core::Pkey{0xFFFF}));
  EXPECT_EQ(table->writer().key_at(report.value().slots[1], report.value().generation),
            shm::TableKey::of(kLocal, path_to(7).dgid, core::Pkey{0xFFFF}));
}

TEST_F(SharedTable, AReportGoesOutEveryBatchWithoutAnySocketRequest) {
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_path got{};
  for (std::uint64_t i = 0; i < client::TableClient::kReportEvery; ++i) ASSERT_EQ(ibat_resolve_sync(h, &t, nullptr, &got), IBAT_OK);
  auto frames = server.wait_for_requests(1);
  ASSERT_EQ(frames.size(), 1u);
  auto report = protocol::decode_table_hits(frames[0].payload);
  ASSERT_TRUE(report);
  EXPECT_EQ(report.value().hits, client::TableClient::kReportEvery);
}

TEST_F(SharedTable, ExplicitSgidAndPkeyAreTheKey) {
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_resolve_opts opts{};
  opts.flags = IBAT_RESOLVE_SGID | IBAT_RESOLVE_PKEY | IBAT_RESOLVE_CACHE_ONLY;
  std::memcpy(opts.sgid.raw, kLocal.raw.data(), 16);
  opts.pkey = 0xFFFF;
  ibat_path got{};
  EXPECT_EQ(ibat_resolve_sync(h, &t, &opts, &got), IBAT_OK);
  EXPECT_EQ(got.dlid, 5);
  opts.pkey = 0x8001;  // another partition: not in the table
  EXPECT_EQ(ibat_resolve_sync(h, &t, &opts, &got), IBAT_ENORECORD);
}

TEST_F(SharedTable, ForceSaGoesToTheDaemon) {
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_resolve_opts opts{};
  opts.flags = IBAT_RESOLVE_FORCE_SA;
  ibat_path got{};
  EXPECT_EQ(ibat_resolve_sync(h, &t, &opts, &got), IBAT_ENORECORD);
}

TEST_F(SharedTable, AsyncHitCompletesAtOnceWithItsOwnId) {
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  struct Seen {
    int calls = 0;
    std::uint32_t id = 0;
    int status = -1;
    std::uint16_t dlid = 0;
  } seen;
  std::uint32_t id = 0;
  ASSERT_EQ(ibat_resolve_async(
                h, &t, nullptr,
                [](void* user, std::uint32_t rid, int status, const ibat_path* p) {
                  auto* s = static_cast<Seen*>(user);
                  ++s->calls;
                  s->id = rid;
                  s->status = status;
                  s->dlid = p ? p->dlid : 0;
                },
                &seen, &id),
            IBAT_OK);
  EXPECT_EQ(seen.calls, 1);
  EXPECT_EQ(seen.status, IBAT_OK);
  EXPECT_EQ(seen.dlid, 5);
  EXPECT_NE(seen.id, 0u);
  EXPECT_EQ(ibat_pending(h), 0u);
}

TEST_F(SharedTable, TableWritableByOthersIsNotUsed) {
  ASSERT_EQ(::chmod(shm::table_path_for_socket(server.path()).c_str(), 0666), 0);
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_path got{};
  EXPECT_EQ(ibat_resolve_sync(h, &t, nullptr, &got), IBAT_ENORECORD);
}

TEST_F(SharedTable, CorruptTableIsNotUsed) {
  {
    FILE* f = std::fopen(shm::table_path_for_socket(server.path()).c_str(), "r+");
    ASSERT_TRUE(f);
    std::fputs("garbage!", f);  // over the magic
    std::fclose(f);
  }
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_path got{};
  EXPECT_EQ(ibat_resolve_sync(h, &t, nullptr, &got), IBAT_ENORECORD);
}

TEST_F(SharedTable, ClearedTableAnswersNothing) {
  open();
  table->writer().clear();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_path got{};
  EXPECT_EQ(ibat_resolve_sync(h, &t, nullptr, &got), IBAT_ENORECORD);
}

TEST_F(SharedTable, NewDefaultsAreUsedAsSoonAsTheDaemonPublishesThem) {
  open();
  ibat_target t = gid_target(path_to(5).dgid);
  ibat_path got{};
  ASSERT_EQ(ibat_resolve_sync(h, &t, nullptr, &got), IBAT_OK);  // the handle now holds the defaults
  const core::Gid other = core::Gid::from_parts(0xfe80000000000000ull, 0x0002c903000a0002ull);
  table->writer().set_defaults(other, core::Pkey{0xFFFF});
  core::PathRecord p = path_to(5);
  p.dlid = core::Lid{6};
  ASSERT_TRUE(table->writer().publish(shm::TableKey::of(other, p.dgid, core::Pkey{0xFFFF}), p, 1));
  ASSERT_EQ(ibat_resolve_sync(h, &t, nullptr, &got), IBAT_OK);
  EXPECT_EQ(got.dlid, 6);
  EXPECT_EQ(std::memcmp(got.sgid.raw, other.raw.data(), 16), 0);
}

TEST_F(SharedTable, AMissLeavesThePathUntouched) {
  open();
  ibat_target miss = gid_target(path_to(6).dgid);
  ibat_path got;
  std::memset(&got, 0xAB, sizeof got);
  ASSERT_EQ(ibat_resolve_sync(h, &miss, nullptr, &got), IBAT_ENORECORD);
  const auto* bytes = reinterpret_cast<const unsigned char*>(&got);
  EXPECT_TRUE(std::all_of(bytes, bytes + sizeof got, [](unsigned char b) { return b == 0xAB; }));
}

}  // namespace
}  // namespace ibat::test

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// libibat and the shared path table: a GID resolve that hits a valid entry is answered from the
// table without a request to the daemon, with the same path the socket would give; misses,
// FORCE_SA, and tables that are foreign (writable by others) or corrupt go to the socket.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
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
    table = shm::TableFile::create(shm::table_path_for_socket(server.path()), 64, 1024, error);
    ASSERT_TRUE(table) << error;
    table->writer().set_defaults(kLocal, core::Pkey{0xFFFF});
    ASSERT_TRUE(table->writer().publish(shm::TableKey::of(kLocal, path_to(5).dgid, core::Pkey{0xFFFF}), path_to(5),
                                        monotonic_ms_now() - 2000));
  }
  void TearDown() override {
    if (h) ibat_close(h);
  }
  void open() { ASSERT_EQ(ibat_open(server.path().c_str(), &h), IBAT_OK); }
  // Closes the handle, which sends the hits counted so far, and returns that report.
  protocol::TableHits report_on_close() {
    ibat_close(h);
    h = nullptr;
    auto frames = server.wait_for_requests(1);
    EXPECT_EQ(frames.size(), 1u);
    if (frames.empty()) return {};
    auto report = protocol::decode_table_hits(frames[0].payload);
    EXPECT_TRUE(report) << report.error();
    return report ? report.value() : protocol::TableHits{};
  }
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
  const protocol::TableHits report = report_on_close();
  EXPECT_EQ(report.hits, 5u);
  EXPECT_EQ(report.generation, table->writer().generation());
  ASSERT_EQ(report.slots.size(), 2u);
  EXPECT_EQ(table->writer().key_at(report.slots[0], report.generation),
            shm::TableKey::of(kLocal, path_to(5).dgid, core::Pkey{0xFFFF}));
  EXPECT_EQ(table->writer().key_at(report.slots[1], report.generation),
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

// The daemon grows the table (a larger file renamed over the path, the old one marked moved and
// emptied): the handle maps the new one at its next resolve and hits there, and its hit report
// names the new table's slots.
TEST_F(SharedTable, AHandleFollowsTheTableWhenTheDaemonGrowsIt) {
  open();
  ibat_target five = gid_target(path_to(5).dgid), seven = gid_target(path_to(7).dgid);
  ibat_path got{};
  ASSERT_EQ(ibat_resolve_sync(h, &five, nullptr, &got), IBAT_OK);
  std::string error;
  ASSERT_TRUE(table->grow(error)) << error;
  ASSERT_TRUE(table->grow(error)) << error;
  EXPECT_EQ(table->writer().slot_count(), 256u);
  ASSERT_TRUE(table->writer().publish(shm::TableKey::of(kLocal, path_to(7).dgid, core::Pkey{0xFFFF}), path_to(7), 1));
  ASSERT_EQ(ibat_resolve_sync(h, &five, nullptr, &got), IBAT_OK);
  EXPECT_EQ(got.dlid, 5);
  ASSERT_EQ(ibat_resolve_sync(h, &seven, nullptr, &got), IBAT_OK);
  EXPECT_EQ(got.dlid, 7);
  const protocol::TableHits report = report_on_close();
  EXPECT_EQ(report.hits, 3u);
  EXPECT_EQ(report.generation, table->writer().generation());
  ASSERT_EQ(report.slots.size(), 2u);
  EXPECT_EQ(table->writer().key_at(report.slots[0], report.generation),
            shm::TableKey::of(kLocal, path_to(5).dgid, core::Pkey{0xFFFF}));
}

// A grown table the handle may not trust (writable by others) is not followed: the old one, now
// empty, answers nothing and the socket answers.
TEST_F(SharedTable, AGrownTableThatIsNotTrustedIsNotFollowed) {
  open();
  ibat_target five = gid_target(path_to(5).dgid);
  ibat_path got{};
  ASSERT_EQ(ibat_resolve_sync(h, &five, nullptr, &got), IBAT_OK);
  std::string error;
  ASSERT_TRUE(table->grow(error)) << error;
  ASSERT_EQ(::chmod(shm::table_path_for_socket(server.path()).c_str(), 0666), 0);
  EXPECT_EQ(ibat_resolve_sync(h, &five, nullptr, &got), IBAT_ENORECORD);
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

// ibat_resolve_table: the hits of a batch are what ibat_resolve_sync answers one by one; the rest
// (a miss, a non-GID target) are flagged and left untouched, and nothing reaches the socket.
TEST_F(SharedTable, ABatchAnswersItsHitsAsSingleResolvesDoAndFlagsTheRest) {
  ASSERT_TRUE(table->writer().publish(shm::TableKey::of(kLocal, path_to(7).dgid, core::Pkey{0xFFFF}), path_to(7),
                                      monotonic_ms_now() - 2000));
  open();
  ibat_target lid{};
  lid.type = IBAT_TARGET_LID;
  lid.u.lid = 5;
  const ibat_target targets[] = {gid_target(path_to(5).dgid), gid_target(path_to(6).dgid), lid,
                                 gid_target(path_to(7).dgid)};
  ibat_path got[4];
  std::memset(got, 0xAB, sizeof got);
  unsigned char hit[4] = {9, 9, 9, 9};
  EXPECT_EQ(ibat_resolve_table(h, targets, 4, nullptr, got, hit), 2u);
  EXPECT_EQ(hit[0], 1);
  EXPECT_EQ(hit[1], 0);
  EXPECT_EQ(hit[2], 0);
  EXPECT_EQ(hit[3], 1);
  for (int i : {1, 2}) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&got[i]);
    EXPECT_TRUE(std::all_of(bytes, bytes + sizeof got[i], [](unsigned char b) { return b == 0xAB; })) << i;
  }
  for (int i : {0, 3}) {
    ibat_path single{};
    ASSERT_EQ(ibat_resolve_sync(h, &targets[i], nullptr, &single), IBAT_OK);
    EXPECT_GE(got[i].age_ms, 1900u) << i;  // one clock read for the batch, as of the call
    single.age_ms = got[i].age_ms;          // the coarse clock may have ticked between the calls
    EXPECT_EQ(std::memcmp(&got[i], &single, sizeof single), 0) << i;
  }
  EXPECT_EQ(report_on_close().hits, 4u);  // the batch's 2 hits and the 2 single ones
}

TEST_F(SharedTable, ABatchWithoutATableOrWithForceSaHitsNothing) {
  ::setenv("IBAT_SHARED_TABLE", "0", 1);
  open();
  ::unsetenv("IBAT_SHARED_TABLE");
  const ibat_target t = gid_target(path_to(5).dgid);
  ibat_path got{};
  unsigned char hit = 9;
  EXPECT_EQ(ibat_resolve_table(h, &t, 1, nullptr, &got, &hit), 0u);
  EXPECT_EQ(hit, 0);
  ibat_close(h);
  h = nullptr;
  open();
  ibat_resolve_opts opts{};
  opts.flags = IBAT_RESOLVE_FORCE_SA;
  hit = 9;
  EXPECT_EQ(ibat_resolve_table(h, &t, 1, &opts, &got, &hit), 0u);
  EXPECT_EQ(hit, 0);
  EXPECT_EQ(ibat_resolve_table(h, &t, 1, nullptr, &got, &hit), 1u);  // the same handle, without FORCE_SA
  EXPECT_EQ(hit, 1);
  EXPECT_EQ(ibat_resolve_table(nullptr, &t, 1, nullptr, &got, &hit), 0u);
  EXPECT_EQ(hit, 0);
}

}  // namespace
}  // namespace ibat::test

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaClient's PathRecord GetTable against a fake transport: the two requests (PathRecord by SGID,
// switches' NodeRecords), records checked and cut to one per DGID without switch port 0, the
// answers joined in either order, the fall-back to GETs (refused, silent, unreadable, too long,
// no RMPP) reported once per SM, late answers after a GET or table failed, and the table counters;
// the SwitchInfoRecord GetTable that sizes the subnet.
#include <gtest/gtest.h>

#include <asio/io_context.hpp>

#include "fabric/sa_client.h"
#include "fake_sender.h"
#include "mad/node_record.h"
#include "mad/path_record.h"
#include "mad/sa_table.h"
#include "mad/switch_info_record.h"

namespace ibat::fabric {
namespace {

using namespace std::chrono_literals;
using test::FakeSender;
using test::table_answer;
using Records = std::vector<std::vector<std::uint8_t>>;

constexpr core::Lid kSmLid{1};
constexpr core::Pkey kPkey{0xFFFF};

core::Gid gid(std::uint64_t guid) { return core::Gid::from_parts(0xfe80000000000000ULL, guid); }

const core::Gid kSelf = gid(0x10);

core::PathRecord path_to(std::uint64_t guid, std::uint16_t dlid) {
  core::PathRecord p;
  p.sgid = kSelf;
  p.dgid = gid(guid);
  p.slid = core::Lid{10};
  p.dlid = core::Lid{dlid};
  p.pkey = kPkey;
  p.reversible = true;
  p.mtu = 4;
  p.rate = 3;
  p.sl = 1;
  return p;
}

std::vector<std::uint8_t> bytes_of(const core::PathRecord& p) {
  const auto r = mad::encode_path_record(p);
  return {r.begin(), r.end()};
}

std::vector<std::uint8_t> switch_record(std::uint16_t lid, std::uint64_t guid) {
  mad::NodeRecord n;
  n.lid = core::Lid{lid};
  n.node_type = mad::node_type::kSwitch;
  n.node_guid = guid;
  n.port_guid = guid;
  const auto r = mad::encode_node_record(n);
  return {r.begin(), r.end()};
}

class SaClientTableTest : public ::testing::Test {
 public:  // the cases of UnreadableOrForeignTablesAreRefused build answers through it
  SaClientTableTest() {
    sa.set_sm(kSmLid, 0);
    sa.on_tables_off([this](const std::string& reason) { offs.push_back(reason); });
  }

  bool start() {
    return sa.query_path_table(kSelf, kPkey, [this](const PathTable& t) { tables.push_back(t); });
  }
  // The two requests of the last query_path_table: NodeRecord first, then PathRecord.
  const OutgoingMad& node_request() const { return sender.sent.at(sender.sent.size() - 2); }
  const OutgoingMad& path_request() const { return sender.sent.back(); }

  ReceivedMad paths_answer(const std::vector<core::PathRecord>& paths, std::uint16_t status = 0) {
    Records records;
    for (const auto& p : paths) records.push_back(bytes_of(p));
    return table_answer(path_request(), mad::attr::kPathRecord, records, 64, kSmLid, status);
  }
  ReceivedMad switches_answer(const Records& switches, std::uint16_t status = 0) {
    return table_answer(node_request(), mad::attr::kNodeRecord, switches, 112, kSmLid, status);
  }
  // The verdict on a table lost while nothing else of the SA answered (a late answer to a request
  // already failed is no answer): the SA silent, down or sweeping, so tables stay on.
  void expect_judged_silent(const PathTable& table) const {
    EXPECT_EQ(table.error, core::Error::timeout);
    EXPECT_EQ(table.reason,
              "the SA did not answer the PathRecord GetTable (2 attempts), nor anything else meanwhile: down or sweeping");
    EXPECT_TRUE(sa.tables_usable());
    EXPECT_TRUE(offs.empty());
  }

  asio::io_context loop;
  FakeSender sender;
  MadRequester requester{loop, sender, 11};
  SaClient sa{requester, RetryPolicy{5ms, 1, 0.25, 8}, TableOptions{100, true}};
  std::vector<PathTable> tables;
  std::vector<std::string> offs;
};

TEST_F(SaClientTableTest, AsksThePathRecordsOfTheSgidAndTheSwitchesNodeRecords) {
  ASSERT_TRUE(start());
  ASSERT_EQ(sender.sent.size(), 2U);
  for (const OutgoingMad* out : {&node_request(), &path_request()}) {
    EXPECT_EQ(out->route, MadRoute::sa);
    EXPECT_EQ(out->dlid, kSmLid);
    EXPECT_GT(out->timeout_ms, 0U);
  }
  auto path = mad::decode_sa_mad(path_request().bytes);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->header.method, mad::method::kGetTable);
  EXPECT_EQ(path->header.attr_id, mad::attr::kPathRecord);
  EXPECT_EQ(path->sa.component_mask,
            mad::pr_mask::kSgid | mad::pr_mask::kPkey | mad::pr_mask::kReversible | mad::pr_mask::kNumbPath);
  auto want = mad::decode_path_record(path->data);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(want->sgid, kSelf);
  EXPECT_EQ(want->pkey, kPkey);
  EXPECT_TRUE(want->reversible);
  EXPECT_EQ(want->numb_path, 1);
  EXPECT_EQ(want->dgid, core::Gid{});  // wildcarded

  auto node = mad::decode_sa_mad(node_request().bytes);
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->header.method, mad::method::kGetTable);
  EXPECT_EQ(node->header.attr_id, mad::attr::kNodeRecord);
  EXPECT_EQ(node->sa.component_mask, mad::nr_mask::kNodeType);
  EXPECT_EQ(mad::decode_node_record(node->data)->node_type, mad::node_type::kSwitch);
}

TEST_F(SaClientTableTest, AQosClassTableAsksWithTheClassAndItsMaskBit) {
  ASSERT_TRUE(sa.query_path_table(kSelf, kPkey, [this](const PathTable& t) { tables.push_back(t); }, 7, 4));
  auto path = mad::decode_sa_mad(path_request().bytes);
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->sa.component_mask, mad::pr_mask::kSgid | mad::pr_mask::kPkey | mad::pr_mask::kReversible |
                                         mad::pr_mask::kNumbPath | mad::pr_mask::kQosClass);
  auto want = mad::decode_path_record(path->data);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(want->qos_class, 4);
  EXPECT_EQ(want->sgid, kSelf);
  EXPECT_EQ(want->dgid, core::Gid{});  // wildcarded, as the default paths' table
}

TEST_F(SaClientTableTest, LeavesOutSwitchPortZeroAndASecondPathToADgid) {
  ASSERT_TRUE(start());
  const std::vector<core::PathRecord> sa_paths = {
      path_to(0x11, 5),   path_to(0x20, 1),  // a switch, known by its LID
      path_to(0x12, 6),   path_to(0x11, 7),  // another LMC path to 0x11
      path_to(0x21, 40),                     // a switch, known by its port GUID (another LID)
      path_to(0x10, 10),                     // the own port: a loopback path, kept
  };
  const ReceivedMad paths = paths_answer(sa_paths);
  const ReceivedMad switches = switches_answer({switch_record(1, 0x20), switch_record(3, 0x21)});
  requester.on_receive(paths);
  EXPECT_TRUE(tables.empty()) << "waits for the switches";
  requester.on_receive(switches);
  ASSERT_EQ(tables.size(), 1U);
  const PathTable& t = tables[0];
  EXPECT_EQ(t.error, core::Error::ok) << t.reason;
  ASSERT_EQ(t.paths.size(), 3U);
  EXPECT_EQ(t.paths[0], sa_paths[0]);
  EXPECT_EQ(t.paths[1], sa_paths[2]);
  EXPECT_EQ(t.paths[2], sa_paths[5]);
  EXPECT_EQ(t.records, 6U);
  EXPECT_EQ(t.switch_ports, 2U);
  EXPECT_EQ(t.extra_paths, 1U);
  EXPECT_TRUE(t.switches_known);
  EXPECT_TRUE(sa.tables_usable());
  const TableCounters& c = sa.table_counters();
  EXPECT_EQ(c.sent, 2U);
  EXPECT_EQ(c.answered, 2U);
  EXPECT_EQ(c.records, 8U);
  EXPECT_EQ(c.bytes, (56U + 6 * 64) + (56U + 2 * 112));
}

TEST_F(SaClientTableTest, TheSwitchesMayAnswerFirst) {
  ASSERT_TRUE(start());
  requester.on_receive(switches_answer({switch_record(1, 0x20)}));
  EXPECT_TRUE(tables.empty());
  requester.on_receive(paths_answer({path_to(0x11, 5), path_to(0x20, 1)}));
  ASSERT_EQ(tables.size(), 1U);
  ASSERT_EQ(tables[0].paths.size(), 1U);
  EXPECT_EQ(tables[0].paths[0].dgid, gid(0x11));
  // A GetTable's answer took the SA its records' work and their transfer: it does not time the
  // SA's round trip for the GETs' timers (MadRequester, RoundTripEstimate).
  EXPECT_EQ(requester.round_trip(mad::mgmt_class::kSubnAdm, kSmLid), nullptr);
}

TEST_F(SaClientTableTest, TheRecordCountComesFromTheLengthReceivedNotThePaddedBuffer) {
  ASSERT_TRUE(start());
  const ReceivedMad one = paths_answer({path_to(0x11, 5)});
  ASSERT_EQ(one.length, 120U);
  ASSERT_EQ(one.bytes.size(), 256U);
  requester.on_receive(switches_answer({}));
  requester.on_receive(one);
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].records, 1U);
  EXPECT_EQ(tables[0].paths.size(), 1U);
}

TEST_F(SaClientTableTest, WithoutTheSwitchesEveryPathIsKept) {
  ASSERT_TRUE(start());
  requester.on_receive(switches_answer({}, 0x000C));  // NodeRecord GetTable refused
  requester.on_receive(paths_answer({path_to(0x11, 5), path_to(0x20, 1)}));
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].error, core::Error::ok);
  EXPECT_EQ(tables[0].paths.size(), 2U);
  EXPECT_FALSE(tables[0].switches_known);
  EXPECT_TRUE(sa.tables_usable()) << "the PathRecord table worked";
  EXPECT_TRUE(offs.empty());
}

TEST_F(SaClientTableTest, ARefusedGetTableTurnsTablesOffOnceUntilTheNextSm) {
  ASSERT_TRUE(start());
  const OutgoingMad node = node_request();
  requester.on_receive(paths_answer({}, 0x000C));  // unsupported method/attribute combination
  ASSERT_EQ(tables.size(), 1U) << "no wait for the switches once the paths failed";
  EXPECT_EQ(tables[0].error, core::Error::invalid);
  EXPECT_EQ(tables[0].reason, "the SA refused the PathRecord GetTable: MAD status 0x000c (invalid)");
  EXPECT_TRUE(tables[0].paths.empty());
  EXPECT_FALSE(sa.tables_usable());
  ASSERT_EQ(offs.size(), 1U);
  EXPECT_EQ(offs[0], tables[0].reason);
  EXPECT_EQ(sa.tables_off_reason(), tables[0].reason);
  requester.on_receive(table_answer(node, mad::attr::kNodeRecord, {}, 112, kSmLid));
  EXPECT_EQ(requester.counters().late_or_duplicate, 1U) << "the NodeRecord GetTable was cancelled";

  const std::size_t sent = sender.sent.size();
  EXPECT_FALSE(start());
  EXPECT_EQ(sender.sent.size(), sent) << "no GetTable while they are off";
  EXPECT_EQ(offs.size(), 1U) << "reported once";

  sa.on_sm_changed();
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_TRUE(start());
  EXPECT_EQ(sender.sent.size(), sent + 2);
  requester.on_receive(paths_answer({}, 0x0200));
  EXPECT_EQ(offs.size(), 2U) << "once per SM";
}

TEST_F(SaClientTableTest, AnSaSilentToEverythingLeavesTablesOn) {
  // OpenSM ignores SA MADs in its first sweep: the table may be asked again, it is not refused.
  ASSERT_TRUE(start());
  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].error, core::Error::timeout);
  EXPECT_EQ(tables[0].reason,
            "the SA did not answer the PathRecord GetTable (2 attempts), nor anything else meanwhile: down or sweeping");
  EXPECT_EQ(sender.sent.size(), 4U) << "both GetTables, each sent twice";
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_TRUE(offs.empty());
  EXPECT_EQ(sa.table_counters().answered, 0U);
  EXPECT_TRUE(start()) << "asked again";
}

TEST_F(SaClientTableTest, AnSaThatAnswersGetsButNotTablesTurnsThemOff) {
  ASSERT_TRUE(start());
  core::PathQuery get{.id = 7, .sgid = kSelf, .dgid = gid(0x20), .dlid = std::nullopt, .pkey = kPkey, .service_id = std::nullopt, .qos_class = std::nullopt};
  std::vector<core::QueryResult> results;
  sa.query_path(get, [&](const core::QueryResult& r) { results.push_back(r); });
  requester.on_receive(test::path_answer(sender.sent.back(), path_to(0x20, 32), kSmLid));
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].error, core::Error::ok);
  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].error, core::Error::timeout);
  EXPECT_EQ(tables[0].reason, "the SA did not answer the PathRecord GetTable (2 attempts)");
  EXPECT_FALSE(sa.tables_usable());
  EXPECT_EQ(offs.size(), 1U);
}

// Late answers, after their GET or GetTable failed: they complete nothing, count as late, and are
// no SA answer for a GetTable's verdict, while the port monitor still hears them
// (MadRequester::on_answer). The first table went unanswered (SA silent: tables stay on); the
// second is sent; then the first one's answer comes: the second, lost in turn with nothing else
// answered, is judged the SA silent again, and tables stay on.
TEST_F(SaClientTableTest, ATablesAnswerAfterItFailedCompletesNothingAndIsNoSaAnswer) {
  int heard = 0;
  requester.on_answer([&](core::Lid slid, core::TimePoint) { heard += slid == kSmLid; });
  ASSERT_TRUE(start());
  const OutgoingMad first = path_request();
  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  ASSERT_EQ(tables[0].error, core::Error::timeout);
  ASSERT_TRUE(sa.tables_usable());

  ASSERT_TRUE(start());
  const std::uint64_t late_before = requester.counters().late_or_duplicate;
  EXPECT_TRUE(requester.on_receive(table_answer(first, mad::attr::kPathRecord, {bytes_of(path_to(0x20, 32))}, 64, kSmLid)));
  EXPECT_EQ(requester.counters().late_or_duplicate, late_before + 1);
  EXPECT_EQ(tables.size(), 1U) << "the late answer completed nothing";
  EXPECT_EQ(sa.table_counters().answered, 0U);
  EXPECT_EQ(heard, 1) << "the monitor hears it: the SM's LID is alive";

  loop.restart();  // run() above ran out of work
  loop.run();
  ASSERT_EQ(tables.size(), 2U);
  expect_judged_silent(tables[1]);
}

// A GET fails; a table is sent; the GET's answer comes while the table runs. The GET keeps its one
// result (timeout), the answer counts as late, and the table, lost in turn, is judged the SA
// silent: had the late answer counted, the table would have turned tables off. (The table goes
// after the GET has failed, so that no timer's order on a loaded machine decides the case.)
TEST_F(SaClientTableTest, AGetsAnswerAfterItFailedCompletesNothingAndIsNoSaAnswer) {
  int heard = 0;
  requester.on_answer([&](core::Lid slid, core::TimePoint) { heard += slid == kSmLid; });
  const core::PathQuery get{.id = 7, .sgid = kSelf, .dgid = gid(0x20), .dlid = std::nullopt, .pkey = kPkey, .service_id = std::nullopt, .qos_class = std::nullopt};
  std::vector<core::QueryResult> gets;
  sa.query_path(get, [&](const core::QueryResult& r) { gets.push_back(r); });
  const OutgoingMad get_request = sender.sent.back();
  loop.run();
  ASSERT_EQ(gets.size(), 1U);
  ASSERT_EQ(gets[0].error, core::Error::timeout);
  loop.restart();  // run() above ran out of work
  ASSERT_TRUE(start());

  EXPECT_TRUE(requester.on_receive(test::path_answer(get_request, path_to(0x20, 32), kSmLid)));
  EXPECT_EQ(requester.counters().late_or_duplicate, 1U);
  EXPECT_EQ(gets.size(), 1U) << "not completed twice";
  EXPECT_EQ(heard, 1);

  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  expect_judged_silent(tables[0]);
}

TEST_F(SaClientTableTest, TheBroadcastGroupsAnswerCountsAsTheSaAnswering) {
  // Even an error status: the SA is up and answering this port, only not the table.
  ASSERT_TRUE(start());
  sa.query_broadcast_group(kSelf, kPkey, [](core::Error, const core::BroadcastParams&) {});
  requester.on_receive(test::sa_answer(sender.sent.back(), mad::attr::kMcMemberRecord, {}, kSmLid, 0x0200));
  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].reason, "the SA did not answer the PathRecord GetTable (2 attempts)");
  EXPECT_FALSE(sa.tables_usable());
  EXPECT_EQ(offs.size(), 1U);
}

TEST_F(SaClientTableTest, ATableLostWhileOnlyItsNodeRecordTableWasAnsweredLeavesTablesOn) {
  // A subnet's tables at once: the SA answers the short one and is still computing the long one.
  ASSERT_TRUE(start());
  requester.on_receive(switches_answer({switch_record(3, 0x30)}));
  loop.run();
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].error, core::Error::timeout);
  EXPECT_EQ(tables[0].reason,
            "the SA did not answer the PathRecord GetTable (2 attempts), only the NodeRecord GetTable beside it: busy");
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_TRUE(offs.empty());
}

std::vector<std::uint8_t> switch_info(std::uint16_t lid, std::uint16_t top) {
  mad::SwitchInfoRecord r;
  r.lid = core::Lid{lid};
  r.linear_fdb_cap = 0xC000;
  r.linear_fdb_top = top;
  const auto b = mad::encode_switch_info_record(r);
  std::vector<std::uint8_t> out(b.begin(), b.end());
  out.resize(24);  // the rest of SwitchInfo and padding, as OpenSM's AttributeOffset says
  return out;
}

TEST_F(SaClientTableTest, TheSubnetSizeIsTheSwitchesHighestLinearFdbTop) {
  std::vector<core::SubnetSizeResult> sizes;
  ASSERT_TRUE(sa.query_subnet_size([&](const core::SubnetSizeResult& r) { sizes.push_back(r); }));
  ASSERT_EQ(sender.sent.size(), 1U);
  const OutgoingMad& out = sender.sent.back();
  EXPECT_EQ(out.dlid, kSmLid);
  auto q = mad::decode_sa_mad(out.bytes);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->header.method, mad::method::kGetTable);
  EXPECT_EQ(q->header.attr_id, mad::attr::kSwitchInfoRecord);
  EXPECT_EQ(q->sa.component_mask, 0U) << "every switch";
  // A switch not yet swept lists a lower top: the highest one counts.
  requester.on_receive(table_answer(out, mad::attr::kSwitchInfoRecord,
                                    {switch_info(1, 4000), switch_info(2, 4123), switch_info(3, 17)}, 24, kSmLid));
  ASSERT_EQ(sizes.size(), 1U);
  EXPECT_EQ(sizes[0].error, core::Error::ok);
  EXPECT_EQ(sizes[0].lids, 4123U);
  EXPECT_EQ(sa.table_counters().sent, 1U);
  EXPECT_EQ(sa.table_counters().records, 3U);
}

TEST_F(SaClientTableTest, ASubnetSizeRefusedSilentOrUnreadableSaysWhyAndTurnsNothingOff) {
  std::vector<core::SubnetSizeResult> sizes;
  auto ask = [&] { return sa.query_subnet_size([&](const core::SubnetSizeResult& r) { sizes.push_back(r); }); };
  ASSERT_TRUE(ask());
  requester.on_receive(table_answer(sender.sent.back(), mad::attr::kSwitchInfoRecord, {}, 24, kSmLid, 0x000C));
  ASSERT_TRUE(ask());
  requester.on_receive(table_answer(sender.sent.back(), mad::attr::kSwitchInfoRecord, {}, 24, kSmLid));
  ASSERT_TRUE(ask());
  requester.on_receive(table_answer(sender.sent.back(), mad::attr::kSwitchInfoRecord, {{1, 2, 3, 4, 5, 6, 7, 8}}, 8, kSmLid));
  ASSERT_TRUE(ask());
  loop.run();
  ASSERT_EQ(sizes.size(), 4U);
  EXPECT_EQ(sizes[0].error, core::Error::invalid);
  EXPECT_EQ(sizes[0].reason, "the SA refused the SwitchInfoRecord GetTable: MAD status 0x000c (invalid)");
  EXPECT_EQ(sizes[1].error, core::Error::no_record);
  EXPECT_EQ(sizes[1].reason, "no switch lists a LinearFDBTop");
  EXPECT_EQ(sizes[2].error, core::Error::invalid) << "8-byte records cannot hold LinearFDBTop";
  EXPECT_FALSE(sizes[2].reason.empty());
  EXPECT_EQ(sizes[3].error, core::Error::timeout);
  EXPECT_EQ(sizes[3].reason, "the SA did not answer the SwitchInfoRecord GetTable (2 attempts)");
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_TRUE(offs.empty());
}

TEST_F(SaClientTableTest, ACancelledTableSendsNoMoreAndNeverAnswers) {
  ASSERT_TRUE(sa.query_path_table(kSelf, kPkey, [this](const PathTable& t) { tables.push_back(t); }, 42));
  const ReceivedMad late = paths_answer({path_to(0x20, 32)});
  EXPECT_EQ(sender.sent.size(), 2U);
  EXPECT_TRUE(sa.cancel(42));
  EXPECT_FALSE(sa.cancel(42)) << "once";
  loop.run();
  EXPECT_EQ(sender.sent.size(), 2U) << "no resend of either GetTable";
  requester.on_receive(late);
  EXPECT_TRUE(tables.empty());
  EXPECT_TRUE(sa.tables_usable());
}

TEST(SaClientTableTimers, ATableWaitsTwentyTimesAGetAndIsSentAtMostTwice) {
  const RetryPolicy get{std::chrono::milliseconds(200), 3, 0.25, 8};
  const RetryPolicy table = table_retry_policy(get);
  EXPECT_EQ(table.timeout, std::chrono::milliseconds(4000));
  EXPECT_EQ(table.retries, 1U);
  EXPECT_EQ(table_retry_policy(RetryPolicy{std::chrono::milliseconds(50), 0, 0.25, 8}).retries, 0U);
}

// Each kind of table has its own timer (MadRequester, TableTimer): the NodeRecord table answered
// at its first attempt measures the SA's time per record; the PathRecord table answered only after
// its resend measures nothing (Karn) but backs its next first attempt off, past its fixed timer.
TEST_F(SaClientTableTest, EachKindOfTableIsTimedByItsOwnAnswersAndTimeouts) {
  ASSERT_TRUE(start());
  const std::uint32_t first_wait_ms = path_request().timeout_ms;
  requester.on_receive(switches_answer({switch_record(1, 0x20), switch_record(2, 0x21)}));
  const TableTimer* switches = requester.table_timer(mad::attr::kNodeRecord, kSmLid);
  ASSERT_NE(switches, nullptr);
  EXPECT_GT(switches->timer_floor(0ms), 0ms) << "two records, answered at the first attempt: a sample";
  const ReceivedMad answer = paths_answer({path_to(0x11, 5)});  // answers any attempt (same TID)
  ASSERT_EQ(sender.sent.size(), 2U);
  while (sender.sent.size() < 3 && loop.run_one() > 0) {
  }  // to the PathRecord table's first timer (the NodeRecord's cancelled wait runs first)
  ASSERT_EQ(sender.sent.size(), 3U) << "resent";
  requester.on_receive(answer);
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].error, core::Error::ok);
  const TableTimer* paths = requester.table_timer(mad::attr::kPathRecord, kSmLid);
  ASSERT_NE(paths, nullptr);
  EXPECT_EQ(paths->per_record_ns(), 0.0) << "an answer after a resend is no sample";
  EXPECT_GE(paths->timer_floor(0ms), 150ms) << "twice the timer that fired (100 ms - 25 %)";
  EXPECT_EQ(requester.round_trip(mad::mgmt_class::kSubnAdm, kSmLid), nullptr) << "no table times the GETs";
  ASSERT_TRUE(start());
  EXPECT_GT(path_request().timeout_ms, first_wait_ms + 50) << "the next table's attempts wait the backed-off floor";
}

TEST_F(SaClientTableTest, UnreadableOrForeignTablesAreRefused) {
  struct Case {
    const char* what;
    std::function<ReceivedMad(SaClientTableTest&)> answer;
    std::string reason;
  };
  const Case cases[] = {
      {"another source",
       [](SaClientTableTest& t) {
         core::PathRecord foreign = path_to(0x12, 6);
         foreign.sgid = gid(0x99);
         return t.paths_answer({path_to(0x11, 5), foreign});
       },
       "PathRecord 1 of the table is from fe80::99 P_Key 0xffff, not the fe80::10 P_Key 0xffff asked for"},
      {"another P_Key",
       [](SaClientTableTest& t) {
         core::PathRecord other = path_to(0x12, 6);
         other.pkey = core::Pkey{0x8001};
         return t.paths_answer({other});
       },
       "PathRecord 0 of the table is from fe80::10 P_Key 0x8001, not the fe80::10 P_Key 0xffff asked for"},
      {"cut inside a record",
       [](SaClientTableTest& t) {
         ReceivedMad cut = t.paths_answer({path_to(0x11, 5), path_to(0x12, 6)});
         cut.length -= 10;
         return cut;
       },
       "SA table: 118 data bytes are not a whole number of 64-byte records (truncated?)"},
      {"too long to be kept whole",
       [](SaClientTableTest& t) {
         ReceivedMad first_mad = t.paths_answer({path_to(0x11, 5), path_to(0x12, 6)});
         first_mad.length = 20000;  // what UmadTransport passes on of a message over its bound
         return first_mad;
       },
       "SA table: the answer of 20000 bytes is longer than the 11256 bytes that 100 records may take"},
      {"too many records",
       [](SaClientTableTest& t) {
         std::vector<core::PathRecord> many;
         for (std::uint16_t i = 1; i <= 101; ++i) many.push_back(path_to(0x100 + i, i));
         return t.paths_answer(many);
       },
       "SA table: 101 records, more than the maximum of 100"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    tables.clear();
    sa.on_sm_changed();
    ASSERT_TRUE(start());
    requester.on_receive(c.answer(*this));
    ASSERT_EQ(tables.size(), 1U);
    EXPECT_EQ(tables[0].error, core::Error::invalid);
    EXPECT_EQ(tables[0].reason, c.reason);
    EXPECT_TRUE(tables[0].paths.empty());
    EXPECT_FALSE(sa.tables_usable());
  }
}

TEST_F(SaClientTableTest, ATableOfTheOldSmDoesNotTurnOffTheNewSmsTables) {
  ASSERT_TRUE(start());
  sa.on_sm_changed();
  requester.on_receive(paths_answer({}, 0x000C));
  ASSERT_EQ(tables.size(), 1U);
  EXPECT_EQ(tables[0].error, core::Error::invalid);
  EXPECT_TRUE(sa.tables_usable());
  EXPECT_TRUE(offs.empty());
}

TEST(SaClientTableNoRmpp, TablesAreOffFromTheStartAndReportedOnce) {
  asio::io_context loop;
  FakeSender sender;
  MadRequester requester{loop, sender, 3};
  SaClient sa{requester, RetryPolicy{}, TableOptions{100, false}};
  sa.set_sm(kSmLid, 0);
  std::vector<std::string> offs;
  sa.on_tables_off([&](const std::string& reason) { offs.push_back(reason); });
  EXPECT_FALSE(sa.tables_usable());
  bool called = false;
  auto query = [&] { return sa.query_path_table(kSelf, kPkey, [&](const PathTable&) { called = true; }); };
  EXPECT_FALSE(query());
  EXPECT_FALSE(query());
  sa.on_sm_changed();
  EXPECT_FALSE(query()) << "no RMPP stays no RMPP";
  EXPECT_TRUE(sender.sent.empty());
  EXPECT_FALSE(called);
  ASSERT_EQ(offs.size(), 1U);
  EXPECT_EQ(offs[0], "the MAD layer has no RMPP (umad2sim): a GetTable answer would arrive cut");
}

}  // namespace
}  // namespace ibat::fabric

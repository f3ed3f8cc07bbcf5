// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Resolver under a QoS policy (core/qos_key.h): a resolve naming a ServiceID or QoS class that
// Policy singles out is cached apart and asked with it: a ServiceID by GET, also while the GetTable
// is awaited; a QoS class alone by a GetTable of its own (its first resolve asks it, a short
// deadline by GET meanwhile; again after an SM change; past SaScheduler::kMaxClassTables by GET).
// Any other shares the destination's default path, the prefetched table's, with no query.
#include "core/sa_scheduler.h"
#include "resolver_fixture.h"

namespace ibat::core::testing {
namespace {

constexpr std::uint64_t kIser = 0x0000000001060CBCULL;
constexpr std::uint64_t kEphemeral = 0x000000000106C350ULL;  // TCP port 50000: no policy names it

ResolveRequest with_service(std::optional<std::uint64_t> service_id, std::optional<std::uint16_t> qos_class = {}) {
  ResolveRequest r;
  r.service_id = service_id;
  r.qos_class = qos_class;
  return r;
}

class ResolverQosTest : public ResolverFilledTest {
 protected:
  ResolverQosTest() {
    sink.tables = true;
    policy.qos_classes = {{4, 4}};
    reset();
  }
  void answer_table(std::vector<PathRecord> paths) {
    resolver->on_table_result(sink.tables_sent.back().id, TableResult{Error::ok, std::move(paths), ""});
  }
};

TEST_F(ResolverQosTest, AStandardUlpServiceIdIsAskedWithItAndCachedApartFromTheDefaultPath) {
  answer_table({good_path(remote_gid(1), 101)});
  RequestId plain = resolve_gid(remote_gid(1));
  ASSERT_EQ(rec.times(plain), 1);  // the table's path
  EXPECT_TRUE(sink.sent.empty());

  RequestId iser = resolve_gid(remote_gid(1), with_service(kIser));
  EXPECT_EQ(rec.times(iser), 0);
  ASSERT_EQ(sink.sent.size(), 1u);
  const PathQuery q = sink.sent.back();
  EXPECT_EQ(q.dgid, remote_gid(1));
  EXPECT_EQ(q.service_id, std::optional<std::uint64_t>{kIser});
  EXPECT_FALSE(q.qos_class);
  PathRecord storage = good_path(remote_gid(1), 101);
  storage.sl = 3;
  answer(q, storage);
  ASSERT_EQ(rec.times(iser), 1);
  EXPECT_EQ(rec.last[iser].path.sl, 3);
  EXPECT_EQ(rec.last[iser].path.service_id, kIser);  // the key's: what was asked

  // Both stay cached, each with its own SL; neither asks again.
  RequestId iser2 = resolve_gid(remote_gid(1), with_service(kIser));
  RequestId plain2 = resolve_gid(remote_gid(1));
  EXPECT_EQ(rec.last[iser2].path.sl, 3);
  EXPECT_EQ(rec.last[plain2].path.sl, 2);
  EXPECT_EQ(rec.last[plain2].path.service_id, 0u);
  EXPECT_EQ(sink.sent.size(), 1u);
}

TEST_F(ResolverQosTest, AServiceIdOrQosClassNoRangeNamesSharesTheDefaultPathWithNoQuery) {
  answer_table({good_path(remote_gid(1), 101)});
  RequestId ephemeral = resolve_gid(remote_gid(1), with_service(kEphemeral, 2));
  ASSERT_EQ(rec.times(ephemeral), 1);
  EXPECT_EQ(rec.last[ephemeral].error, Error::ok);
  EXPECT_EQ(rec.last[ephemeral].path.dlid, Lid{101});
  EXPECT_TRUE(sink.sent.empty());
  EXPECT_EQ(resolver->entries().size(), 1u);
}

TEST_F(ResolverQosTest, AQosClassThePolicyNamesIsAskedWithIt) {
  answer_table({good_path(remote_gid(1), 101)});
  RequestId gold = resolve_gid(remote_gid(1), with_service(kEphemeral, 4));
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent.back().qos_class, std::optional<std::uint16_t>{4});
  EXPECT_FALSE(sink.sent.back().service_id);  // the ephemeral ServiceID is no criterion
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  EXPECT_EQ(rec.times(gold), 1);
}

TEST_F(ResolverQosTest, AKeptApartResolveGoesByGetWhileTheTableIsAwaitedAndTheTableLeavesItAlone) {
  // The table is out, unanswered: a default miss waits for it, an iSER miss does not.
  ASSERT_EQ(sink.tables_sent.size(), 1u);
  RequestId plain = resolve_gid(remote_gid(2), with_timeout(30s));
  ResolveRequest iser_request = with_service(kIser);
  iser_request.timeout = 30s;
  RequestId iser = resolve_gid(remote_gid(2), iser_request);
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent.back().service_id, std::optional<std::uint64_t>{kIser});
  PathRecord storage = good_path(remote_gid(2), 102);
  storage.sl = 5;

  std::vector<PathStored> stored;
  resolver->set_store_observer([&](const PathStored& s) { stored.push_back(s); });
  answer_table({good_path(remote_gid(2), 102)});
  ASSERT_EQ(rec.times(plain), 1);
  EXPECT_EQ(rec.last[plain].path.sl, 2);
  EXPECT_EQ(rec.times(iser), 0);  // the table names default paths only
  answer(sink.sent.back(), storage);
  ASSERT_EQ(rec.times(iser), 1);
  EXPECT_EQ(rec.last[iser].path.sl, 5);
  // Only the default path is published (the shared table is keyed by SGID, DGID and P_Key).
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].path.sl, 2);
}

TEST_F(ResolverQosTest, AnEmptyPolicyRangeKeepsNothingApart) {
  policy.qos_service_ids.clear();
  reset();
  answer_table({good_path(remote_gid(1), 101)});
  RequestId iser = resolve_gid(remote_gid(1), with_service(kIser));
  EXPECT_EQ(rec.times(iser), 1);
  EXPECT_TRUE(sink.sent.empty());
}

TEST_F(ResolverQosTest, TheTclassIsEchoedAndIsNoKey) {
  answer_table({good_path(remote_gid(1), 101)});
  ResolveRequest r;
  r.tclass = 0x20;
  RequestId id = resolve_gid(remote_gid(1), r);
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.tclass, 0x20);
  EXPECT_TRUE(sink.sent.empty());
}

TEST_F(ResolverQosTest, AnSmChangeRenewsAKeptApartPathByGetAfterTheTable) {
  answer_table({good_path(remote_gid(1), 101)});
  resolve_gid(remote_gid(1), with_service(kIser));
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  const std::size_t gets = sink.sent.size();
  resolver->on_sm_changed();
  run_for(5ms, 1ms);  // the table gate's first probe, within 1 ms a known end port
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  answer_table({good_path(remote_gid(1), 201)});
  run_for(5s, 10ms);
  ASSERT_GT(sink.sent.size(), gets);  // the iSER path is not in the table: its own GET
  EXPECT_EQ(sink.sent.back().service_id, std::optional<std::uint64_t>{kIser});
  answer(sink.sent.back(), good_path(remote_gid(1), 201));
  RequestId iser = resolve_gid(remote_gid(1), with_service(kIser));
  EXPECT_EQ(rec.last[iser].path.dlid, Lid{201});
  EXPECT_EQ(rec.last[iser].state, EntryState::valid);
}

ResolveRequest gold(Duration timeout = 30s) {
  ResolveRequest r = with_service(std::nullopt, 4);
  r.timeout = timeout;
  return r;
}

PathRecord gold_path(const Gid& dgid, std::uint16_t dlid) {
  PathRecord p = good_path(dgid, dlid);
  p.sl = 6;  // what the SM's qos-class rule gives class 4
  return p;
}

TEST_F(ResolverQosTest, AQosClassGetsItsOwnTableAtItsFirstResolveAndItsHitsComeFromIt) {
  answer_table({good_path(remote_gid(1), 101), good_path(remote_gid(2), 102)});
  RequestId first = resolve_gid(remote_gid(1), gold());
  run_for(5ms, 1ms);  // the class's table gate opens as the default one does
  EXPECT_TRUE(sink.sent.empty());  // parked for the class's table, no GET
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  const TableQuery q = sink.tables_sent.back();
  EXPECT_EQ(q.qos_class, std::optional<std::uint16_t>{4});
  EXPECT_EQ(q.sgid, port_gid());
  EXPECT_FALSE(sink.tables_sent.front().qos_class);  // the default paths' table has none
  EXPECT_EQ(rec.times(first), 0);
  answer_table({gold_path(remote_gid(1), 101), gold_path(remote_gid(2), 102)});
  ASSERT_EQ(rec.times(first), 1);
  EXPECT_EQ(rec.last[first].path.sl, 6);

  RequestId second = resolve_gid(remote_gid(2), gold());
  RequestId plain = resolve_gid(remote_gid(2));
  ASSERT_EQ(rec.times(second), 1);
  EXPECT_EQ(rec.last[second].path.sl, 6);
  EXPECT_EQ(rec.last[plain].path.sl, 2);
  EXPECT_TRUE(sink.sent.empty());
  EXPECT_EQ(sink.tables_sent.size(), 2u);  // one table per class, not one per resolve
  EXPECT_EQ(resolver->entries().size(), 4u);
}

TEST_F(ResolverQosTest, AShortDeadlineGoesByGetAndStillBringsItsClassTable) {
  answer_table({good_path(remote_gid(1), 101)});
  RequestId first = resolve_gid(remote_gid(1), gold(2s));  // within the reserve: no wait for a table
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent.back().qos_class, std::optional<std::uint16_t>{4});
  answer(sink.sent.back(), gold_path(remote_gid(1), 101));
  EXPECT_EQ(rec.last[first].path.sl, 6);
  run_for(5ms, 1ms);
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  EXPECT_EQ(sink.tables_sent.back().qos_class, std::optional<std::uint16_t>{4});
}

// The class's table will bring the path, and behind the subnet's tables the pacer would read the
// SA's queue as congestion: a resolve that cannot wait for the table goes at the late pace, held
// by neither the pacer's window nor its gaps, as a request after its wait for the table does.
TEST_F(ResolverQosTest, AResolveThatCannotWaitForItsTableIsNotHeldByThePacersWindow) {
  answer_table({good_path(remote_gid(1), 101)});
  resolve_gid(remote_gid(5), with_service(kIser));  // fills the pacer's first window of one
  ASSERT_EQ(sink.sent.size(), 1u);
  resolve_gid(remote_gid(1), gold(2s));
  ASSERT_EQ(sink.sent.size(), 2u);
  EXPECT_EQ(sink.sent.back().qos_class, std::optional<std::uint16_t>{4});
  resolve_gid(remote_gid(6), with_service(kIser));  // no table brings it: the window holds it
  EXPECT_EQ(sink.sent.size(), 2u);
}

TEST_F(ResolverQosTest, AnSmChangeAsksEachClassTableAgainOnce) {
  answer_table({good_path(remote_gid(1), 101)});
  resolve_gid(remote_gid(1), gold());
  run_for(5ms, 1ms);
  answer_table({gold_path(remote_gid(1), 101)});
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  resolver->on_sm_changed();
  run_for(1s, 1ms);
  ASSERT_EQ(sink.tables_sent.size(), 4u);  // the default paths' and class 4's, one each
  const bool default_first = !sink.tables_sent[2].qos_class;
  const TableQuery& class_table = sink.tables_sent[default_first ? 3 : 2];
  EXPECT_EQ(class_table.qos_class, std::optional<std::uint16_t>{4});
  EXPECT_FALSE(sink.tables_sent[default_first ? 2 : 3].qos_class);
  EXPECT_TRUE(sink.sent.empty());  // both renew their paths: no GET
  PathRecord moved = gold_path(remote_gid(1), 201);
  resolver->on_table_result(class_table.id, TableResult{Error::ok, {moved}, ""});
  RequestId after = resolve_gid(remote_gid(1), gold());
  ASSERT_EQ(rec.times(after), 1);
  EXPECT_EQ(rec.last[after].path.dlid, Lid{201});
  EXPECT_EQ(rec.last[after].path.sl, 6);
}

TEST_F(ResolverQosTest, ClassesPastTheLimitAreAskedByGet) {
  policy.qos_classes = {{1, 4095}};
  sink.tables_sent.clear();  // the first Resolver's
  reset();
  answer_table({good_path(remote_gid(1), 101)});
  for (std::uint16_t c = 1; c <= SaScheduler::kMaxClassTables + 1; ++c) {
    ResolveRequest r = with_service(std::nullopt, c);
    r.timeout = 30s;
    resolve_gid(remote_gid(1), r);
  }
  run_for(5ms, 1ms);
  EXPECT_EQ(sink.tables_sent.size(), 1 + SaScheduler::kMaxClassTables);
  ASSERT_EQ(sink.sent.size(), 1u);  // the ninth class, destination by destination
  EXPECT_EQ(sink.sent.back().qos_class, std::optional<std::uint16_t>(SaScheduler::kMaxClassTables + 1));
}

TEST_F(ResolverQosTest, AServiceIdWithAClassIsAskedByGetWithBothAndBringsNoTable) {
  answer_table({good_path(remote_gid(1), 101)});
  ResolveRequest r = gold();
  r.service_id = kIser;
  resolve_gid(remote_gid(1), r);
  run_for(5ms, 1ms);
  ASSERT_EQ(sink.sent.size(), 1u);
  EXPECT_EQ(sink.sent.back().service_id, std::optional<std::uint64_t>{kIser});
  EXPECT_EQ(sink.sent.back().qos_class, std::optional<std::uint16_t>{4});
  EXPECT_EQ(sink.tables_sent.size(), 1u);
}

TEST_F(ResolverQosTest, NoClassListedSharesTheDefaultPath) {
  policy.qos_classes.clear();
  sink.tables_sent.clear();  // the first Resolver's
  reset();
  answer_table({good_path(remote_gid(1), 101)});
  RequestId id = resolve_gid(remote_gid(1), gold());
  ASSERT_EQ(rec.times(id), 1);
  EXPECT_EQ(rec.last[id].path.sl, 2);
  run_for(5ms, 1ms);
  EXPECT_TRUE(sink.sent.empty());
  EXPECT_EQ(sink.tables_sent.size(), 1u);
}

TEST_F(ResolverQosTest, ARefusedClassTableSendsOnlyItsOwnParkedResolvesByGet) {
  resolve_gid(remote_gid(1), with_timeout(30s));  // parked for the default table, still out
  RequestId waiting = resolve_gid(remote_gid(2), gold());
  run_for(5ms, 1ms);
  ASSERT_EQ(sink.tables_sent.size(), 2u);
  EXPECT_TRUE(sink.sent.empty());
  resolver->on_table_result(sink.tables_sent.back().id, TableResult{Error::invalid, {}, "refused"});
  run_for(5ms, 1ms);
  ASSERT_EQ(sink.sent.size(), 1u);  // the class's resolve; the default one still waits for its table
  EXPECT_EQ(sink.sent.back().dgid, remote_gid(2));
  EXPECT_EQ(sink.sent.back().qos_class, std::optional<std::uint16_t>{4});
  answer(sink.sent.back(), gold_path(remote_gid(2), 102));
  EXPECT_EQ(rec.last[waiting].path.sl, 6);
  RequestId later = resolve_gid(remote_gid(3), gold());  // no table asked again before an SM change
  run_for(5ms, 1ms);
  EXPECT_EQ(sink.tables_sent.size(), 2u);
  ASSERT_EQ(sink.sent.size(), 2u);
  EXPECT_EQ(rec.times(later), 0);
}

TEST(QosKey, RangesParseNamesNumbersAndRangesAndRejectTheRest) {
  EXPECT_EQ(parse_service_ids("iser"), (IdRange{0x1060CBC, 0x1060CBC}));
  EXPECT_EQ(parse_service_ids("nfs-rdma"), (IdRange{0x1064E51, 0x1064E51}));  // port 20049 = 0x4e51
  EXPECT_EQ(parse_service_ids("sdp"), (IdRange{0x10000, 0x1FFFF}));
  EXPECT_EQ(parse_service_ids("0x10-0x20"), (IdRange{0x10, 0x20}));
  EXPECT_EQ(parse_service_ids("17"), (IdRange{17, 17}));
  EXPECT_FALSE(parse_service_ids("0x20-0x10"));
  EXPECT_FALSE(parse_service_ids("iscsi"));
  EXPECT_FALSE(parse_service_ids(""));
  EXPECT_FALSE(parse_service_ids("0x"));
  EXPECT_FALSE(parse_service_ids("1-"));
  EXPECT_EQ(parse_qos_classes("8-15"), (IdRange{8, 15}));
  EXPECT_FALSE(parse_qos_classes("4096"));
  EXPECT_EQ(service_ids_name(IdRange{0x10648CA, 0x10648CA}), "rds");
  EXPECT_EQ(service_ids_name(IdRange{0x10, 0x20}), "0x10-0x20");
  EXPECT_EQ(to_string(IdRange{4, 4}, false), "4");
}

TEST(QosKey, AFieldIsKeptOnlyWhenARangeHoldsIt) {
  const std::vector<IdRange> sids = {{0x100, 0x1FF}};
  const std::vector<IdRange> classes = {{4, 4}};
  EXPECT_TRUE(QosKey::of(std::nullopt, std::nullopt, sids, classes).is_default());
  EXPECT_TRUE(QosKey::of(0x200, 3, sids, classes).is_default());
  QosKey k = QosKey::of(0x1FF, 4, sids, classes);
  EXPECT_EQ(k.sent_service_id(), std::optional<std::uint64_t>{0x1FF});
  EXPECT_EQ(k.sent_qos_class(), std::optional<std::uint16_t>{4});
  EXPECT_NE(QosKey::of(0x100, std::nullopt, sids, classes), QosKey::of(0x101, std::nullopt, sids, classes));
}

TEST(QosKey, PolicyRejectsAClassRangeBeyondTwelveBits) {
  Policy p;
  p.qos_classes = {{8, 4096}};
  EXPECT_NE(p.validate().find("qos_classes"), std::string::npos) << p.validate();
  p.qos_classes = {{8, 4095}};
  EXPECT_EQ(p.validate(), "");
}

}  // namespace
}  // namespace ibat::core::testing

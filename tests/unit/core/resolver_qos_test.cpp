// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The Resolver under a QoS policy (core/qos_key.h): a resolve naming a ServiceID or QoS class that
// Policy singles out is cached apart and asked by GET with it, also while the GetTable is awaited;
// any other shares the destination's default path, the prefetched table's, with no query.
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

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Where a cached path came from (PathOrigin): a GET's answer, the subnet's GetTable, an ARP
// neighbour's source LID, or the warm cache file, kept with the entry and given with every answer
// and in the entry's view; and the key's QoS fields beside it.
#include "core/path_cache.h"
#include "resolver_fixture.h"

namespace ibat::core::testing {
namespace {

class ResolverOriginTest : public ResolverFilledTest {
 protected:
  std::optional<CacheEntryView> entry(const Gid& dgid) const {
    for (const CacheEntryView& e : resolver->entries())
      if (e.dgid == dgid) return e;
    return std::nullopt;
  }
};

TEST_F(ResolverOriginTest, AGetsAnswerIsFromAGetAndTheDefaultKey) {
  populate(1);
  RequestId id = resolve_gid(remote_gid(1));
  ASSERT_EQ(rec.last[id].error, Error::ok);
  EXPECT_EQ(rec.last[id].origin, PathOrigin::sa_get);
  EXPECT_EQ(rec.last[id].key_qos_fields, 0);
  EXPECT_EQ(entry(remote_gid(1))->origin, PathOrigin::sa_get);
}

TEST_F(ResolverOriginTest, ATablesPathIsFromTheTableUntilAGetRenewsIt) {
  sink.tables = true;
  reset();
  ASSERT_EQ(sink.tables_sent.size(), 1u);
  resolver->on_table_result(sink.tables_sent.back().id,
                            TableResult{Error::ok, {good_path(remote_gid(1), 101), good_path(remote_gid(2), 102)}, ""});
  RequestId hit = resolve_gid(remote_gid(1));
  ASSERT_EQ(rec.last[hit].error, Error::ok);
  EXPECT_EQ(rec.last[hit].origin, PathOrigin::sa_table);
  EXPECT_EQ(entry(remote_gid(2))->origin, PathOrigin::sa_table);
  // force-SA asks by GET: the entry is the GET's from then on.
  ResolveRequest force;
  force.force_sa = true;
  RequestId fresh = resolve_gid(remote_gid(1), force);
  ASSERT_FALSE(sink.sent.empty());
  answer(sink.sent.back(), good_path(remote_gid(1), 101));
  EXPECT_EQ(rec.last[fresh].origin, PathOrigin::sa_get);
  EXPECT_EQ(entry(remote_gid(1))->origin, PathOrigin::sa_get);
}

TEST_F(ResolverOriginTest, AProvisionalPathIsTheNeighbours) {
  resolver->on_broadcast_params({Pkey{0xFFFF}, 4, 3, 0, 18});
  const IpAddr ip = *IpAddr::parse("192.0.2.20");
  resolver->on_neighbour(ip, HwAddr::from(0x48, remote_gid(6)), Lid{12});
  RequestId early = resolve_target(ip);
  ASSERT_EQ(rec.last[early].state, EntryState::provisional);
  EXPECT_EQ(rec.last[early].origin, PathOrigin::neighbour);
  EXPECT_EQ(entry(remote_gid(6))->origin, PathOrigin::neighbour);
}

TEST_F(ResolverOriginTest, AWarmCachesPathIsTheFiles) {
  populate(2);
  std::vector<CacheEntryView> snapshot = resolver->entries();
  reset();
  resolver->load_stale(snapshot);
  RequestId warm = resolve_gid(remote_gid(2));
  ASSERT_EQ(rec.last[warm].state, EntryState::stale);
  EXPECT_EQ(rec.last[warm].origin, PathOrigin::warm_cache);
  EXPECT_EQ(entry(remote_gid(1))->origin, PathOrigin::warm_cache);
}

TEST_F(ResolverOriginTest, APathCachedApartForAServiceIdSaysSoInItsKeyFields) {
  ResolveRequest iser;
  iser.service_id = 0x1060cbcULL;  // iSER's, one of the default qos_service_ids
  RequestId id = resolve_gid(remote_gid(3), iser);
  ASSERT_FALSE(sink.sent.empty());
  answer(sink.sent.back(), good_path(remote_gid(3), 103));
  ASSERT_EQ(rec.last[id].error, Error::ok);
  EXPECT_EQ(rec.last[id].key_qos_fields, QosKey::kServiceId);
  EXPECT_EQ(rec.last[id].path.service_id, 0x1060cbcULL);
  EXPECT_EQ(rec.last[id].origin, PathOrigin::sa_get);
}

TEST(PathOrigin, NamesAreThoseTheCliAndPathsPrint) {
  EXPECT_EQ(to_string(PathOrigin::sa_table), "sa-table");
  EXPECT_EQ(to_string(PathOrigin::sa_get), "sa-get");
  EXPECT_EQ(to_string(PathOrigin::warm_cache), "warm-cache");
  EXPECT_EQ(to_string(PathOrigin::neighbour), "neighbour");
  EXPECT_EQ(to_string(PathOrigin::unknown), "unknown");
  EXPECT_LE(sizeof(CacheEntry), 104u) << "the origin lives in the entry's padding";
}

}  // namespace
}  // namespace ibat::core::testing

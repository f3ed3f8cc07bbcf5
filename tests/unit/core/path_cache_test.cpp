// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PathCache: lookup through the open-addressing index (incl. deletion), LRU order, compact
// packing of path records and the per-entry footprint.
#include <gtest/gtest.h>

#include <random>
#include <unordered_set>

#include "core/path_cache.h"

namespace ibat::core {
namespace {

using namespace std::chrono_literals;

PathKey key_of(std::uint64_t n, std::uint16_t pkey = 0xFFFF) {
  return {Gid::from_parts(0xFE80ULL << 48, 1), Gid::from_parts(0xFE80ULL << 48, 1000 + n), Pkey{pkey}, {}};
}

TEST(PathCache, FindsWhatWasInsertedAndNothingElse) {
  PathCache cache;
  TimePoint t{1s};
  for (std::uint64_t n = 0; n < 5000; ++n) cache.insert(key_of(n), t);
  EXPECT_EQ(cache.size(), 5000u);
  for (std::uint64_t n = 0; n < 5000; ++n) {
    auto i = cache.find(key_of(n));
    ASSERT_NE(i, PathCache::npos);
    EXPECT_EQ(cache.at(i).key, key_of(n));
  }
  EXPECT_EQ(cache.find(key_of(5000)), PathCache::npos);
  EXPECT_EQ(cache.find(key_of(1, 0x7FFF)), PathCache::npos);  // P_Key is part of the key
}

TEST(PathCache, RandomInsertEraseMatchesAReferenceSet) {
  PathCache cache;
  std::unordered_set<std::uint64_t> reference;
  std::mt19937_64 rng(5);
  TimePoint t{1s};
  for (int step = 0; step < 50'000; ++step) {
    std::uint64_t n = rng() % 3000;
    auto i = cache.find(key_of(n));
    ASSERT_EQ(i != PathCache::npos, reference.contains(n)) << "step " << step;
    if (i == PathCache::npos) {
      cache.insert(key_of(n), t);
      reference.insert(n);
    } else {
      cache.erase(i);
      reference.erase(n);
    }
  }
  EXPECT_EQ(cache.size(), reference.size());
  for (std::uint64_t n = 0; n < 3000; ++n) EXPECT_EQ(cache.find(key_of(n)) != PathCache::npos, reference.contains(n));
}

TEST(PathCache, LruVictimIsLeastRecentlyUsedAndNeverPinned) {
  PathCache cache;
  TimePoint t{1s};
  auto a = cache.insert(key_of(1), t);
  auto b = cache.insert(key_of(2), t + 1s);
  auto c = cache.insert(key_of(3), t + 2s);
  EXPECT_EQ(cache.lru_victim(), a);
  cache.touch(a, t + 3s);
  EXPECT_EQ(cache.lru_victim(), b);
  cache.at(b).flags |= CacheEntry::kPinned;
  EXPECT_EQ(cache.lru_victim(), c);
  cache.at(c).flags |= CacheEntry::kPinned;
  cache.at(a).flags |= CacheEntry::kPinned;
  EXPECT_EQ(cache.lru_victim(), PathCache::npos);
}

TEST(PathCache, EachOwnersEntriesAreCountedThroughInsertTouchAndErase) {
  PathCache cache;
  TimePoint t{1s};
  const PathCache::Index a = cache.insert(key_of(1), t, 1000);
  cache.insert(key_of(2), t, 1000);
  cache.insert_least_recent(key_of(3), t);  // a table's: no owner
  EXPECT_EQ(cache.held_by(1000), 2u);
  EXPECT_EQ(cache.held_by(kNoOwner), 1u);
  EXPECT_EQ(cache.owners(), 2u);
  cache.touch(a, t, 1001);  // used by another: it is that one's now
  EXPECT_EQ(cache.at(a).owner, 1001u);
  EXPECT_EQ(cache.held_by(1000), 1u);
  EXPECT_EQ(cache.held_by(1001), 1u);
  EXPECT_EQ(cache.owners(), 3u);
  cache.erase(a);
  cache.erase(cache.find(key_of(3)));
  EXPECT_EQ(cache.held_by(1001), 0u);
  EXPECT_EQ(cache.owners(), 1u);  // no owner left behind with nothing held
}

TEST(PathCache, PassOverMovesAnEntryToTheRecentEndAndLeavesItUnused) {
  PathCache cache;
  const PathCache::Index oldest = cache.insert(key_of(1), TimePoint{1s});
  cache.insert(key_of(2), TimePoint{2s});
  ASSERT_EQ(cache.lru_victim(), oldest);
  cache.pass_over(oldest);
  EXPECT_EQ(cache.lru_victim(), cache.find(key_of(2)));
  EXPECT_EQ(cache.at(oldest).used, TimePoint{1s});
  EXPECT_FALSE(cache.at(oldest).flags & CacheEntry::kUsed);
}

TEST(PathCache, LidIndexFindsTheLatestEntryForADlid) {
  PathCache cache;
  auto a = cache.insert(key_of(1), TimePoint{});
  auto b = cache.insert(key_of(2), TimePoint{});
  const Gid sgid = key_of(1).sgid;
  cache.at(a).path.dlid = Lid{5};
  cache.index_lid(a);
  EXPECT_EQ(cache.find_by_lid(sgid, Lid{5}, Pkey{0xFFFF}), a);
  EXPECT_EQ(cache.find_by_lid(sgid, Lid{5}, Pkey{0x7FFF}), PathCache::npos);
  // The fabric renumbered: LID 5 now belongs to b; a is no longer found by it.
  cache.at(b).path.dlid = Lid{5};
  cache.index_lid(b);
  EXPECT_EQ(cache.find_by_lid(sgid, Lid{5}, Pkey{0xFFFF}), b);
  cache.unindex_lid(a);  // no effect: a was already replaced
  EXPECT_EQ(cache.find_by_lid(sgid, Lid{5}, Pkey{0xFFFF}), b);
  cache.erase(b);
  EXPECT_EQ(cache.find_by_lid(sgid, Lid{5}, Pkey{0xFFFF}), PathCache::npos);
  // Many entries: each is found by its own LID after churn.
  for (std::uint64_t n = 10; n < 3000; ++n) {
    auto i = cache.insert(key_of(n), TimePoint{});
    cache.at(i).path.dlid = Lid{static_cast<std::uint16_t>(n)};
    cache.index_lid(i);
  }
  for (std::uint64_t n = 10; n < 3000; n += 2) cache.erase(cache.find(key_of(n)));
  for (std::uint64_t n = 11; n < 3000; n += 2) {
    auto i = cache.find_by_lid(sgid, Lid{static_cast<std::uint16_t>(n)}, Pkey{0xFFFF});
    ASSERT_NE(i, PathCache::npos);
    EXPECT_EQ(cache.at(i).key, key_of(n));
  }
}

TEST(PathCache, CompactPathRoundTripsEveryField) {
  PathRecord p;
  p.service_id = 0x0123'4567'89AB'CDEFULL;
  p.dgid = Gid::from_parts(1, 2);
  p.sgid = Gid::from_parts(3, 4);
  p.pkey = Pkey{0x8001};
  p.dlid = Lid{0xBFFF};
  p.slid = Lid{7};
  p.raw_traffic = true;
  p.flow_label = 0xFFFFF;
  p.hop_limit = 255;
  p.tclass = 0xAB;
  p.reversible = true;
  p.numb_path = 127;
  p.qos_class = 0xFFF;
  p.sl = 15;
  p.mtu_selector = 3;
  p.mtu = 5;
  p.rate_selector = 1;
  p.rate = 22;
  p.pkt_life_selector = 2;
  p.pkt_life = 63;
  p.preference = 9;
  // The ServiceID and QoS class come from the key: what was asked.
  const QosKey qos = QosKey::of(p.service_id, p.qos_class, {{0, UINT64_MAX}}, {{0, 0xFFF}});
  PathKey key{p.sgid, p.dgid, p.pkey, qos};
  EXPECT_EQ(CompactPath::pack(p).unpack(key), p);
}

TEST(PathCache, PathsKeptApartForAServiceIdAreFoundApartAndNeverByLid) {
  PathCache cache;
  PathKey plain = key_of(1);
  PathKey iser = plain;
  iser.qos = QosKey::of(0x1060CBC, std::nullopt, standard_ulp_service_ids(), {});
  ASSERT_FALSE(iser.qos.is_default());
  const auto i = cache.insert(plain, TimePoint{});
  const auto j = cache.insert(iser, TimePoint{});
  EXPECT_NE(i, j);
  EXPECT_EQ(cache.find(plain), i);
  EXPECT_EQ(cache.find(iser), j);
  cache.at(i).path.dlid = Lid{9};
  cache.at(j).path.dlid = Lid{9};
  cache.index_lid(j);  // only a default path is found by its DLID
  EXPECT_EQ(cache.find_by_lid(plain.sgid, Lid{9}, plain.pkey), PathCache::npos);
  cache.index_lid(i);
  EXPECT_EQ(cache.find_by_lid(plain.sgid, Lid{9}, plain.pkey), i);
  cache.erase(i);
  EXPECT_EQ(cache.find(iser), j);
}

TEST(PathCache, EntryIsCompact) {
  EXPECT_LE(sizeof(CacheEntry), 104u);
  PathCache cache;
  for (std::uint64_t n = 0; n < 100'000; ++n) {
    auto i = cache.insert(key_of(n), TimePoint{});
    cache.at(i).path.dlid = Lid{static_cast<std::uint16_t>(1 + n % 0xBFFE)};
    cache.index_lid(i);
  }
  EXPECT_LE(cache.memory_bytes() / cache.size(), 160u);
}

}  // namespace
}  // namespace ibat::core

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TablePublisher: the shared table holds exactly the paths the Resolvers store as valid, until
// their TTL ends; a path that moves is replaced, one that is lost is unpublished, and a republish
// keeps only what is still valid. Paths of several source GIDs (ports) live side by side.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/daemon/table_publisher.h"
#include "shm/path_table_reader.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;

const core::Gid kLocal = core::Gid::from_parts(0xfe80000000000000ull, 1);
core::Gid dest(std::uint64_t n) { return core::Gid::from_parts(0xfe80000000000000ull, 0x100 + n); }

core::PathRecord path_to(std::uint64_t n) {
  core::PathRecord p;
  p.sgid = kLocal;
  p.dgid = dest(n);
  p.dlid = core::Lid{static_cast<std::uint16_t>(10 + n)};
  p.slid = core::Lid{1};
  p.mtu = 4;
  p.rate = 3;
  return p;
}

struct TablePublisherTest : ::testing::Test {
  static constexpr std::uint32_t kSlots = 64;
  std::vector<std::uint64_t> memory = std::vector<std::uint64_t>(shm::table_bytes(kSlots) / 8);
  shm::PathTableWriter writer{memory.data(), kSlots};
  shm::PathTableReader reader = [this] {
    std::string error;
    return *shm::PathTableReader::open(memory.data(), shm::table_bytes(kSlots), error);
  }();
  TablePublisher publisher;
  core::TimePoint now{core::Duration{5s}};
  core::Duration ttl = 60s;

  void SetUp() override { publisher.attach(&writer); }
  std::optional<shm::TableHit> find(std::uint64_t n) {
    return reader.lookup(shm::TableKey::of(kLocal, dest(n), core::Pkey{}));
  }
  void store(std::uint64_t n, core::TimePoint produced, const core::Gid& sgid = kLocal) {
    publisher.on_stored(core::PathStored{sgid, dest(n), core::Pkey{}, path_to(n), produced}, ttl);
  }
  void change(std::uint64_t n, core::EntryState state) {
    publisher.on_change(core::PathChange{kLocal, dest(n), core::Pkey{}, core::EntryState::valid, state,
                                         core::Lid{static_cast<std::uint16_t>(10 + n)}, core::Lid{}});
  }
};

TEST_F(TablePublisherTest, StoredPathIsPublishedUntilItsTtlEnds) {
  store(1, now);
  ASSERT_TRUE(find(1));
  EXPECT_EQ(find(1)->path.decode(), path_to(1));
  EXPECT_EQ(find(1)->produced_ms, 5000u);
  EXPECT_EQ(publisher.next_expiry(), now + ttl);
  publisher.expire(now + ttl - 1ms);
  EXPECT_TRUE(find(1));
  publisher.expire(now + ttl);
  EXPECT_FALSE(find(1));
}

TEST_F(TablePublisherTest, RevalidationExtendsTheTtlAndALossUnpublishes) {
  store(1, now);
  store(1, now + 30s);
  publisher.expire(now + ttl);
  EXPECT_TRUE(find(1)) << "the older expiry is outdated";
  change(1, core::EntryState::valid);  // a DLID move: the new path came by on_stored
  EXPECT_TRUE(find(1));
  change(1, core::EntryState::failed);  // the SA has no path any more
  EXPECT_FALSE(find(1));
  store(2, now);
  change(2, core::EntryState::gone);  // trap 65
  EXPECT_FALSE(find(2));
}

TEST_F(TablePublisherTest, PathsOfTwoPortsAreKeyedApart) {
  const core::Gid other = core::Gid::from_parts(0xfe80000000000001ull, 9);
  store(1, now);
  store(1, now, other);
  EXPECT_EQ(publisher.published(), 2u);
  change(1, core::EntryState::failed);  // kLocal's
  EXPECT_FALSE(find(1));
  EXPECT_TRUE(reader.lookup(shm::TableKey::of(other, dest(1), core::Pkey{})));
}

TEST_F(TablePublisherTest, ExpiriesFollowThePathsIntoALargerTable) {
  // The larger table puts the paths in other slots: each still ends at its own TTL there.
  constexpr std::uint32_t kLarger = 4 * kSlots;
  std::vector<std::uint64_t> larger_memory(shm::table_bytes(kLarger) / 8);
  shm::PathTableWriter larger{larger_memory.data(), kLarger, writer.generation() + 1};
  int grown = 0;
  publisher.attach(&writer, [&] {
    if (grown++ == 0) writer.copy_into(larger);
    return &larger;
  });
  constexpr std::uint64_t kPaths = kSlots / shm::kSlotsPerKey + 8;  // past what kSlots hold
  for (std::uint64_t n = 0; n < kPaths; ++n) store(n, now + std::chrono::seconds(n));
  ASSERT_EQ(grown, 1);
  std::string error;
  const shm::PathTableReader larger_reader = *shm::PathTableReader::open(larger_memory.data(), shm::table_bytes(kLarger), error);
  auto in_larger = [&](std::uint64_t n) { return larger_reader.lookup(shm::TableKey::of(kLocal, dest(n), core::Pkey{})).has_value(); };
  for (std::uint64_t n = 0; n < kPaths; ++n) ASSERT_TRUE(in_larger(n)) << n;
  EXPECT_EQ(publisher.next_expiry(), now + ttl);
  publisher.expire(now + ttl + 9s);
  for (std::uint64_t n = 0; n < kPaths; ++n) EXPECT_EQ(in_larger(n), n > 9) << n;
  EXPECT_EQ(publisher.published(), kPaths - 10);
  EXPECT_EQ(publisher.next_expiry(), now + ttl + 10s);
}

TEST_F(TablePublisherTest, ExpiriesFollowThePathsIntoASmallerTable) {
  for (std::uint64_t n = 0; n < 8; ++n) store(n, now + std::chrono::seconds(n));
  constexpr std::uint32_t kSmaller = kSlots / 4;
  std::vector<std::uint64_t> smaller_memory(shm::table_bytes(kSmaller) / 8);
  shm::PathTableWriter smaller{smaller_memory.data(), kSmaller, writer.generation() + 1};
  writer.copy_into(smaller);
  writer.mark_moved();
  publisher.follow(&smaller);
  std::string error;
  const shm::PathTableReader smaller_reader =
      *shm::PathTableReader::open(smaller_memory.data(), shm::table_bytes(kSmaller), error);
  auto in_smaller = [&](std::uint64_t n) {
    return smaller_reader.lookup(shm::TableKey::of(kLocal, dest(n), core::Pkey{})).has_value();
  };
  EXPECT_EQ(publisher.published(), 8u);
  EXPECT_EQ(publisher.next_expiry(), now + ttl);
  publisher.expire(now + ttl + 2s);
  for (std::uint64_t n = 0; n < 8; ++n) EXPECT_EQ(in_smaller(n), n > 2) << n;
  EXPECT_EQ(publisher.published(), 5u);
  EXPECT_EQ(publisher.next_expiry(), now + ttl + 3s);
  store(9, now);
  EXPECT_TRUE(in_smaller(9)) << "published into the table it follows";
}

TEST_F(TablePublisherTest, NothingIsPublishedWhileDetached) {
  publisher.attach(nullptr);
  store(1, now);
  change(1, core::EntryState::failed);
  EXPECT_EQ(publisher.published(), 0u);
  EXPECT_FALSE(publisher.next_expiry());
}

TEST_F(TablePublisherTest, RepublishKeepsOnlyWhatIsStillValid) {
  store(1, now);
  std::vector<core::CacheEntryView> entries;
  auto view = [](std::uint64_t n, core::EntryState state, core::Duration age) {
    return core::CacheEntryView{kLocal, dest(n), core::Pkey{}, {}, state, path_to(n), age, 0s, core::Error::ok};
  };
  entries.push_back(view(2, core::EntryState::valid, 10s));
  entries.push_back(view(3, core::EntryState::stale, 1s));
  entries.push_back(view(4, core::EntryState::provisional, 1s));
  entries.push_back(view(5, core::EntryState::valid, 60s));  // at its TTL: stale when served
  publisher.clear();
  publisher.publish_valid(entries, now, ttl);
  EXPECT_FALSE(find(1)) << "not among the entries any more";
  ASSERT_TRUE(find(2));
  EXPECT_EQ(publisher.next_expiry(), now + 50s);
  EXPECT_FALSE(find(3));
  EXPECT_FALSE(find(4));
  EXPECT_FALSE(find(5));
  EXPECT_EQ(publisher.published(), 1u);
}

}  // namespace
}  // namespace ibat::server

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Single-threaded behaviour of the shared path table: what the writer publishes is what the
// reader finds, removals and generation bumps hide entries at once, unservable records are never
// answered, and a header that does not describe a table of this version is refused with a reason.
#include <gtest/gtest.h>

#include <cstring>

#include "shm/path_table_reader.h"
#include "shm/path_table_writer.h"
#include "table_test_support.h"

namespace ibat::shm {
namespace {

using test::key_of;
using test::path_of;
using test::table_memory;

struct Table {
  explicit Table(std::uint32_t slots = 64) : memory(table_memory(slots)), writer(memory.data(), slots) {
    std::string error;
    auto r = PathTableReader::open(memory.data(), table_bytes(slots), error);
    EXPECT_TRUE(r) << error;
    reader.emplace(*r);
  }
  std::vector<std::uint64_t> memory;
  PathTableWriter writer;
  std::optional<PathTableReader> reader;
};

TEST(PathTable, PublishedPathIsFoundWithEveryField) {
  Table t;
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 9), 5));
  auto hit = t.reader->lookup(key_of(1));
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->path.decode(), path_of(1, 9));
  EXPECT_EQ(hit->generation, t.writer.generation());
  EXPECT_EQ(hit->produced_ms, 5u);
  EXPECT_EQ(t.writer.key_at(hit->slot, hit->generation), key_of(1));
  EXPECT_FALSE(t.reader->lookup(key_of(2)));
}

TEST(PathTable, RequestsWithoutSgidOrPkeyUseThePublishedDefaults) {
  Table t;
  const core::Gid dgid = test::gid_of(7);
  EXPECT_EQ(t.reader->key_for(dgid, nullptr, nullptr), TableKey::of(core::Gid{}, dgid, core::Pkey{0xFFFF}));
  t.writer.set_defaults(test::gid_of(0), core::Pkey{0x8001});
  EXPECT_EQ(t.reader->key_for(dgid, nullptr, nullptr), TableKey::of(test::gid_of(0), dgid, core::Pkey{0x8001}));
  const core::Gid sgid = test::gid_of(3);
  const core::Pkey pkey{0x7fff};
  EXPECT_EQ(t.reader->key_for(dgid, &sgid, &pkey), TableKey::of(sgid, dgid, pkey));
}

TEST(PathTable, ChangedDefaultsStartANewGeneration) {
  Table t;
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 1), 5));
  const std::uint64_t before = t.writer.generation();
  t.writer.set_defaults(core::Gid{}, core::Pkey{0xFFFF});  // what a new table holds: no change
  EXPECT_EQ(t.writer.generation(), before);
  EXPECT_TRUE(t.reader->lookup(key_of(1)));
  t.writer.set_defaults(test::gid_of(0), core::Pkey{0xFFFF});
  EXPECT_GT(t.writer.generation(), before) << "readers may keep the defaults while the generation stays";
  EXPECT_EQ(t.reader->defaults().generation, t.writer.generation());
  EXPECT_FALSE(t.reader->lookup(key_of(1)));
  t.writer.set_defaults(test::gid_of(0), core::Pkey{0x8001});
  EXPECT_EQ(t.reader->defaults().pkey, 0x8001);
  EXPECT_EQ(t.reader->defaults().generation, t.writer.generation());
}

TEST(PathTable, PkeyIsPartOfTheKey) {
  Table t;
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 1), 5));
  TableKey other = key_of(1);
  other.pkey = 0x8001;
  EXPECT_FALSE(t.reader->lookup(other));
}

TEST(PathTable, ReplaceAndRemove) {
  Table t;
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 1), 5));
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 2), 5));
  EXPECT_EQ(t.writer.size(), 1u);
  EXPECT_EQ(t.reader->lookup(key_of(1))->path.decode(), path_of(1, 2));
  EXPECT_TRUE(t.writer.remove(key_of(1)));
  EXPECT_FALSE(t.reader->lookup(key_of(1)));
  EXPECT_FALSE(t.writer.remove(key_of(1)));
}

TEST(PathTable, KeysBehindARemovedOneInTheSameWindowAreStillFound) {
  Table t(16);  // every key shares the one 16-slot window
  for (std::uint32_t n = 0; n < 16; ++n) ASSERT_TRUE(t.writer.publish(key_of(n), path_of(n, 1), 5));
  EXPECT_FALSE(t.writer.publish(key_of(16), path_of(16, 1), 5)) << "window full: stays unpublished";
  EXPECT_FALSE(t.reader->lookup(key_of(16)));
  for (std::uint32_t n = 0; n < 16; n += 2) ASSERT_TRUE(t.writer.remove(key_of(n)));
  for (std::uint32_t n = 1; n < 16; n += 2) EXPECT_EQ(t.reader->lookup(key_of(n))->path.decode(), path_of(n, 1));
  EXPECT_TRUE(t.writer.publish(key_of(16), path_of(16, 1), 5));
  EXPECT_EQ(t.reader->lookup(key_of(16))->path.decode(), path_of(16, 1));
}

TEST(PathTable, ClearHidesEverythingAtOnce) {
  Table t;
  for (std::uint32_t n = 0; n < 20; ++n) ASSERT_TRUE(t.writer.publish(key_of(n), path_of(n, 1), 5));
  const std::uint64_t before = t.writer.generation();
  t.writer.clear();
  EXPECT_GT(t.writer.generation(), before);
  EXPECT_EQ(t.writer.size(), 0u);
  for (std::uint32_t n = 0; n < 20; ++n) EXPECT_FALSE(t.reader->lookup(key_of(n))) << n;
  EXPECT_FALSE(t.writer.key_at(0, before));
  ASSERT_TRUE(t.writer.publish(key_of(3), path_of(3, 2), 5));
  EXPECT_EQ(t.reader->lookup(key_of(3))->path.decode(), path_of(3, 2));
  EXPECT_FALSE(t.reader->lookup(key_of(4)));
}

TEST(PathTable, UnservablePathsAreNeitherPublishedNorAnswered) {
  Table t;
  core::PathRecord zero_dlid = path_of(1, 1);
  zero_dlid.dlid = core::Lid{0};
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 1), 5));
  EXPECT_FALSE(t.writer.publish(key_of(1), zero_dlid, 5));
  EXPECT_FALSE(t.reader->lookup(key_of(1))) << "a refused update unpublishes the key";

  // A record whose DLID is 0 in memory (a corrupt table) is a miss, not a path with DLID 0.
  ASSERT_TRUE(t.writer.publish(key_of(2), path_of(2, 1), 5));
  auto hit = t.reader->lookup(key_of(2));
  ASSERT_TRUE(hit);
  auto* slots = reinterpret_cast<TableSlot*>(reinterpret_cast<std::byte*>(t.memory.data()) + sizeof(TableHeader));
  const std::uint64_t record_dlid_word = slots[hit->slot].record[5].load();  // bytes 40-47: DLID first
  slots[hit->slot].record[5].store(record_dlid_word & ~0xFFFFULL);
  EXPECT_FALSE(t.reader->lookup(key_of(2))) << "DLID 0 in the wire record";
  slots[hit->slot].record[5].store(record_dlid_word);
  ASSERT_TRUE(t.reader->lookup(key_of(2)));
  slots[hit->slot].fields[0].store(slots[hit->slot].fields[0].load() & ~0xFFFFULL);  // PathFields::dlid
  EXPECT_FALSE(t.reader->lookup(key_of(2))) << "DLID 0 in the fields";
}

TEST(PathTable, SlotBeingWrittenIsAMiss) {
  Table t;
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 1), 5));
  auto hit = t.reader->lookup(key_of(1));
  ASSERT_TRUE(hit);
  auto* slots = reinterpret_cast<TableSlot*>(reinterpret_cast<std::byte*>(t.memory.data()) + sizeof(TableHeader));
  slots[hit->slot].seq.fetch_add(1);  // as if the writer stopped half-way
  EXPECT_FALSE(t.reader->lookup(key_of(1)));
}

TEST(PathTable, ASlotKeepsItsExpiryAndIsRemovedByItOnlyWhileItHoldsIt) {
  Table t;
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 1), 5, 70));
  const std::optional<std::uint32_t> slot = t.writer.slot_of(key_of(1));
  ASSERT_TRUE(slot);
  EXPECT_EQ(t.writer.expiry_in(*slot), 70u);
  ASSERT_TRUE(t.writer.publish(key_of(1), path_of(1, 2), 6, 80));  // published again: a later expiry
  EXPECT_EQ(t.writer.slot_of(key_of(1)), slot);
  EXPECT_FALSE(t.writer.remove_if_expiry(*slot, 70)) << "an outdated expiry";
  ASSERT_TRUE(t.reader->lookup(key_of(1)));
  EXPECT_TRUE(t.writer.remove_if_expiry(*slot, 80));
  EXPECT_FALSE(t.reader->lookup(key_of(1)));
  EXPECT_EQ(t.writer.size(), 0u);
  EXPECT_FALSE(t.writer.expiry_in(*slot));
  EXPECT_FALSE(t.writer.remove_if_expiry(*slot, 80)) << "nothing there any more";
  ASSERT_TRUE(t.writer.publish(key_of(2), path_of(2, 1), 5, 90));
  const std::uint32_t slot2 = t.writer.slot_of(key_of(2)).value();
  t.writer.clear();
  EXPECT_FALSE(t.writer.expiry_in(slot2)) << "a slot of an earlier generation holds nothing";
  EXPECT_FALSE(t.writer.remove_if_expiry(slot2, 90));
}

TEST(PathTable, ANewKeyPastHalfTheSlotsOrWithAFullWindowWantsALargerTable) {
  Table t(16);
  for (std::uint32_t n = 0; n < 8; ++n) {
    EXPECT_FALSE(t.writer.wants_larger_table_for(key_of(n))) << n;
    ASSERT_TRUE(t.writer.publish(key_of(n), path_of(n, 1), 5));
  }
  EXPECT_TRUE(t.writer.wants_larger_table_for(key_of(8))) << "a 9th key in 16 slots";
  EXPECT_FALSE(t.writer.wants_larger_table_for(key_of(3))) << "a key already published takes no room";
  ASSERT_TRUE(t.writer.remove(key_of(0)));
  EXPECT_FALSE(t.writer.wants_larger_table_for(key_of(8)));
}

TEST(PathTable, ALargerTableGetsEveryPathAndTheDefaultsAndTheOldOneIsMarkedMoved) {
  Table small(16);
  small.writer.set_defaults(test::gid_of(0), core::Pkey{0x8001});
  for (std::uint32_t n = 0; n < 8; ++n) ASSERT_TRUE(small.writer.publish(key_of(n), path_of(n, 3), 100 + n, 900 + n));
  auto memory = table_memory(64);
  PathTableWriter larger(memory.data(), 64, small.writer.generation() + 1);
  small.writer.copy_into(larger);
  EXPECT_EQ(larger.size(), 8u);
  std::string error;
  auto reader = PathTableReader::open(memory.data(), table_bytes(64), error);
  ASSERT_TRUE(reader) << error;
  EXPECT_FALSE(reader->moved());
  EXPECT_EQ(reader->defaults().pkey, 0x8001);
  EXPECT_EQ(reader->key_for(test::gid_of(9), nullptr, nullptr), TableKey::of(test::gid_of(0), test::gid_of(9), core::Pkey{0x8001}));
  for (std::uint32_t n = 0; n < 8; ++n) {
    auto hit = reader->lookup(key_of(n));
    ASSERT_TRUE(hit) << n;
    EXPECT_EQ(hit->path.decode(), path_of(n, 3));
    EXPECT_EQ(hit->produced_ms, 100u + n);
    EXPECT_EQ(larger.key_at(hit->slot, hit->generation), key_of(n));
    EXPECT_EQ(larger.expiry_in(hit->slot), 900u + n) << "the writer's own word goes along";
  }
  const std::uint64_t before = small.reader->generation();
  EXPECT_FALSE(small.reader->moved());
  small.writer.mark_moved();
  EXPECT_TRUE(small.reader->moved());
  EXPECT_NE(small.reader->generation(), before) << "readers learn of the move by the generation";
  for (std::uint32_t n = 0; n < 8; ++n) EXPECT_FALSE(small.reader->lookup(key_of(n))) << n;
}

std::string open_error(const void* memory, std::size_t size) {
  std::string error;
  EXPECT_FALSE(PathTableReader::open(memory, size, error));
  return error;
}

TEST(PathTable, OpenRefusesWhatIsNotATableOfThisVersion) {
  auto memory = table_memory(64);
  PathTableWriter writer(memory.data(), 64);
  auto* header = reinterpret_cast<TableHeader*>(memory.data());
  EXPECT_NE(open_error(memory.data(), 10).find("shorter than its header"), std::string::npos);
  EXPECT_NE(open_error(memory.data(), table_bytes(64) - 1).find("needs"), std::string::npos);
  EXPECT_NE(open_error(reinterpret_cast<std::byte*>(memory.data()) + 4, table_bytes(64)).find("aligned"),
            std::string::npos);

  header->slot_count = 48;
  EXPECT_NE(open_error(memory.data(), table_bytes(64)).find("power of two"), std::string::npos);
  header->slot_count = 1U << 30;
  EXPECT_NE(open_error(memory.data(), table_bytes(64)).find("power of two"), std::string::npos);
  header->slot_count = 64;
  header->version = 1;  // the layout before slots held the finished path
  EXPECT_NE(open_error(memory.data(), table_bytes(64)).find("version 1"), std::string::npos);
  header->version = 3;  // the layout before tables grew: its readers never look at `moved`
  EXPECT_NE(open_error(memory.data(), table_bytes(64)).find("version 3"), std::string::npos);
  header->version = kVersion;
  header->slot_size = 64;
  EXPECT_NE(open_error(memory.data(), table_bytes(64)).find("is not version"), std::string::npos);
  header->slot_size = sizeof(TableSlot);
  header->magic ^= 1;
  EXPECT_NE(open_error(memory.data(), table_bytes(64)).find("bad magic"), std::string::npos);
  header->magic ^= 1;
  std::string error;
  EXPECT_TRUE(PathTableReader::open(memory.data(), table_bytes(64), error)) << error;
}

}  // namespace
}  // namespace ibat::shm

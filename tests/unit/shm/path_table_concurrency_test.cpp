// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The shared path table under concurrency (run under ThreadSanitizer by the `tsan` preset): one
// writer thread publishes, replaces, removes and clears while reader threads look up. Every answer
// must be a record the writer really wrote for that key (all fields match the version it names),
// no older than a removal or clear that finished before the lookup began, and no newer than the
// writer has published. The second test does the same while the writer also grows the table's file
// (a larger file renamed over the path, the old one marked moved) and shrinks it (a smaller one, the
// same way: after a clear, as ibatd does after a republish, and now and then with paths in it), and
// the readers follow it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include <unistd.h>

#include "shm/path_table_reader.h"
#include "shm/path_table_writer.h"
#include "shm/table_file.h"
#include "table_test_support.h"

namespace ibat::shm {
namespace {

using test::key_of;
using test::path_of;

constexpr std::uint32_t kKeys = 48;
constexpr std::uint32_t kSlots = 64;  // dense: long probe chains, many reused slots
constexpr int kWriterOps = 60'000;
constexpr int kReaders = 2;

struct Shared {
  std::atomic<std::uint64_t> published[kKeys]{};  // highest version published per key
  std::atomic<std::uint64_t> floor[kKeys]{};      // versions <= this were removed or cleared
  std::atomic<bool> done{false};
};

// Checks one lookup; returns whether it hit. `floor_before` was loaded before the lookup began.
bool check_lookup(const PathTableReader& reader, const Shared& shared, std::uint32_t n, std::uint64_t floor_before) {
  auto hit = reader.lookup(key_of(n));
  if (!hit) return false;
  const core::PathRecord path = hit->path.decode();
  const std::uint64_t version = path.service_id >> 20;
  EXPECT_EQ(path.service_id & 0xFFFFF, n);
  const SlotPath expected = make_slot_path(path_of(n, version));
  EXPECT_EQ(std::memcmp(&hit->path, &expected, sizeof expected), 0) << "torn or invented record for key " << n;
  EXPECT_GT(version, floor_before) << "served after its removal or clear";
  EXPECT_LE(version, shared.published[n].load(std::memory_order_acquire)) << "never published";
  EXPECT_NE(path.dlid.value, 0);
  return true;
}

TEST(PathTableConcurrency, ReadersSeeOnlyRecordsTheWriterWrote) {
  auto memory = test::table_memory(kSlots);
  PathTableWriter writer(memory.data(), kSlots);
  std::string error;
  auto reader = PathTableReader::open(memory.data(), table_bytes(kSlots), error);
  ASSERT_TRUE(reader) << error;
  Shared shared;

  std::thread writer_thread([&] {
    std::minstd_rand rng(12);
    std::uint64_t version = 0;
    for (int op = 0; op < kWriterOps; ++op) {
      const std::uint32_t n = static_cast<std::uint32_t>(rng() % kKeys);
      const auto what = rng() % 100;
      if (what < 80) {
        ++version;
        shared.published[n].store(version, std::memory_order_release);
        writer.publish(key_of(n), path_of(n, version), version);
      } else if (what < 99) {
        writer.remove(key_of(n));
        shared.floor[n].store(version, std::memory_order_release);
      } else {
        writer.clear();
        for (auto& f : shared.floor) f.store(version, std::memory_order_release);
      }
    }
    shared.done.store(true, std::memory_order_release);
  });

  std::atomic<std::uint64_t> hits{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      std::uint32_t n = static_cast<std::uint32_t>(r);
      std::uint64_t local = 0;
      while (!shared.done.load(std::memory_order_acquire)) {
        n = (n + 7) % kKeys;
        const std::uint64_t floor_before = shared.floor[n].load(std::memory_order_acquire);
        local += check_lookup(*reader, shared, n, floor_before);
      }
      hits += local;
    });
  }
  writer_thread.join();
  for (auto& t : readers) t.join();

  // Quiescent: exactly what the writer holds is found, at its last version.
  std::uint32_t found = 0;
  for (std::uint32_t n = 0; n < kKeys; ++n) {
    auto hit = reader->lookup(key_of(n));
    ASSERT_EQ(hit.has_value(), writer.contains(key_of(n))) << n;
    if (!hit) continue;
    ++found;
    EXPECT_EQ(hit->path.decode(), path_of(n, shared.published[n].load()));
  }
  EXPECT_EQ(found, writer.size());
  RecordProperty("concurrent_hits", std::to_string(hits.load()));
}

// A reader as libibat is one: it maps the file and, when the generation changes and the table is
// marked moved, maps the path again.
struct FollowingReader {
  std::string path;
  MappedTable table;
  std::uint64_t generation = 0;
  int follows = 0;

  static MappedTable map(const std::string& path) {
    for (;;) {
      std::string error;
      auto table = open_table_file(path, ::geteuid(), error);
      EXPECT_TRUE(table) << error;
      if (!table->reader.moved()) return std::move(*table);
    }
  }
  explicit FollowingReader(std::string p) : path(std::move(p)), table(map(path)) {}
  const PathTableReader& reader() {
    const std::uint64_t now = table.reader.generation();
    if (now != generation) {
      generation = now;
      if (table.reader.moved()) {
        table = map(path);
        generation = table.reader.generation();
        ++follows;
      }
    }
    return table.reader;
  }
};

TEST(PathTableConcurrency, ReadersFollowTheTableAsItGrowsAndShrinksAndSeeOnlyRecordsTheWriterWrote) {
  constexpr int kGrowEvery = kWriterOps / 10;  // besides the growths the load asks for
  constexpr std::uint32_t kLargest = 1U << 16;
  char dir[] = "/tmp/ibat-table-grow.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/table";
  std::string error;
  auto file = TableFile::create(path, kMinSlots, kLargest, error);
  ASSERT_TRUE(file) << error;
  FollowingReader first(path);  // maps the first table; read again only once the writer is done
  Shared shared;
  int grows = 0;
  int shrinks = 0;

  std::thread writer_thread([&] {
    std::minstd_rand rng(13);
    std::uint64_t version = 0;
    std::string grow_error;
    for (int op = 0; op < kWriterOps; ++op) {
      const std::uint32_t n = static_cast<std::uint32_t>(rng() % kKeys);
      const auto what = rng() % 100;
      if (op % kGrowEvery == kGrowEvery - 1) grows += file->grow(grow_error);
      if (op % kGrowEvery == kGrowEvery / 2) shrinks += file->shrink(grow_error);  // with what it holds
      if (what < 80) {
        ++version;
        shared.published[n].store(version, std::memory_order_release);
        if (file->writer().wants_larger_table_for(key_of(n))) file->grow(grow_error);
        file->writer().publish(key_of(n), path_of(n, version), version);
      } else if (what < 99) {
        file->writer().remove(key_of(n));
        shared.floor[n].store(version, std::memory_order_release);
      } else {
        file->writer().clear();
        for (auto& f : shared.floor) f.store(version, std::memory_order_release);
        shrinks += file->shrink(grow_error);
      }
    }
    shared.done.store(true, std::memory_order_release);
  });

  std::atomic<std::uint64_t> hits{0};
  std::atomic<int> follows{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.emplace_back([&, r] {
      FollowingReader following(path);
      std::uint32_t n = static_cast<std::uint32_t>(r);
      std::uint64_t local = 0;
      while (!shared.done.load(std::memory_order_acquire)) {
        n = (n + 7) % kKeys;
        const std::uint64_t floor_before = shared.floor[n].load(std::memory_order_acquire);
        local += check_lookup(following.reader(), shared, n, floor_before);
      }
      hits += local;
      follows += following.follows;
    });
  }
  writer_thread.join();
  for (auto& t : readers) t.join();

  // Quiescent: a reader that mapped the first table follows every move to the last table and finds
  // exactly what the writer holds, at its last version.
  EXPECT_GT(grows, 0) << "the writer grew the table";
  EXPECT_GT(shrinks, 0) << "the writer shrank the table";
  EXPECT_GT(follows.load(), 0);
  const PathTableReader& reader = first.reader();
  EXPECT_EQ(reader.slot_count(), file->writer().slot_count());
  std::uint32_t found = 0;
  for (std::uint32_t n = 0; n < kKeys; ++n) {
    auto hit = reader.lookup(key_of(n));
    ASSERT_EQ(hit.has_value(), file->writer().contains(key_of(n))) << n;
    if (!hit) continue;
    ++found;
    EXPECT_EQ(hit->path.decode(), path_of(n, shared.published[n].load()));
  }
  EXPECT_EQ(found, file->writer().size());
  RecordProperty("concurrent_hits", std::to_string(hits.load()));
  file.reset();
  ::rmdir(dir);
}

}  // namespace
}  // namespace ibat::shm

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The shared table's file: created sparse (a table of a million slots uses a few pages until
// paths are published), grown by a larger file renamed over the path while a reader of the old one
// learns of it (moved, a new generation) and finds every path in the new one, the old file's slot
// pages freed, and not grown past its largest size; moved the same way to a smaller file once most
// paths went.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "shm/table_file.h"
#include "table_test_support.h"

namespace ibat::shm {
namespace {

using test::key_of;
using test::path_of;

struct TableFileTest : ::testing::Test {
  std::string dir;
  std::string path;
  void SetUp() override {
    char name[] = "/tmp/ibat-table-file.XXXXXX";
    ASSERT_NE(::mkdtemp(name), nullptr);
    dir = name;
    path = dir + "/ibatd.sock.table";
  }
  void TearDown() override {
    ::unlink(path.c_str());
    ::rmdir(dir.c_str());
  }
  // Bytes of the file's pages in use (st_blocks counts 512-byte units).
  std::size_t used_bytes() const {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0);
    return static_cast<std::size_t>(st.st_blocks) * 512;
  }
  MappedTable map() const {
    std::string error;
    auto table = open_table_file(path, ::geteuid(), error);
    EXPECT_TRUE(table) << error;
    return std::move(*table);
  }
  // After a move (grow or shrink): `old`'s reader learns of it and finds nothing; the file now
  // maps a table of `slots` slots with the defaults' P_Key and paths 0 to `paths` - 1
  // (path_of(n, 2)). Returns that mapping.
  MappedTable expect_moved(const MappedTable& old, std::uint32_t slots, std::uint32_t paths) const {
    EXPECT_TRUE(old.reader.moved());
    EXPECT_FALSE(old.reader.lookup(key_of(3))) << "the old table is emptied";
    MappedTable now = map();
    EXPECT_EQ(now.reader.slot_count(), slots);
    EXPECT_FALSE(now.reader.moved());
    EXPECT_EQ(now.reader.defaults().pkey, 0xFFFF);
    for (std::uint32_t n = 0; n < paths; ++n) {
      auto hit = now.reader.lookup(key_of(n));
      EXPECT_TRUE(hit) << n;
      if (hit) {
        EXPECT_EQ(hit->path.decode(), path_of(n, 2));
      }
    }
    return now;
  }
};

TEST_F(TableFileTest, ANewTableUsesOnlyThePagesOfItsHeaderAndItsPaths) {
  std::string error;
  auto file = TableFile::create(path, 1U << 20, 1U << 20, error);  // 128 MiB of slots
  ASSERT_TRUE(file) << error;
  EXPECT_LE(used_bytes(), std::size_t{64} << 10);
  for (std::uint32_t n = 0; n < 100; ++n) ASSERT_TRUE(file->writer().publish(key_of(n), path_of(n, 1), 5));
  EXPECT_LE(used_bytes(), (std::size_t{64} << 10) + 100 * std::size_t{4096}) << "at most a page per path";
}

TEST_F(TableFileTest, AReaderOfTheOldTableLearnsOfTheLargerOneAndFindsEveryPathThere) {
  std::string error;
  auto file = TableFile::create(path, 16, 64, error);
  ASSERT_TRUE(file) << error;
  file->writer().set_defaults(test::gid_of(0), core::Pkey{0xFFFF});
  for (std::uint32_t n = 0; n < 8; ++n) ASSERT_TRUE(file->writer().publish(key_of(n), path_of(n, 2), 5));
  MappedTable old = map();
  const std::uint64_t generation = old.reader.generation();
  ASSERT_TRUE(old.reader.lookup(key_of(3)));

  ASSERT_TRUE(file->grow(error)) << error;
  EXPECT_EQ(file->writer().slot_count(), 32u);
  EXPECT_EQ(file->writer().size(), 8u);
  EXPECT_NE(old.reader.generation(), generation);
  expect_moved(old, 32, 8);
  struct stat st {};
  ASSERT_EQ(::stat((path + ".new").c_str(), &st), -1) << "no temporary file left";
}

TEST_F(TableFileTest, TheOldTableGivesItsSlotsPagesBackWhenItGrows) {
  std::string error;
  auto file = TableFile::create(path, 1U << 12, 1U << 13, error);  // 512 KiB of slots
  ASSERT_TRUE(file) << error;
  for (std::uint32_t n = 0; n < 1000; ++n) ASSERT_TRUE(file->writer().publish(key_of(n), path_of(n, 1), 5));
  const int old = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);  // as a reader that still maps it
  ASSERT_GE(old, 0);
  struct stat st {};
  ASSERT_EQ(::fstat(old, &st), 0);
  EXPECT_GE(std::size_t(st.st_blocks) * 512, std::size_t{256} << 10) << "1,000 paths in 4,096 slots: most pages used";
  ASSERT_TRUE(file->grow(error)) << error;
  ASSERT_EQ(::fstat(old, &st), 0);
  EXPECT_LE(std::size_t(st.st_blocks) * 512, std::size_t{64} << 10) << "only the header's page is left";
  ::close(old);
}

TEST_F(TableFileTest, ATableMostlyEmptiedMovesToASmallerOneWithItsPathsAndItsReadersFollow) {
  std::string error;
  auto file = TableFile::create(path, 512, 512, error);
  ASSERT_TRUE(file) << error;
  file->writer().set_defaults(test::gid_of(0), core::Pkey{0xFFFF});
  for (std::uint32_t n = 0; n < 100; ++n) ASSERT_TRUE(file->writer().publish(key_of(n), path_of(n, 2), 5, 700 + n));
  EXPECT_FALSE(file->shrink(error)) << "100 paths need more than a quarter of 512 slots";
  EXPECT_TRUE(error.empty()) << error;
  for (std::uint32_t n = 8; n < 100; ++n) ASSERT_TRUE(file->writer().remove(key_of(n)));
  MappedTable old = map();
  ASSERT_TRUE(old.reader.lookup(key_of(3)));

  ASSERT_TRUE(file->shrink(error)) << error;
  EXPECT_EQ(file->writer().slot_count(), 32u) << "room for twice the 8 paths left";
  EXPECT_EQ(file->writer().size(), 8u);
  MappedTable smaller = expect_moved(old, 32, 8);
  for (std::uint32_t n = 0; n < 8; ++n) {
    auto hit = smaller.reader.lookup(key_of(n));
    ASSERT_TRUE(hit) << n;
    EXPECT_EQ(file->writer().expiry_in(hit->slot), 700u + n);
  }
  EXPECT_FALSE(smaller.reader.lookup(key_of(8)));
  EXPECT_FALSE(file->shrink(error)) << "already the size for what it holds";
  ASSERT_TRUE(file->grow(error)) << error;
  EXPECT_EQ(file->writer().slot_count(), 64u);
}

TEST_F(TableFileTest, ATableAtItsLargestDoesNotGrow) {
  std::string error;
  auto file = TableFile::create(path, 16, 32, error);
  ASSERT_TRUE(file) << error;
  ASSERT_TRUE(file->writer().publish(key_of(1), path_of(1, 1), 5));
  ASSERT_TRUE(file->grow(error)) << error;
  EXPECT_FALSE(file->grow(error));
  EXPECT_NE(error.find("largest"), std::string::npos) << error;
  EXPECT_EQ(file->writer().slot_count(), 32u);
  EXPECT_TRUE(map().reader.lookup(key_of(1)));
}

TEST_F(TableFileTest, AGrownTableIsEmptiedAndRemovedAtTheEnd) {
  std::string error;
  auto file = TableFile::create(path, 16, 64, error);
  ASSERT_TRUE(file) << error;
  ASSERT_TRUE(file->grow(error)) << error;
  ASSERT_TRUE(file->writer().publish(key_of(1), path_of(1, 1), 5));
  MappedTable table = map();
  ASSERT_TRUE(table.reader.lookup(key_of(1)));
  file.reset();
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  EXPECT_FALSE(table.reader.lookup(key_of(1))) << "a reader still mapping it finds nothing";
}

}  // namespace
}  // namespace ibat::shm

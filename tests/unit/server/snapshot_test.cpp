// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Tests of the warm-cache snapshot: round trip (only SA-derived entries kept, ages carried over
// the downtime), every way a file can be bad (each reported, nothing loaded), bounded reads, and
// the atomic write.
#include "server/daemon/snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "wire/byte_order.h"

namespace ibat::server {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

core::PathRecord servable_path(std::uint16_t dlid) {
  core::PathRecord p;
  p.sgid = core::Gid::from_parts(0xfe80000000000000ULL, 0x1);
  p.dgid = core::Gid::from_parts(0xfe80000000000000ULL, dlid);
  p.dlid = core::Lid{dlid};
  p.slid = core::Lid{1};
  p.mtu = 4;
  p.rate = 3;
  p.sl = 2;
  p.pkt_life = 18;
  p.reversible = true;
  p.numb_path = 1;
  return p;
}

core::CacheEntryView entry(std::uint16_t dlid, core::EntryState state) {
  core::CacheEntryView e;
  e.path = servable_path(dlid);
  e.sgid = e.path.sgid;
  e.dgid = e.path.dgid;
  e.pkey = e.path.pkey;
  e.state = state;
  e.age = 1500ms;
  e.idle = 200ms;
  return e;
}

const WallTime kWritten = WallTime{} + 1'700'000'000'000ms;

TEST(Snapshot, RoundTripKeepsValidAndStaleEntriesAsStale) {
  std::vector<core::CacheEntryView> in = {
      entry(5, core::EntryState::valid), entry(6, core::EntryState::stale),
      entry(7, core::EntryState::provisional), entry(8, core::EntryState::failed),
      entry(9, core::EntryState::resolving), entry(10, core::EntryState::gone)};
  in.push_back(entry(11, core::EntryState::valid));
  in.back().path.dlid = core::Lid{0};  // never persisted: not servable
  std::vector<std::uint8_t> bytes = encode_snapshot(in, kWritten);
  EXPECT_EQ(bytes.size(), kSnapshotHeaderSize + 2 * kSnapshotEntrySize + kSnapshotTrailerSize);

  SnapshotContents out = decode_snapshot(bytes, kWritten + 10s, 100);
  ASSERT_TRUE(out.ok()) << out.error;
  ASSERT_EQ(out.entries.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(out.entries[i].path, in[i].path);
    EXPECT_EQ(out.entries[i].dgid, in[i].dgid);
    EXPECT_EQ(out.entries[i].sgid, in[i].sgid);
    EXPECT_EQ(out.entries[i].pkey, in[i].pkey);
    EXPECT_EQ(out.entries[i].state, core::EntryState::stale);
    EXPECT_EQ(out.entries[i].age, 11'500ms);
    EXPECT_EQ(out.entries[i].idle, 10'200ms);
  }
}

TEST(Snapshot, ClockBeforeWriteTimeAddsNoAge) {
  std::vector<std::uint8_t> bytes = encode_snapshot({entry(5, core::EntryState::valid)}, kWritten);
  SnapshotContents out = decode_snapshot(bytes, kWritten - 1h, 100);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out.entries.at(0).age, 1500ms);
}

TEST(Snapshot, EmptyCacheIsAValidSnapshot) {
  SnapshotContents out = decode_snapshot(encode_snapshot({}, kWritten), kWritten, 100);
  EXPECT_TRUE(out.ok());
  EXPECT_TRUE(out.entries.empty());
}

class SnapshotCorruption : public ::testing::Test {
 protected:
  std::vector<std::uint8_t> bytes = encode_snapshot(
      {entry(5, core::EntryState::valid), entry(6, core::EntryState::valid)}, kWritten);
  // Rewrites the trailing CRC so only the intended defect remains.
  void reseal() {
    std::span<std::uint8_t> b(bytes);
    wire::put32(b, b.size() - 4, crc32(b.first(b.size() - 4)));
  }
  std::string error() {
    SnapshotContents out = decode_snapshot(bytes, kWritten, 100);
    EXPECT_FALSE(out.ok());
    EXPECT_TRUE(out.entries.empty());
    return out.error;
  }
};

TEST_F(SnapshotCorruption, FlippedBitFailsTheChecksum) {
  bytes[kSnapshotHeaderSize + 40] ^= 0x10;
  EXPECT_THAT(error(), HasSubstr("checksum mismatch"));
}

TEST_F(SnapshotCorruption, ForeignFileHasBadMagic) {
  bytes[0] = 'X';
  EXPECT_THAT(error(), HasSubstr("not an ibat snapshot"));
}

TEST_F(SnapshotCorruption, OtherVersionIsRefused) {
  wire::put16(bytes, 8, 2);
  reseal();
  EXPECT_THAT(error(), HasSubstr("version 2 is not supported"));
}

TEST_F(SnapshotCorruption, OtherEntrySizeIsRefused) {
  wire::put16(bytes, 10, 100);
  EXPECT_THAT(error(), HasSubstr("entry size 100"));
}

TEST_F(SnapshotCorruption, TruncatedFile) {
  bytes.resize(bytes.size() - 10);
  EXPECT_THAT(error(), HasSubstr("truncated: 2 entries need"));
  bytes.resize(10);
  EXPECT_THAT(error(), HasSubstr("truncated: 10 bytes"));
}

TEST_F(SnapshotCorruption, TrailingBytes) {
  bytes.push_back(0);
  EXPECT_THAT(error(), HasSubstr("trailing bytes"));
}

TEST_F(SnapshotCorruption, HugeCountIsRefusedBeforeAllocating) {
  wire::put32(bytes, 12, 0xFFFFFFFF);
  EXPECT_THAT(error(), HasSubstr("4294967295 entries, more than the 100 accepted"));
}

TEST_F(SnapshotCorruption, UnservablePathWithAGoodChecksumIsRefused) {
  std::size_t dlid_in_record = kSnapshotHeaderSize + kSnapshotEntrySize + 52 + 40;  // 2nd entry's DLID
  wire::put16(bytes, dlid_in_record, 0);
  reseal();
  EXPECT_THAT(error(), HasSubstr("entry 1: destination fe80::6 has no servable path (DLID 0"));
}

class SnapshotFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ibat-snapshot-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "cache").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(SnapshotFile, WriteThenLoad) {
  std::vector<std::uint8_t> bytes = encode_snapshot({entry(5, core::EntryState::valid)}, kWritten);
  ASSERT_EQ(write_snapshot_file(path_, bytes), "");
  // Overwrite: the rename replaces the old file and leaves no temp file behind.
  ASSERT_EQ(write_snapshot_file(path_, bytes), "");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_), {}), 1);
  SnapshotContents out = load_snapshot_file(path_, kWritten, 100);
  ASSERT_TRUE(out.ok()) << out.error;
  EXPECT_EQ(out.entries.size(), 1u);
}

TEST_F(SnapshotFile, MissingFileIsNotAnError) {
  SnapshotContents out = load_snapshot_file(path_, kWritten, 100);
  EXPECT_TRUE(out.ok());
  EXPECT_TRUE(out.entries.empty());
}

TEST_F(SnapshotFile, CorruptFileIsReportedWithItsName) {
  std::ofstream(path_) << "garbage that is long enough to have a header.....";
  SnapshotContents out = load_snapshot_file(path_, kWritten, 100);
  EXPECT_THAT(out.error, HasSubstr(path_ + ": not an ibat snapshot"));
}

TEST_F(SnapshotFile, OversizedFileIsNotRead) {
  std::vector<std::uint8_t> bytes = encode_snapshot(
      {entry(5, core::EntryState::valid), entry(6, core::EntryState::valid)}, kWritten);
  ASSERT_EQ(write_snapshot_file(path_, bytes), "");
  SnapshotContents out = load_snapshot_file(path_, kWritten, 1);
  EXPECT_THAT(out.error, HasSubstr(path_ + ": 260 bytes, more than 1 entries can take"));
}

TEST_F(SnapshotFile, DirectoryIsNotASnapshot) {
  EXPECT_THAT(load_snapshot_file(dir_.string(), kWritten, 100).error, HasSubstr("not a regular file"));
}

// A FIFO at the path must not block start-up in open() waiting for a writer. The load runs on a
// thread; should it block (the regression), the test opens the FIFO's write end to release it and
// fails instead of hanging the suite.
TEST_F(SnapshotFile, FifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
  auto load = std::async(std::launch::async, [&] { return load_snapshot_file(path_, kWritten, 100); });
  if (load.wait_for(30s) != std::future_status::ready) {
    int writer = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    load.wait();
    if (writer >= 0) ::close(writer);
    FAIL() << "load_snapshot_file blocked opening a FIFO";
  }
  SnapshotContents out = load.get();
  EXPECT_TRUE(out.entries.empty());
  EXPECT_THAT(out.error, HasSubstr(path_ + ": a FIFO, not a regular file"));
  EXPECT_THAT(out.error, HasSubstr("snapshot.cache_file"));
}

// A symlink planted where the temporary file would go must not redirect the write.
TEST_F(SnapshotFile, PlantedSymlinkAtTheTempNameIsNotFollowed) {
  std::filesystem::path victim = dir_ / "victim";
  std::ofstream(victim) << "precious";
  std::filesystem::path planted = path_ + ".tmp." + std::to_string(::getpid());
  std::filesystem::create_symlink(victim, planted);

  ASSERT_EQ(write_snapshot_file(path_, encode_snapshot({entry(5, core::EntryState::valid)}, kWritten)), "");
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
  EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::symlink_status(path_)));
  EXPECT_TRUE(std::filesystem::is_symlink(std::filesystem::symlink_status(planted)));
  SnapshotContents out = load_snapshot_file(path_, kWritten, 100);
  ASSERT_TRUE(out.ok()) << out.error;
  EXPECT_EQ(out.entries.size(), 1u);
}

TEST_F(SnapshotFile, WriteIntoMissingDirectoryFailsAndSaysWhere) {
  std::string bad = (dir_ / "no" / "cache").string();
  EXPECT_THAT(write_snapshot_file(bad, encode_snapshot({}, kWritten)), HasSubstr("create " + bad + ".tmp."));
}

TEST_F(SnapshotFile, MissingDirectoryIsCreated) {
  std::filesystem::path state = dir_ / "state";
  EXPECT_EQ(prepare_snapshot_directory((state / "cache").string()), "");
  EXPECT_TRUE(std::filesystem::is_directory(state));
  // Existing: nothing to do; a bare file name lives in the working directory.
  EXPECT_EQ(prepare_snapshot_directory((state / "cache").string()), "");
  EXPECT_EQ(prepare_snapshot_directory("cache"), "");
}

TEST_F(SnapshotFile, OnlyTheLastDirectoryIsCreatedAndTheErrorSaysWhatToSet) {
  std::filesystem::path deep = dir_ / "a" / "b";
  std::string error = prepare_snapshot_directory((deep / "cache").string());
  EXPECT_THAT(error, HasSubstr("cannot create directory " + deep.string() + ": No such file or directory"));
  EXPECT_THAT(error, HasSubstr("snapshot.cache_file"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "a"));
}

TEST_F(SnapshotFile, AFileWhereTheDirectoryShouldBeIsReported) {
  std::ofstream(dir_ / "state") << "x";
  EXPECT_THAT(prepare_snapshot_directory((dir_ / "state" / "cache").string()),
              HasSubstr("cannot create directory " + (dir_ / "state").string() + ": File exists"));
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  const std::string text = "123456789";
  EXPECT_EQ(crc32(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size())), 0xCBF43926u);
}

}  // namespace
}  // namespace ibat::server

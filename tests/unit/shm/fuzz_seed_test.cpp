// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The fuzz_shm_table seeds (tests/fuzz/corpus/shm_table) are tables of the current layout with
// three published paths, so that the fuzzer starts from inputs that reach every check of a hit
// (a seed of an older layout stops at the header). This test builds them and compares; after a
// layout change, IBAT_WRITE_FUZZ_SEEDS=1 makes it write them instead.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "shm/path_table_reader.h"
#include "shm/path_table_writer.h"
#include "table_test_support.h"

namespace ibat::shm {
namespace {

constexpr std::uint32_t kSeedSlots = kMinSlots;  // fuzz mode "even": slot count kMinSlots << (byte 1 % 4)

// A table of kSeedSlots slots with paths 1..3 published.
std::vector<std::uint8_t> seed_table() {
  auto memory = test::table_memory(kSeedSlots);
  PathTableWriter writer(memory.data(), kSeedSlots);
  for (std::uint32_t n = 1; n <= 3; ++n) EXPECT_TRUE(writer.publish(test::key_of(n), test::path_of(n, n), 1000 + n));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(memory.data());
  return {bytes, bytes + table_bytes(kSeedSlots)};
}

// The fuzz target's two modes: byte 0 odd = the whole mapping follows; even = byte 1 picks the
// slot count and the slots follow.
std::vector<std::uint8_t> whole_table_seed() {
  std::vector<std::uint8_t> seed{1};
  const auto table = seed_table();
  seed.insert(seed.end(), table.begin(), table.end());
  return seed;
}
std::vector<std::uint8_t> slots_only_seed() {
  std::vector<std::uint8_t> seed{0, 0};
  const auto table = seed_table();
  seed.insert(seed.end(), table.begin() + sizeof(TableHeader), table.end());
  return seed;
}

void check_seed(const std::string& name, const std::vector<std::uint8_t>& expected) {
  const std::string path = std::string(IBAT_FUZZ_CORPUS_DIR) + "/shm_table/" + name;
  if (const char* write = std::getenv("IBAT_WRITE_FUZZ_SEEDS"); write && std::strcmp(write, "1") == 0) {
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(expected.data()),
                                                static_cast<std::streamsize>(expected.size()));
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing: run this test with IBAT_WRITE_FUZZ_SEEDS=1";
  const std::vector<std::uint8_t> actual{std::istreambuf_iterator<char>(in), {}};
  EXPECT_EQ(actual, expected) << path << " is not a table of layout version " << kVersion
                              << ": run this test with IBAT_WRITE_FUZZ_SEEDS=1 to rewrite it";
}

TEST(FuzzSeeds, AreTablesOfTheCurrentLayoutWithPublishedPaths) {
  const auto table = seed_table();
  std::vector<std::uint64_t> aligned((table.size() + 7) / 8);
  std::memcpy(aligned.data(), table.data(), table.size());
  std::string error;
  auto reader = PathTableReader::open(aligned.data(), table.size(), error);
  ASSERT_TRUE(reader) << error;
  for (std::uint32_t n = 1; n <= 3; ++n) EXPECT_TRUE(reader->lookup(test::key_of(n))) << n;
  check_seed("whole_table.bin", whole_table_seed());
  check_seed("slots_only.bin", slots_only_seed());
}

}  // namespace
}  // namespace ibat::shm

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// GetTable answers (decode_sa_table) on bytes built by hand: records at AttributeOffset strides,
// answers longer than one MAD, empty tables, every truncation, bad strides and the record bound;
// and the GetTable request builder.
#include <gtest/gtest.h>

#include <vector>

#include "mad/path_record.h"
#include "mad/sa_table.h"

namespace ibat::mad {
namespace {

// The 56-byte SA header of a PathRecord GetTableResp as OpenSM sends it through the kernel's RMPP
// (TID 0x0000000100002a2a, RMPP DATA, ACTIVE|FIRST, SM_Key 0), with AttributeOffset `attr_offset`.
std::vector<std::uint8_t> table_header(std::uint8_t attr_offset) {
  return {0x01, 0x03, 0x02, 0x92, 0x00, 0x00, 0x00, 0x00,  // base, class 3, version 2, GetTableResp, status 0
          0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x2a, 0x2a,  // TID
          0x00, 0x35, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // PathRecord, attribute modifier 0
          0x01, 0x01, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01,  // RMPP v1, DATA, ACTIVE|FIRST, segment 1
          0x00, 0x00, 0x00, 0xd4,                          // payload length
          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // SM_Key
          0x00, attr_offset, 0x00, 0x00,                   // AttributeOffset, reserved
          0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x18, 0x08};  // ComponentMask: SGID, Reversible, NumbPath
}

core::PathRecord path_to(std::uint16_t n) {
  core::PathRecord p;
  p.sgid = core::Gid::from_parts(0xfe80000000000000ULL, 0x100007);
  p.dgid = core::Gid::from_parts(0xfe80000000000000ULL, 0x100000 + n);
  p.slid.value = 10;
  p.dlid.value = n;
  p.pkey.value = 0xFFFF;
  p.mtu = 4;
  p.rate = 3;
  return p;
}

// A table of `count` PathRecords (DLIDs 1..count), each followed by `pad` zero bytes.
std::vector<std::uint8_t> path_table(std::size_t count, std::size_t pad = 0) {
  auto bytes = table_header(static_cast<std::uint8_t>((kPathRecordSize + pad) / 8));
  for (std::size_t i = 1; i <= count; ++i) {
    const auto record = encode_path_record(path_to(static_cast<std::uint16_t>(i)));
    bytes.insert(bytes.end(), record.begin(), record.end());
    bytes.insert(bytes.end(), pad, 0);
  }
  return bytes;
}

TEST(SaTable, EveryRecordAtItsOffset) {
  const auto bytes = path_table(3);
  ASSERT_EQ(bytes.size(), 56U + 3 * 64);
  auto table = decode_sa_table(bytes, kPathRecordSize, 10);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->header.method, method::kGetTableResp);
  EXPECT_EQ(table->header.attr_id, attr::kPathRecord);
  EXPECT_EQ(table->sa.rmpp.resp_time_flags, 0x03);
  EXPECT_EQ(table->stride, 64U);
  ASSERT_EQ(table->count, 3U);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(table->record(i).data(), bytes.data() + 56 + i * 64);
    EXPECT_EQ(table->record(i).size(), 64U);
    auto path = decode_path_record(table->record(i));
    ASSERT_TRUE(path.ok());
    EXPECT_EQ(*path, path_to(static_cast<std::uint16_t>(i + 1)));
  }
}

TEST(SaTable, StrideComesFromAttributeOffsetNotFromTheRecordSize) {
  const auto bytes = path_table(2, 8);  // AttributeOffset 9: 72-byte strides
  auto table = decode_sa_table(bytes, kPathRecordSize, 10);
  ASSERT_TRUE(table.ok()) << table.error().message;
  EXPECT_EQ(table->stride, 72U);
  ASSERT_EQ(table->count, 2U);
  EXPECT_EQ(table->record(1).data(), bytes.data() + 56 + 72);
  EXPECT_EQ(decode_path_record(table->record(1))->dlid.value, 2);
}

// What a GetTable's timer counts (fabric::TableTimer): whole records by AttributeOffset, whatever
// their size; none for an empty table, a header cut short or a truncated last record.
TEST(SaTable, TheRecordsATimerCountsAreTheWholeOnesByAttributeOffset) {
  EXPECT_EQ(sa_table_records(path_table(1000)), 1000U);
  EXPECT_EQ(sa_table_records(path_table(3, 8)), 3U);
  EXPECT_EQ(sa_table_records(table_header(0)), 0U) << "AttributeOffset 0: no record";
  auto cut = path_table(3);
  cut.resize(cut.size() - 1);
  EXPECT_EQ(sa_table_records(cut), 2U);
  EXPECT_EQ(sa_table_records(std::span<const std::uint8_t>(cut).first(40)), 0U) << "no SA header";
}

TEST(SaTable, AnAnswerOfManyMadsIsReadToItsEnd) {
  const auto bytes = path_table(1000);  // 64,056 bytes: 321 RMPP segments
  auto table = decode_sa_table(bytes, kPathRecordSize, 1000);
  ASSERT_TRUE(table.ok()) << table.error().message;
  ASSERT_EQ(table->count, 1000U);
  EXPECT_EQ(decode_path_record(table->record(999))->dlid.value, 1000);
}

TEST(SaTable, EmptyTables) {
  // OpenSM: no records -> AttributeOffset 0 and nothing after the header.
  auto none = decode_sa_table(table_header(0), kPathRecordSize, 10);
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(none->count, 0U);
  auto bytes = table_header(0);
  bytes.resize(256, 0xEE);  // AttributeOffset 0: whatever follows is no record
  EXPECT_EQ(decode_sa_table(bytes, kPathRecordSize, 10)->count, 0U);
  EXPECT_EQ(decode_sa_table(table_header(8), kPathRecordSize, 10)->count, 0U);
}

TEST(SaTable, EveryTruncationEndsOnARecordBoundaryOrFails) {
  const auto full = path_table(3);
  for (std::size_t len = 0; len <= full.size(); ++len) {
    SCOPED_TRACE(len);
    const std::vector<std::uint8_t> prefix(full.begin(), full.begin() + static_cast<long>(len));  // exact size: ASan
    auto table = decode_sa_table(prefix, kPathRecordSize, 10);
    const bool whole = len >= kSaHeaderSize && (len - kSaHeaderSize) % 64 == 0;
    ASSERT_EQ(table.ok(), whole);
    if (whole) {
      EXPECT_EQ(table->count, (len - kSaHeaderSize) / 64);
    } else if (len < kSaHeaderSize) {
      EXPECT_EQ(table.error().message, "SA MAD: need 56 bytes, got " + std::to_string(len));
    } else {
      EXPECT_NE(table.error().message.find("not a whole number of 64-byte records (truncated?)"), std::string::npos)
          << table.error().message;
    }
  }
}

TEST(SaTable, AStrideShorterThanTheRecordIsAnError) {
  auto bytes = path_table(2);
  bytes[45] = 4;  // AttributeOffset 4: 32 bytes
  auto table = decode_sa_table(bytes, kPathRecordSize, 10);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().message, "SA table: AttributeOffset 4 (32 bytes) is shorter than a 64-byte record");
}

TEST(SaTable, MoreRecordsThanTheMaximumIsAnError) {
  const auto bytes = path_table(5);
  EXPECT_EQ(decode_sa_table(bytes, kPathRecordSize, 5)->count, 5U);
  auto table = decode_sa_table(bytes, kPathRecordSize, 4);
  ASSERT_FALSE(table.ok());
  EXPECT_EQ(table.error().message, "SA table: 5 records, more than the maximum of 4");
}

TEST(SaTable, GetTableRequest) {
  const auto record = encode_path_record(path_to(0));
  const MadBuffer mad = build_sa_get_table(0x1234, attr::kPathRecord, record, pr_mask::kSgid | pr_mask::kNumbPath);
  const std::vector<std::uint8_t> header(mad.begin(), mad.begin() + 24);
  const std::vector<std::uint8_t> expected = {0x01, 0x03, 0x02, 0x12, 0x00, 0x00, 0x00, 0x00,  // GetTable
                                              0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x12, 0x34,  // TID
                                              0x00, 0x35, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  EXPECT_EQ(header, expected);
  EXPECT_EQ(mad[55], 0x08);  // ComponentMask low byte: SGID
  EXPECT_EQ(mad[54], 0x10);  // NumbPath
  EXPECT_TRUE(std::equal(record.begin(), record.end(), mad.begin() + 56));
}

}  // namespace
}  // namespace ibat::mad

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Unit tests of the pcap reader and ARP scan on capture bytes built in the test (pcap_builder.h):
// every supported link type, byte order and timestamp precision, and every structural error.
#include <gtest/gtest.h>

#include "ipoib/pcap.h"
#include "pcap_builder.h"

namespace ibat::ipoib {
namespace {

using test::PcapBuilder;

std::vector<std::uint8_t> arp_reply_from(std::uint8_t last_octet) {
  ArpPacket p;
  p.op = ArpOp::reply;
  p.sender_hw = core::HwAddr::from(0x48, core::Gid::from_parts(0xfe80000000000000ULL, 0x0002c90300000000ULL + last_octet));
  p.sender_ip = core::IpAddr::from_v4(0x0A000000u + last_octet);
  p.target_ip = core::IpAddr::from_v4(0x0A0000FEu);
  return encode_arp(p);
}

PcapArpScan scan_ok(const std::vector<std::uint8_t>& file) {
  auto r = scan_pcap_arp(file);
  if (auto* e = std::get_if<DecodeError>(&r)) ADD_FAILURE() << e->message;
  return std::holds_alternative<PcapArpScan>(r) ? std::get<PcapArpScan>(r) : PcapArpScan{};
}

std::string error_of(const std::vector<std::uint8_t>& file) {
  auto r = scan_pcap_arp(file);
  const auto* e = std::get_if<DecodeError>(&r);
  return e ? e->message : std::string("scanned");
}

struct Variant {
  std::uint32_t link_type;
  bool big_endian;
  bool nanosecond;
};

class PcapVariants : public ::testing::TestWithParam<Variant> {};

TEST_P(PcapVariants, FindsTheArpPacketsWithTimestamps) {
  const auto v = GetParam();
  auto wrap = [&](std::uint16_t proto, const std::vector<std::uint8_t>& payload) {
    if (v.link_type == 113) return test::sll_frame(proto, payload);
    if (v.link_type == 276) return test::sll2_frame(proto, payload);
    return test::ipoib_frame(proto, payload);
  };
  const std::vector<std::uint8_t> ipv4(40, 0x45);
  PcapBuilder b(v.link_type, v.big_endian, v.nanosecond);
  b.record(wrap(0x0806, arp_reply_from(1)), 100, 5)
      .record(wrap(0x0800, ipv4), 101, 0)
      .record(wrap(0x0806, arp_reply_from(2)), 102, 7);

  const auto scan = scan_ok(b.bytes());
  EXPECT_EQ(scan.link_type, static_cast<LinkType>(v.link_type));
  EXPECT_EQ(scan.records, 3u);
  EXPECT_EQ(scan.not_ipoib_arp, 1u);
  ASSERT_EQ(scan.arp.size(), 2u);
  EXPECT_EQ(scan.arp[0].record, 1u);
  EXPECT_EQ(scan.arp[1].record, 3u);
  EXPECT_EQ(scan.arp[0].packet.sender_ip.to_string(), "10.0.0.1");
  EXPECT_EQ(scan.arp[1].packet.sender_ip.to_string(), "10.0.0.2");
  const std::uint64_t unit = v.nanosecond ? 1 : 1000;
  EXPECT_EQ(scan.arp[0].timestamp_ns, 100'000'000'000ULL + 5 * unit);
  EXPECT_EQ(scan.arp[1].timestamp_ns, 102'000'000'000ULL + 7 * unit);
}

INSTANTIATE_TEST_SUITE_P(LinkTypesByteOrders, PcapVariants,
                         ::testing::Values(Variant{113, false, false}, Variant{113, true, false},
                                           Variant{113, false, true}, Variant{113, true, true},
                                           Variant{276, false, false}, Variant{276, true, true},
                                           Variant{242, false, false}, Variant{242, true, false}));

TEST(Pcap, HeaderOnlyFileHasNoRecords) {
  const auto scan = scan_ok(PcapBuilder(113).bytes());
  EXPECT_EQ(scan.records, 0u);
  EXPECT_TRUE(scan.arp.empty());
}

TEST(Pcap, EthernetArpOnAnAnyCaptureIsSkippedNotRejected) {
  std::vector<std::uint8_t> ether_arp = {0x00, 0x01, 0x08, 0x00, 6, 4, 0, 1};
  ether_arp.resize(28, 0);
  PcapBuilder b(113);
  b.record(test::sll_frame(0x0806, ether_arp));
  const auto scan = scan_ok(b.bytes());
  EXPECT_EQ(scan.not_ipoib_arp, 1u);
  EXPECT_TRUE(scan.rejected.empty());
}

TEST(Pcap, MalformedIpoibArpIsRejectedWithItsRecordNumber) {
  auto bad = arp_reply_from(1);
  bad[7] = 9;  // operation 9
  PcapBuilder b(113);
  b.record(test::sll_frame(0x0806, arp_reply_from(1))).record(test::sll_frame(0x0806, bad));
  const auto scan = scan_ok(b.bytes());
  EXPECT_EQ(scan.arp.size(), 1u);
  ASSERT_EQ(scan.rejected.size(), 1u);
  EXPECT_NE(scan.rejected[0].find("record #2 at offset "), std::string::npos) << scan.rejected[0];
  EXPECT_NE(scan.rejected[0].find("operation 9"), std::string::npos) << scan.rejected[0];
}

TEST(Pcap, RejectsBadFileHeaders) {
  EXPECT_NE(error_of({0xD4, 0xC3, 0xB2}).find("shorter than the 24-byte file header"), std::string::npos);
  auto bad_magic = PcapBuilder(113).bytes();
  bad_magic[0] = 0;
  EXPECT_NE(error_of(bad_magic).find("unknown magic"), std::string::npos);
  auto bad_version = PcapBuilder(113).bytes();
  bad_version[4] = 3;
  EXPECT_NE(error_of(bad_version).find("major version 3"), std::string::npos);
  EXPECT_NE(error_of(PcapBuilder(1).bytes()).find("link type 1 "), std::string::npos);
}

TEST(Pcap, TruncatedRecordHeaderNamesRecordAndOffset) {
  PcapBuilder b(113);
  b.record(test::sll_frame(0x0806, arp_reply_from(1)));
  auto bytes = b.bytes();
  const std::size_t second_at = bytes.size();
  bytes.insert(bytes.end(), {1, 2, 3, 4, 5});
  EXPECT_EQ(error_of(bytes), "pcap record #2 at offset " + std::to_string(second_at) +
                                 ": truncated record header (5 of 16 bytes)");
}

TEST(Pcap, CapturedLengthPastEndOfFileIsAnError) {
  const auto frame = test::sll_frame(0x0806, arp_reply_from(1));
  PcapBuilder b(113);
  b.record(frame);
  auto bytes = b.bytes();
  bytes.resize(bytes.size() - 3);
  EXPECT_NE(error_of(bytes).find("record #1 at offset 24: captured length 72 runs past the end of file (69 bytes left)"),
            std::string::npos)
      << error_of(bytes);
}

TEST(Pcap, CapturedLengthAboveSnaplenOrCapIsRefusedBeforeAnyRead) {
  const auto frame = test::sll_frame(0x0806, arp_reply_from(1));
  PcapBuilder small(113, false, false, 64);
  small.record(frame);
  EXPECT_NE(error_of(small.bytes()).find("captured length 72 exceeds the limit 64"), std::string::npos);

  PcapBuilder huge(113, false, false, 0xFFFFFFFF);
  huge.record_with_caplen(frame, 0xFFFFFFF0);
  EXPECT_NE(error_of(huge.bytes()).find("exceeds the limit 262144"), std::string::npos);
}

TEST(Pcap, FrameShorterThanItsLinkHeaderIsAnError) {
  const std::vector<std::uint8_t> stub(10, 0);
  for (std::uint32_t link : {113u, 276u, 242u}) {
    PcapBuilder b(link);
    b.record(stub);
    EXPECT_NE(error_of(b.bytes()).find("is shorter than the"), std::string::npos) << link;
  }
}

TEST(Pcap, ReaderStopsCleanlyAndStaysAtEnd) {
  PcapBuilder b(276);
  b.record(test::sll2_frame(0x0806, arp_reply_from(3)));
  auto opened = PcapReader::open(b.bytes());
  ASSERT_TRUE(std::holds_alternative<PcapReader>(opened));
  auto& reader = std::get<PcapReader>(opened);
  auto first = reader.next();
  ASSERT_TRUE(std::holds_alternative<std::optional<PcapFrame>>(first));
  const auto& frame = std::get<std::optional<PcapFrame>>(first);
  ASSERT_TRUE(frame.has_value());
  EXPECT_EQ(frame->ether_type, kEtherTypeArp);
  EXPECT_EQ(frame->payload.size(), kIpoibArpSize);
  for (int i = 0; i < 2; ++i) {
    auto end = reader.next();
    ASSERT_TRUE(std::holds_alternative<std::optional<PcapFrame>>(end));
    EXPECT_FALSE(std::get<std::optional<PcapFrame>>(end).has_value());
  }
}

}  // namespace
}  // namespace ibat::ipoib

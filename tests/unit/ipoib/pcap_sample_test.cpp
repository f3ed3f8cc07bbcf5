// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Reads the committed capture samples (data/README.md) and checks ibat finds what tshark finds.
#include <gtest/gtest.h>

#include "ipoib/capture_file.h"
#include "ipoib/pcap.h"

namespace ibat::ipoib {
namespace {

struct Expected {
  std::size_t record;
  std::uint64_t timestamp_ns;
  ArpOp op;
  const char* sender_ip;
  const char* sender_hw;
  const char* target_ip;
};

// tshark -T fields -e frame.number -e frame.time_epoch -e arp.opcode -e arp.src.proto_ipv4 ...
const Expected kTshark[] = {
    {1, 1700000000'000000000ULL, ArpOp::request, "10.1.0.1", "80:00:00:49:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:01", "10.1.0.2"},
    {2, 1700000001'200000000ULL, ArpOp::reply, "10.1.0.2", "80:00:00:4a:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:02", "10.1.0.1"},
    {4, 1700000003'600000000ULL, ArpOp::request, "10.1.0.3", "80:00:00:4b:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:03", "10.1.0.3"},
    {5, 1700000004'800000000ULL, ArpOp::reply, "10.1.0.4", "80:00:00:4c:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:04", "10.1.0.1"},
};

class CaptureSample : public ::testing::TestWithParam<const char*> {};

TEST_P(CaptureSample, MatchesWhatTsharkDecodes) {
  auto file = read_capture_file(std::string(IBAT_IPOIB_DATA_DIR) + "/" + GetParam());
  ASSERT_TRUE(std::holds_alternative<std::vector<std::uint8_t>>(file)) << std::get<DecodeError>(file).message;
  auto r = scan_pcap_arp(std::get<std::vector<std::uint8_t>>(file));
  ASSERT_TRUE(std::holds_alternative<PcapArpScan>(r)) << std::get<DecodeError>(r).message;
  const auto& scan = std::get<PcapArpScan>(r);
  EXPECT_EQ(scan.link_type, LinkType::linux_sll);
  EXPECT_EQ(scan.records, 5u);
  EXPECT_EQ(scan.not_ipoib_arp, 1u);
  EXPECT_TRUE(scan.rejected.empty());
  ASSERT_EQ(scan.arp.size(), std::size(kTshark));
  for (std::size_t i = 0; i < scan.arp.size(); ++i) {
    const auto& got = scan.arp[i];
    const auto& want = kTshark[i];
    EXPECT_EQ(got.record, want.record);
    EXPECT_EQ(got.timestamp_ns, want.timestamp_ns);
    EXPECT_EQ(got.packet.op, want.op);
    EXPECT_EQ(got.packet.sender_ip.to_string(), want.sender_ip);
    EXPECT_EQ(got.packet.sender_hw.to_string(), want.sender_hw);
    EXPECT_EQ(got.packet.target_ip.to_string(), want.target_ip);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, CaptureSample, ::testing::Values("ipoib-arp-sll.pcap", "ipoib-arp-sll-nsec.pcap"));

TEST(CaptureFile, RefusesFilesAboveTheCapAndMissingFiles) {
  const std::string path = std::string(IBAT_IPOIB_DATA_DIR) + "/ipoib-arp-sll.pcap";
  auto capped = read_capture_file(path, 100);
  ASSERT_TRUE(std::holds_alternative<DecodeError>(capped));
  EXPECT_NE(std::get<DecodeError>(capped).message.find("larger than the limit of 100"), std::string::npos);
  auto missing = read_capture_file(std::string(IBAT_IPOIB_DATA_DIR) + "/no-such.pcap");
  ASSERT_TRUE(std::holds_alternative<DecodeError>(missing));
  EXPECT_NE(std::get<DecodeError>(missing).message.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace ibat::ipoib

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Unit tests of the IPoIB ARP codec: byte-exact layout, every rejected field, neighbour updates.
#include <gtest/gtest.h>

#include <vector>

#include "ipoib/arp.h"

namespace ibat::ipoib {
namespace {

ArpPacket sample_reply() {
  ArpPacket p;
  p.op = ArpOp::reply;
  p.sender_hw = *core::HwAddr::parse("80:00:00:4a:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:02");
  p.sender_ip = *core::IpAddr::parse("10.1.0.2");
  p.target_hw = *core::HwAddr::parse("80:00:00:49:fe:80:00:00:00:00:00:00:00:02:c9:03:00:a1:b2:01");
  p.target_ip = *core::IpAddr::parse("10.1.0.1");
  return p;
}

// RFC 4391 section 4.1 layout of the reply above, written out by hand.
const std::vector<std::uint8_t> kReplyBytes = {
    0x00, 0x20, 0x08, 0x00, 0x14, 0x04, 0x00, 0x02,                                      // header
    0x80, 0x00, 0x00, 0x4a, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0x02,
    10, 1, 0, 2,                                                                          // sender IP
    0x80, 0x00, 0x00, 0x49, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0x01,
    10, 1, 0, 1,                                                                          // target IP
};

std::string error_of(const std::vector<std::uint8_t>& bytes) {
  auto r = decode_arp(bytes);
  const auto* e = std::get_if<DecodeError>(&r);
  return e ? e->message : std::string("decoded");
}

TEST(Arp, EncodesTheRfc4391Layout) {
  EXPECT_EQ(encode_arp(sample_reply()), kReplyBytes);
  EXPECT_EQ(kReplyBytes.size(), kIpoibArpSize);
}

TEST(Arp, DecodesTheRfc4391Layout) {
  auto r = decode_arp(kReplyBytes);
  ASSERT_TRUE(std::holds_alternative<ArpPacket>(r)) << error_of(kReplyBytes);
  const auto& p = std::get<ArpPacket>(r);
  EXPECT_EQ(p, sample_reply());
  EXPECT_EQ(p.sender_hw.qpn(), 0x4Au);
  EXPECT_EQ(p.sender_hw.gid().to_string(), "fe80::2:c903:a1:b202");
  EXPECT_EQ(p.sender_ip.to_string(), "10.1.0.2");
  EXPECT_TRUE(p.sender_ip.v4);
}

TEST(Arp, IgnoresLinkPaddingAfterThePacket) {
  auto padded = kReplyBytes;
  padded.resize(64, 0xEE);
  auto r = decode_arp(padded);
  ASSERT_TRUE(std::holds_alternative<ArpPacket>(r));
  EXPECT_EQ(std::get<ArpPacket>(r), sample_reply());
}

TEST(Arp, RejectsEachWrongHeaderFieldByName) {
  auto with = [](std::size_t at, std::uint8_t v) {
    auto b = kReplyBytes;
    b[at] = v;
    return b;
  };
  EXPECT_NE(error_of(with(1, 1)).find("hardware type 1 at offset 0"), std::string::npos);
  EXPECT_NE(error_of(with(2, 0x86)).find("protocol type"), std::string::npos);
  EXPECT_NE(error_of(with(4, 6)).find("hardware address length 6"), std::string::npos);
  EXPECT_NE(error_of(with(5, 16)).find("protocol address length 16"), std::string::npos);
  EXPECT_NE(error_of(with(7, 3)).find("operation 3"), std::string::npos);
}

TEST(Arp, RejectsTruncatedPacketsAtEveryLength) {
  for (std::size_t n = 0; n < kIpoibArpSize; ++n) {
    std::vector<std::uint8_t> cut(kReplyBytes.begin(), kReplyBytes.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_NE(error_of(cut).find("truncated"), std::string::npos) << "length " << n;
  }
}

TEST(Arp, NeighbourUpdateTakesTheSenderAndTellsReplies) {
  const auto reply = neighbour_update(sample_reply());
  EXPECT_EQ(reply.ip.to_string(), "10.1.0.2");
  EXPECT_EQ(reply.hw, sample_reply().sender_hw);
  EXPECT_TRUE(reply.is_reply);

  auto request = sample_reply();
  request.op = ArpOp::request;
  EXPECT_FALSE(neighbour_update(request).is_reply);
}

}  // namespace
}  // namespace ibat::ipoib

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// ibat_verbs.h field by field: ibat_path -> struct ibv_ah_attr (ibv_create_ah) and -> struct
// ibv_path_record (rdma_set_option RDMA_OPTION_IB_PATH), checked against the IBA/verbs layouts.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>

#include "ibat_verbs.h"

extern "C" int ibat_verbs_c_check(void);  // verbs_c_check.c: the header compiles and works as C

namespace {

ibat_gid gid(std::uint64_t prefix, std::uint64_t guid) {
  ibat_gid g{};
  for (int i = 0; i < 8; ++i) {
    g.raw[i] = static_cast<std::uint8_t>(prefix >> (56 - 8 * i));
    g.raw[8 + i] = static_cast<std::uint8_t>(guid >> (56 - 8 * i));
  }
  return g;
}

// A path inside one subnet (hop limit 0), every field distinct.
ibat_path local_path() {
  ibat_path p{};
  p.sgid = gid(0xfe80000000000000ULL, 0x0002c90300000001ULL);
  p.dgid = gid(0xfe80000000000000ULL, 0x0002c90300000002ULL);
  p.dlid = 0x1234;
  p.slid = 0x0105;
  p.pkey = 0xffff;
  p.sl = 5;
  p.mtu = 4;        // 2048
  p.rate = 16;      // 100 Gb/s (EDR 4x)
  p.pkt_life = 18;
  p.hop_limit = 0;
  p.tclass = 0x2a;
  p.flow_label = 0x12345;
  return p;
}

TEST(Verbs, AhAttrInsideTheSubnetHasNoGrh) {
  const ibat_path p = local_path();
  ibv_ah_attr ah;
  std::memset(&ah, 0xee, sizeof ah);
  ASSERT_EQ(ibat_path_to_ibv_ah_attr(&p, 2, 3, 2, &ah), 0);
  EXPECT_EQ(ah.dlid, 0x1234);
  EXPECT_EQ(ah.sl, 5);
  EXPECT_EQ(ah.static_rate, 16);
  EXPECT_EQ(ah.static_rate, IBV_RATE_100_GBPS);  // the IBA rate code is enum ibv_rate
  EXPECT_EQ(ah.port_num, 2);
  EXPECT_EQ(ah.src_path_bits, 0x0105 & 3);  // the SLID's low LMC bits
  EXPECT_EQ(ah.is_global, 0);
  const ibv_global_route zero{};
  EXPECT_EQ(std::memcmp(&ah.grh, &zero, sizeof zero), 0) << "GRH fields must be zero without a GRH";
}

TEST(Verbs, AhAttrSrcPathBitsFollowTheLmc) {
  ibat_path p = local_path();
  p.slid = 0x00ff;
  ibv_ah_attr ah;
  for (std::uint8_t lmc = 0; lmc <= 7; ++lmc) {
    ASSERT_EQ(ibat_path_to_ibv_ah_attr(&p, 1, 0, lmc, &ah), 0);
    EXPECT_EQ(ah.src_path_bits, 0xff & ((1u << lmc) - 1)) << "lmc " << int(lmc);
  }
}

TEST(Verbs, AhAttrHasAGrhWhenTheHopLimitLeavesTheSubnet) {
  ibat_path p = local_path();
  p.hop_limit = 64;
  ibv_ah_attr ah;
  ASSERT_EQ(ibat_path_to_ibv_ah_attr(&p, 1, 7, 0, &ah), 0);
  EXPECT_EQ(ah.is_global, 1);
  EXPECT_EQ(std::memcmp(ah.grh.dgid.raw, p.dgid.raw, 16), 0);
  EXPECT_EQ(ah.grh.flow_label, 0x12345u);
  EXPECT_EQ(ah.grh.sgid_index, 7);
  EXPECT_EQ(ah.grh.hop_limit, 64);
  EXPECT_EQ(ah.grh.traffic_class, 0x2a);
  EXPECT_EQ(ah.dlid, 0x1234);  // the router's LID: still the path's DLID
}

TEST(Verbs, AhAttrHopLimitOneStaysLocal) {
  ibat_path p = local_path();
  p.hop_limit = 1;
  ibv_ah_attr ah;
  ASSERT_EQ(ibat_path_to_ibv_ah_attr(&p, 1, 0, 0, &ah), 0);
  EXPECT_EQ(ah.is_global, 0);
}

TEST(Verbs, AhAttrHasAGrhWhenTheDgidIsOnAnotherSubnet) {
  ibat_path p = local_path();
  p.dgid = gid(0xfec0000000000001ULL, 0x0002c90300000002ULL);
  ibv_ah_attr ah;
  ASSERT_EQ(ibat_path_to_ibv_ah_attr(&p, 1, 4, 0, &ah), 0);
  EXPECT_EQ(ah.is_global, 1);
  EXPECT_EQ(ah.grh.sgid_index, 4);
  EXPECT_EQ(std::memcmp(ah.grh.dgid.raw, p.dgid.raw, 16), 0);
}

TEST(Verbs, AhAttrRejectsWhatCannotBeAnAddressHandle) {
  ibat_path p = local_path();
  ibv_ah_attr ah;
  std::memset(&ah, 0xee, sizeof ah);
  const ibv_ah_attr before = ah;
  EXPECT_EQ(ibat_path_to_ibv_ah_attr(nullptr, 1, 0, 0, &ah), -1);
  EXPECT_EQ(ibat_path_to_ibv_ah_attr(&p, 1, 0, 0, nullptr), -1);
  EXPECT_EQ(ibat_path_to_ibv_ah_attr(&p, 1, 0, 8, &ah), -1);
  p.dlid = 0;
  EXPECT_EQ(ibat_path_to_ibv_ah_attr(&p, 1, 0, 0, &ah), -1);
  EXPECT_EQ(std::memcmp(&ah, &before, sizeof ah), 0) << "a failed call must leave the output alone";
}

TEST(Verbs, PathRecordIsTheBigEndianWireLayout) {
  ibat_path p = local_path();
  p.hop_limit = 64;
  ibv_path_record r;
  std::memset(&r, 0xee, sizeof r);
  ASSERT_EQ(ibat_path_to_ibv_path_record(&p, &r), 0);
  static_assert(sizeof(ibv_path_record) == 64);
  // Byte offsets of the IBA PathRecord (docs/acm.md), read from the raw bytes.
  const auto* b = reinterpret_cast<const std::uint8_t*>(&r);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(b[i], 0) << "service_id byte " << i;
  EXPECT_EQ(std::memcmp(b + 8, p.dgid.raw, 16), 0);
  EXPECT_EQ(std::memcmp(b + 24, p.sgid.raw, 16), 0);
  EXPECT_EQ(b[40], 0x12);  // dlid
  EXPECT_EQ(b[41], 0x34);
  EXPECT_EQ(b[42], 0x01);  // slid
  EXPECT_EQ(b[43], 0x05);
  EXPECT_EQ(b[44], 0x01);  // flow label 27:8 | hop limit 7:0 = 0x01234540
  EXPECT_EQ(b[45], 0x23);
  EXPECT_EQ(b[46], 0x45);
  EXPECT_EQ(b[47], 64);
  EXPECT_EQ(b[48], 0x2a);        // tclass
  EXPECT_EQ(b[49], 0x81);        // reversible, one path
  EXPECT_EQ(b[50], 0xff);        // pkey
  EXPECT_EQ(b[51], 0xff);
  EXPECT_EQ(b[52], 0x00);        // qos class 0 | sl
  EXPECT_EQ(b[53], 5);
  EXPECT_EQ(b[54], 0x80 | 4);    // mtu selector "exactly" | 2048
  EXPECT_EQ(b[55], 0x80 | 16);   // rate
  EXPECT_EQ(b[56], 0x80 | 18);   // packet lifetime
  EXPECT_EQ(b[57], 0);           // preference
  for (int i = 58; i < 64; ++i) EXPECT_EQ(b[i], 0) << "reserved byte " << i;
  // The same through the struct, as librdmacm reads it.
  EXPECT_EQ(ntohs(r.dlid), 0x1234);
  EXPECT_EQ(ntohs(r.slid), 0x0105);
  EXPECT_EQ(ntohl(r.flowlabel_hoplimit) >> 8, 0x12345u);
  EXPECT_EQ(ntohl(r.flowlabel_hoplimit) & 0xff, 64u);
  EXPECT_EQ(ntohs(r.pkey), 0xffff);
  EXPECT_EQ(ntohs(r.qosclass_sl) & 0xf, 5);
}

TEST(Verbs, PathRecordKeepsALimitedPkeyAndMasksOversizedFields) {
  ibat_path p = local_path();
  p.pkey = 0x7fff;           // limited membership
  p.flow_label = 0xfff12345;  // only 20 bits exist
  p.sl = 0x15;                // only 4 bits exist
  ibv_path_record r;
  ASSERT_EQ(ibat_path_to_ibv_path_record(&p, &r), 0);
  EXPECT_EQ(ntohs(r.pkey), 0x7fff);
  EXPECT_EQ(ntohl(r.flowlabel_hoplimit), 0x12345u << 8);
  EXPECT_EQ(ntohs(r.qosclass_sl), 5);
}

TEST(Verbs, PathRecordRejectsDlidZeroAndNull) {
  ibat_path p = local_path();
  ibv_path_record r;
  std::memset(&r, 0xee, sizeof r);
  EXPECT_EQ(ibat_path_to_ibv_path_record(nullptr, &r), -1);
  EXPECT_EQ(ibat_path_to_ibv_path_record(&p, nullptr), -1);
  p.dlid = 0;
  EXPECT_EQ(ibat_path_to_ibv_path_record(&p, &r), -1);
  EXPECT_EQ(r.tclass, 0xee) << "a failed call must leave the output alone";
}

TEST(Verbs, HeaderWorksFromC) { EXPECT_EQ(ibat_verbs_c_check(), 0); }

}  // namespace

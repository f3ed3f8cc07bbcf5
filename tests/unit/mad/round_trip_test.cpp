// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Round trips: encode then decode gives back every field, decode then encode gives back the bytes
// (for fields that use every bit), and the builders put the right headers around the records.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "mad/inform_info.h"
#include "mad/mcmember_record.h"
#include "mad/notice.h"
#include "mad/path_record.h"
#include "mad/port_info.h"
#include "mad/sa_mad.h"
#include "mad/sm_info.h"
#include "mad/smp.h"

namespace ibat::mad {
namespace {

core::Gid gid(const char* text) { return *core::Gid::parse(text); }

core::PathRecord sample_path() {
  core::PathRecord p;
  p.service_id = 0x1122334455667788ULL;
  p.dgid = gid("fe80::10:d");
  p.sgid = gid("fe80::10:3");
  p.dlid.value = 13;
  p.slid.value = 5;
  p.raw_traffic = true;
  p.flow_label = 0xABCDE;
  p.hop_limit = 0x40;
  p.tclass = 0x12;
  p.reversible = true;
  p.numb_path = 0x7F;
  p.pkey.value = 0x8001;
  p.qos_class = 0xABC;
  p.sl = 0xD;
  p.mtu_selector = selector::kExactly;
  p.mtu = 5;
  p.rate_selector = selector::kLessThan;
  p.rate = 16;
  p.pkt_life_selector = selector::kLargestAvailable;
  p.pkt_life = 63;
  p.preference = 7;
  return p;
}

TEST(RoundTrip, PathRecordEveryField) {
  const auto p = sample_path();
  const auto bytes = encode_path_record(p);
  auto back = decode_path_record(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, p);
}

TEST(RoundTrip, PathRecordTruncatesOversizedValuesToTheirFields) {
  core::PathRecord p;
  p.flow_label = 0xFFFFFFFF;
  p.numb_path = 0xFF;
  p.qos_class = 0xFFFF;
  p.sl = 0xFF;
  p.mtu = 0xFF;
  const auto bytes = encode_path_record(p);
  EXPECT_EQ(bytes[44], 0x0F);  // raw traffic bit untouched by the flow label
  EXPECT_EQ(bytes[49], 0x7F);  // reversible bit untouched by numb_path
  auto back = decode_path_record(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->raw_traffic);
  EXPECT_EQ(back->flow_label, 0xFFFFFU);
  EXPECT_FALSE(back->reversible);
  EXPECT_EQ(back->numb_path, 0x7F);
  EXPECT_EQ(back->qos_class, 0xFFF);
  EXPECT_EQ(back->sl, 0xF);
  EXPECT_EQ(back->mtu_selector, 0);
  EXPECT_EQ(back->mtu, 0x3F);
}

TEST(RoundTrip, PathRecordGetRequest) {
  const auto p = sample_path();
  const std::uint64_t mask = pr_mask::kDgid | pr_mask::kSgid | pr_mask::kPkey | pr_mask::kNumbPath;
  const auto mad = build_path_record_get(0xDEADBEEF00000042ULL, p, mask);
  auto decoded = decode_sa_mad(mad);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->header.mgmt_class, mgmt_class::kSubnAdm);
  EXPECT_EQ(decoded->header.class_version, kSaClassVersion);
  EXPECT_EQ(decoded->header.method, method::kGet);
  EXPECT_EQ(decoded->header.attr_id, attr::kPathRecord);
  EXPECT_EQ(decoded->header.tid, 0xDEADBEEF00000042ULL);
  EXPECT_EQ(decoded->sa.component_mask, mask);
  EXPECT_EQ(decoded->data.size(), kSaDataSize);
  auto record = decode_path_record(decoded->data);
  ASSERT_TRUE(record.ok());
  EXPECT_EQ(*record, p);
}

TEST(RoundTrip, SaMadHeaderFields) {
  MadHeader h = sa_request_header(method::kGetTable, 7, attr::kMcMemberRecord, 0x01020304);
  h.status = 0x0300;
  SaHeader sa;
  sa.rmpp = {1, 2, 0x31, 4, 0x05060708, 0x090A0B0C};
  sa.sm_key = 0x1112131415161718ULL;
  sa.attr_offset = 7;
  sa.component_mask = 0x3FFFF;
  const std::uint8_t record[] = {0xAA, 0xBB};
  const auto mad = build_sa_mad(h, sa, record);
  auto back = decode_sa_mad(mad);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->header, h);
  EXPECT_EQ(back->header.sa_status(), SaStatus::no_records);
  EXPECT_EQ(back->sa, sa);
  EXPECT_EQ(back->data[0], 0xAA);
  EXPECT_EQ(back->data[1], 0xBB);
  EXPECT_EQ(back->data[2], 0);
}

TEST(RoundTrip, SaMadRejectsOversizedRecord) {
  const std::vector<std::uint8_t> too_big(kSaDataSize + 1);
  EXPECT_THROW(build_sa_mad(MadHeader{}, SaHeader{}, too_big), std::length_error);
}

TEST(RoundTrip, McMemberRecordEveryField) {
  McMemberRecord m;
  m.mgid = ipoib_broadcast_mgid(core::Pkey{0x7FFF});
  m.port_gid = gid("fe80::10:3");
  m.qkey = 0x80010000;
  m.mlid.value = 0xC001;
  m.mtu_selector = 2;
  m.mtu = 4;
  m.tclass = 9;
  m.pkey.value = 0xFFFF;
  m.rate_selector = 2;
  m.rate = 3;
  m.pkt_life_selector = 1;
  m.pkt_life = 18;
  m.sl = 0xA;
  m.flow_label = 0x12345;
  m.hop_limit = 0xFF;
  m.scope = 2;
  m.join_state = 1;
  m.proxy_join = true;
  EXPECT_EQ(m.mgid, gid("ff12:401b:ffff::ffff:ffff"));
  auto back = decode_mcmember_record(encode_mcmember_record(m));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, m);
  auto mad = decode_sa_mad(build_mcmember_get(3, m, mcm_mask::kMgid | mcm_mask::kPkey));
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->header.attr_id, attr::kMcMemberRecord);
  EXPECT_EQ(mad->header.method, method::kGet);
  EXPECT_EQ(mad->sa.component_mask, mcm_mask::kMgid | mcm_mask::kPkey);
}

TEST(RoundTrip, InformInfoTrapSubscription) {
  // docs/design.md §4: GID 0, LIDRangeBegin 0xFFFF, IsGeneric 1, Type 0xFFFF, ProducerType 0xFFFFFF, QPN 1.
  const InformInfo info = trap_subscription(kTrapGidOutOfService);
  const auto bytes = encode_inform_info(info);
  const std::array<std::uint8_t, kInformInfoSize> expected = {
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // GID 0
      0xFF, 0xFF, 0x00, 0x00,                          // LID range 0xFFFF..0
      0x00, 0x00, 0x01, 0x01,                          // reserved, IsGeneric, Subscribe
      0xFF, 0xFF, 0x00, 65,                            // Type, TrapNumber
      0x00, 0x00, 0x01, 0x00,                          // QPN 1, RespTimeValue 0
      0x00, 0xFF, 0xFF, 0xFF};                         // reserved, ProducerType
  EXPECT_EQ(bytes, expected);
  auto back = decode_inform_info(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, info);

  InformInfo other;
  other.gid = gid("fe80::10:3");
  other.lid_range_begin = 1;
  other.lid_range_end = 100;
  other.is_generic = false;
  other.subscribe = false;
  other.type = 3;
  other.trap_number = 0x1234;
  other.qpn = 0xABCDEF;
  other.resp_time_value = 19;
  other.producer_type = 0x123456;
  auto other_back = decode_inform_info(encode_inform_info(other));
  ASSERT_TRUE(other_back.ok());
  EXPECT_EQ(*other_back, other);

  auto mad = decode_sa_mad(build_inform_info_set(9, info));
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->header.method, method::kSet);
  EXPECT_EQ(mad->header.attr_id, attr::kInformInfo);
}

TEST(RoundTrip, ReportAndReportResp) {
  const core::Gid host = gid("fe80::10:9");
  const Notice notice = gid_service_notice(kTrapGidOutOfService, host, core::Lid{1},
                                           gid("fe80::10:1"));
  const auto report_mad = build_report(0x0001000012345678ULL, notice);
  auto report = decode_report(report_mad);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->notice, notice);
  EXPECT_EQ(report->notice.gid_in_out_of_service(), host);
  EXPECT_EQ(report->notice.issuer_lid.value, 1);

  const auto resp = build_report_resp(*report);
  auto resp_mad = decode_sa_mad(resp);
  ASSERT_TRUE(resp_mad.ok());
  EXPECT_EQ(resp_mad->header.method, method::kReportResp);
  EXPECT_EQ(resp_mad->header.tid, 0x0001000012345678ULL);  // whole TID echoed
  EXPECT_EQ(resp_mad->header.attr_id, attr::kNotice);
  auto echoed = decode_notice(resp_mad->data);
  ASSERT_TRUE(echoed.ok());
  EXPECT_EQ(*echoed, notice);
  EXPECT_FALSE(decode_report(resp).ok());  // a ReportResp is not a Report
}

TEST(RoundTrip, NoticeEveryFieldAndNonGidTraps) {
  Notice n;
  n.is_generic = false;
  n.type = 0x7F;
  n.producer_type = 0xABCDEF;
  n.trap_number = 64;
  n.issuer_lid.value = 0xBEEF;
  n.toggle = true;
  n.count = 0x7FFF;
  for (std::size_t i = 0; i < n.data_details.size(); ++i) {
    n.data_details[i] = static_cast<std::uint8_t>(i + 1);
  }
  n.issuer_gid = gid("fe80::1");
  auto back = decode_notice(encode_notice(n));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, n);
  EXPECT_FALSE(back->gid_in_out_of_service().has_value());  // vendor notice
  n.is_generic = true;
  n.trap_number = 128;
  EXPECT_FALSE(n.gid_in_out_of_service().has_value());      // not trap 64/65
}

TEST(RoundTrip, PortInfoRandomBytes) {
  // Every PortInfo bit except reserved ones maps to a field: decode(random) re-encodes to the same
  // bytes once the reserved bits are cleared.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int round = 0; round < 200; ++round) {
    std::array<std::uint8_t, kPortInfoSize> bytes{};
    std::generate(bytes.begin(), bytes.end(), [&] { return static_cast<std::uint8_t>(byte(rng)); });
    bytes[34] &= 0xC7;  // reserved bits 3..5
    bytes[52] &= 0x1F;  // reserved bits 5..7
    bytes[56] = 0;      // reserved
    bytes[63] &= 0x1F;  // reserved bits 5..7
    auto info = decode_port_info(bytes);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(encode_port_info(*info), bytes);
  }
}

TEST(RoundTrip, SmInfo) {
  const SmInfo s{0x0002c90300001234ULL, 0x1122334455667788ULL, 810, 15, 3};
  auto back = decode_sm_info(encode_sm_info(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->state(), SmState::master);
}

TEST(RoundTrip, DirectedRouteSmpWithPaths) {
  SmpHeader h;
  h.directed_route = true;
  h.method = method::kGetResp;
  h.status = 0x001C;
  h.direction = true;
  h.hop_pointer = 2;
  h.hop_count = 3;
  h.tid = 99;
  h.attr_id = attr::kSmInfo;
  h.attr_mod = 5;
  h.m_key = 0xAABB;
  h.dr_slid = 4;
  h.dr_dlid = 7;
  h.initial_path = {0, 1, 9, 3};
  h.return_path = {0, 2, 4, 6};
  const auto data = encode_sm_info(SmInfo{1, 2, 3, 4, 2});
  const auto mad = encode_smp(h, data);
  auto back = decode_smp(mad);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->header, h);
  auto sm = decode_sm_info(back->data);
  ASSERT_TRUE(sm.ok());
  EXPECT_EQ(sm->act_count, 3U);
}

TEST(RoundTrip, LidRoutedSmp) {
  const auto mad = build_smp_get_lid_routed(0x77, attr::kSmInfo, 0);
  auto back = decode_smp(mad);
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->header.directed_route);
  EXPECT_EQ(back->header.method, method::kGet);
  EXPECT_EQ(back->header.attr_id, attr::kSmInfo);
  EXPECT_EQ(back->header.tid, 0x77U);
  EXPECT_EQ(mad[1], mgmt_class::kSubnLidRouted);
  EXPECT_EQ(mad[2], kSmpClassVersion);
}

TEST(RoundTrip, SmpRejectsTooLongRouteAndData) {
  const std::vector<std::uint8_t> long_path(kSmpMaxHops);
  EXPECT_THROW(build_smp_get_directed(1, attr::kPortInfo, 0, long_path), std::length_error);
  const std::vector<std::uint8_t> big_data(kSmpDataSize + 1);
  EXPECT_THROW(encode_smp(SmpHeader{}, big_data), std::length_error);
}

TEST(RoundTrip, SmpRejectsOtherClassesAndHopCounts) {
  auto mad = build_smp_get_lid_routed(1, attr::kPortInfo, 0);
  mad[1] = mgmt_class::kSubnAdm;
  EXPECT_FALSE(decode_smp(mad).ok());
  mad[1] = mgmt_class::kSubnDirectedRoute;
  mad[7] = kSmpMaxHops;  // hop count 64
  auto bad = decode_smp(mad);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("hop count"), std::string::npos);
}

}  // namespace
}  // namespace ibat::mad

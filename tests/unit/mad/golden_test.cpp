// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Golden tests: MADs captured from OpenSM 3.3.23 on ibsim (golden/README.md) decode to exactly the
// values saquery/smpquery/sminfo printed (golden/*.printed.txt), and our builders reproduce the
// request bytes the tools sent.
#include <gtest/gtest.h>

#include <algorithm>

#include "golden_file.h"
#include "mad/mcmember_record.h"
#include "mad/path_record.h"
#include "mad/port_info.h"
#include "mad/sa_mad.h"
#include "mad/sm_info.h"
#include "mad/smp.h"

namespace ibat::mad {
namespace {

using test::load_golden;

core::Gid gid(const char* text) { return *core::Gid::parse(text); }

core::PathRecord decode_first_path_record(const std::vector<std::uint8_t>& bytes) {
  auto mad = decode_sa_mad(bytes);
  EXPECT_TRUE(mad.ok());
  auto record = first_record(*mad);
  EXPECT_TRUE(record.ok()) << record.error().message;
  auto path = decode_path_record(*record);
  EXPECT_TRUE(path.ok());
  return *path;
}

TEST(Golden, PathRecordResponseHeader) {
  const auto bytes = load_golden("pr_lid.response.hex");
  auto mad = decode_sa_mad(bytes);
  ASSERT_TRUE(mad.ok()) << mad.error().message;
  EXPECT_EQ(mad->header.base_version, 1);
  EXPECT_EQ(mad->header.mgmt_class, mgmt_class::kSubnAdm);
  EXPECT_EQ(mad->header.class_version, 2);
  EXPECT_EQ(mad->header.method, method::kGetTableResp);
  EXPECT_TRUE(mad->header.is_response());
  EXPECT_EQ(mad->header.status, 0);
  EXPECT_EQ(mad->header.sa_status(), SaStatus::success);
  EXPECT_EQ(mad->header.tid, 0x000100006e28d04eULL);  // upper 32 bits rewritten by umad2sim
  EXPECT_EQ(tid_low32(mad->header.tid), 0x6e28d04eU);
  EXPECT_EQ(mad->header.attr_id, attr::kPathRecord);
  EXPECT_EQ(mad->header.attr_mod, 0U);
  EXPECT_EQ(mad->sa.rmpp.resp_time_flags, 0x01);
  EXPECT_EQ(mad->sa.sm_key, 0U);
  EXPECT_EQ(mad->sa.attr_offset, 8);
  EXPECT_EQ(mad->sa.record_bytes(), kPathRecordSize);
  EXPECT_EQ(mad->sa.component_mask, pr_mask::kDlid | pr_mask::kSlid | pr_mask::kNumbPath);
}

TEST(Golden, PathRecordByLids) {
  // saquery -p --src-to-dst 5:13 (golden/pr_lid.printed.txt)
  const auto pr = decode_first_path_record(load_golden("pr_lid.response.hex"));
  EXPECT_EQ(pr.service_id, 0U);
  EXPECT_EQ(pr.dgid, gid("fe80::10:d"));
  EXPECT_EQ(pr.sgid, gid("fe80::10:3"));
  EXPECT_EQ(pr.dlid.value, 13);
  EXPECT_EQ(pr.slid.value, 5);
  EXPECT_FALSE(pr.raw_traffic);
  EXPECT_EQ(pr.flow_label, 0U);
  EXPECT_EQ(pr.hop_limit, 0);
  EXPECT_EQ(pr.tclass, 0);
  EXPECT_TRUE(pr.reversible);  // num_path_revers 0x80
  EXPECT_EQ(pr.numb_path, 0);
  EXPECT_EQ(pr.pkey.value, 0xFFFF);
  EXPECT_EQ(pr.qos_class, 0);
  EXPECT_EQ(pr.sl, 0);
  EXPECT_EQ(pr.mtu_selector, selector::kExactly);  // mtu 0x84
  EXPECT_EQ(pr.mtu, 4);
  EXPECT_EQ(pr.rate_selector, selector::kExactly);  // rate 0x83
  EXPECT_EQ(pr.rate, 3);
  EXPECT_EQ(pr.pkt_life_selector, selector::kExactly);  // pkt_life 0x92
  EXPECT_EQ(pr.pkt_life, 18);
  EXPECT_EQ(pr.preference, 0);
  EXPECT_TRUE(pr.is_servable());
}

TEST(Golden, PathRecordByGidsToOneXHost) {
  // saquery PR --sgid fe80::10:3 --dgid fe80::10:9 (h0004 hangs on a 1x link: rate 0x82)
  const auto pr = decode_first_path_record(load_golden("pr_gid.response.hex"));
  EXPECT_EQ(pr.dgid, gid("fe80::10:9"));
  EXPECT_EQ(pr.sgid, gid("fe80::10:3"));
  EXPECT_EQ(pr.dlid.value, 11);
  EXPECT_EQ(pr.slid.value, 5);
  EXPECT_TRUE(pr.reversible);
  EXPECT_EQ(pr.pkey.value, 0xFFFF);
  EXPECT_EQ(pr.mtu, 4);
  EXPECT_EQ(pr.rate_selector, selector::kExactly);
  EXPECT_EQ(pr.rate, 2);
  EXPECT_EQ(pr.pkt_life, 18);
}

TEST(Golden, PathRecordSelectorsResponse) {
  const auto pr = decode_first_path_record(load_golden("pr_sel.response.hex"));
  EXPECT_EQ(pr.dgid, gid("fe80::10:d"));
  EXPECT_EQ(pr.dlid.value, 13);
  EXPECT_EQ(pr.slid.value, 5);
  EXPECT_EQ(pr.mtu, 4);
  EXPECT_EQ(pr.rate, 3);
  EXPECT_EQ(pr.pkt_life, 18);
}

TEST(Golden, PathRecordRequestWithSelectors) {
  // saquery PR --slid 5 --dlid 13 --sl 0 -Q 0 --mtu 3 --rate 2 --pkt_lifetime 17 -r 1
  const auto bytes = load_golden("pr_sel.request.hex");
  auto mad = decode_sa_mad(bytes);
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->header.method, method::kGetTable);
  EXPECT_EQ(mad->sa.component_mask,
            pr_mask::kDlid | pr_mask::kSlid | pr_mask::kReversible | pr_mask::kQosClass |
                pr_mask::kSl | pr_mask::kMtuSelector | pr_mask::kMtu | pr_mask::kRateSelector |
                pr_mask::kRate | pr_mask::kPktLifeSelector | pr_mask::kPktLife);
  auto pr = decode_path_record(mad->data);
  ASSERT_TRUE(pr.ok());
  EXPECT_EQ(pr->dlid.value, 13);
  EXPECT_EQ(pr->slid.value, 5);
  EXPECT_TRUE(pr->reversible);
  EXPECT_EQ(pr->mtu_selector, selector::kGreaterThan);
  EXPECT_EQ(pr->mtu, 3);
  EXPECT_EQ(pr->rate_selector, selector::kGreaterThan);
  EXPECT_EQ(pr->rate, 2);
  EXPECT_EQ(pr->pkt_life_selector, selector::kGreaterThan);
  EXPECT_EQ(pr->pkt_life, 17);
  EXPECT_EQ(pr->pkey.value, 0);  // not in the mask, sent as zero
}

TEST(Golden, PathRecordRequestRebuiltByteForByte) {
  // saquery PR --sgid fe80::10:3 --dgid fe80::10:9 -r 1 -n 1 --pkey 0xffff, sent as GetTable.
  const auto captured = load_golden("pr_gid.request.hex");
  ASSERT_EQ(captured.size(), kMadSize);
  core::PathRecord query;
  query.sgid = gid("fe80::10:3");
  query.dgid = gid("fe80::10:9");
  query.reversible = true;
  query.numb_path = 1;
  query.pkey.value = 0xFFFF;
  const std::uint64_t mask =
      pr_mask::kDgid | pr_mask::kSgid | pr_mask::kReversible | pr_mask::kNumbPath | pr_mask::kPkey;
  SaHeader sa;
  sa.component_mask = mask;
  const auto built = build_sa_mad(sa_request_header(method::kGetTable, 0x42921e9c, attr::kPathRecord),
                                  sa, encode_path_record(query));
  EXPECT_TRUE(std::equal(built.begin(), built.end(), captured.begin()));
  // The GET form differs only in the method byte.
  auto get = build_path_record_get(0x42921e9c, query, mask);
  get[3] = method::kGetTable;
  EXPECT_EQ(get, built);
}

TEST(Golden, PathRecordNoRecords) {
  // Unknown DGID with GetTable: status 0, AttributeOffset 0, no record.
  const auto bytes = load_golden("pr_unknown.response.hex");
  auto mad = decode_sa_mad(bytes);
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->sa.attr_offset, 0);
  EXPECT_EQ(mad->sa.component_mask, pr_mask::kDgid | pr_mask::kSgid);
  EXPECT_TRUE(mad->data.empty());
  EXPECT_FALSE(first_record(*mad).ok());
}

TEST(Golden, BroadcastGroupMcMemberRecord) {
  // saquery MCMR --mgid ff12:401b:ffff::ffff:ffff (golden/mcmr.printed.txt)
  const auto request = load_golden("mcmr.request.hex");
  auto req = decode_sa_mad(request);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->header.attr_id, attr::kMcMemberRecord);
  EXPECT_EQ(req->sa.component_mask, mcm_mask::kMgid);
  auto query = decode_mcmember_record(req->data);
  ASSERT_TRUE(query.ok());
  EXPECT_EQ(query->mgid, ipoib_broadcast_mgid(core::Pkey{0xFFFF}));

  const auto response = load_golden("mcmr.response.hex");
  auto mad = decode_sa_mad(response);
  ASSERT_TRUE(mad.ok());
  EXPECT_EQ(mad->sa.attr_offset, 7);
  auto record = first_record(*mad);
  ASSERT_TRUE(record.ok());
  auto m = decode_mcmember_record(*record);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->mgid, gid("ff12:401b:ffff::ffff:ffff"));
  EXPECT_TRUE(m->port_gid.is_zero());
  EXPECT_EQ(m->qkey, 0xb1bU);
  EXPECT_EQ(m->mlid.value, 0xc000);
  EXPECT_EQ(m->mtu_selector, selector::kExactly);  // mtu 0x84
  EXPECT_EQ(m->mtu, 4);
  EXPECT_EQ(m->tclass, 0);
  EXPECT_EQ(m->pkey.value, 0xffff);
  EXPECT_EQ(m->rate_selector, selector::kExactly);  // rate 0x83
  EXPECT_EQ(m->rate, 3);
  EXPECT_EQ(m->pkt_life_selector, selector::kExactly);  // pkt_life 0x92
  EXPECT_EQ(m->pkt_life, 18);
  EXPECT_EQ(m->sl, 0);
  EXPECT_EQ(m->flow_label, 0U);
  EXPECT_EQ(m->hop_limit, 0);
  EXPECT_EQ(m->scope, 2);
  EXPECT_EQ(m->join_state, 0);
  EXPECT_FALSE(m->proxy_join);
}

void expect_port_info_of_host_lid5(const PortInfo& p) {
  // smpquery portinfo 5 1 / smpquery -D portinfo 0 from h0001 (golden/portinfo_*.printed.txt)
  EXPECT_EQ(p.m_key, 0U);
  EXPECT_EQ(p.gid_prefix, 0xfe80000000000000ULL);
  EXPECT_EQ(p.lid, 5);
  EXPECT_EQ(p.master_sm_lid, 1);
  EXPECT_EQ(p.capability_mask, 0x50c048U);
  EXPECT_EQ(p.diag_code, 0);
  EXPECT_EQ(p.m_key_lease_period, 4089);
  EXPECT_EQ(p.local_port_num, 1);
  EXPECT_EQ(p.link_width_enabled, 2);     // 4X
  EXPECT_EQ(p.link_width_supported, 0x1f);
  EXPECT_EQ(p.link_width_active, 2);      // 4X
  EXPECT_EQ(p.link_speed_supported, 7);   // 2.5 or 5.0 or 10.0 Gbps
  EXPECT_EQ(p.state(), PortState::active);
  EXPECT_EQ(p.port_physical_state, 5);    // LinkUp
  EXPECT_EQ(p.link_down_default_state, 2);  // Polling
  EXPECT_EQ(p.m_key_protect_bits, 0);
  EXPECT_EQ(p.lmc, 0);
  EXPECT_EQ(p.link_speed_active, 1);      // 2.5 Gbps
  EXPECT_EQ(p.link_speed_enabled, 1);
  EXPECT_EQ(p.neighbor_mtu, 4);           // 2048
  EXPECT_EQ(p.master_sm_sl, 0);
  EXPECT_EQ(p.vl_cap, 4);                 // VL0-7
  EXPECT_EQ(p.init_type, 0);
  EXPECT_EQ(p.vl_high_limit, 0);
  EXPECT_EQ(p.vl_arbitration_high_cap, 8);
  EXPECT_EQ(p.vl_arbitration_low_cap, 8);
  EXPECT_EQ(p.init_type_reply, 0);
  EXPECT_EQ(p.mtu_cap, 4);                // 2048
  EXPECT_EQ(p.vl_stall_count, 7);
  EXPECT_EQ(p.hoq_life, 0);
  EXPECT_EQ(p.operational_vls, 4);        // VL0-7
  EXPECT_FALSE(p.partition_enforcement_inbound);
  EXPECT_FALSE(p.partition_enforcement_outbound);
  EXPECT_FALSE(p.filter_raw_inbound);
  EXPECT_FALSE(p.filter_raw_outbound);
  EXPECT_EQ(p.m_key_violations, 0);
  EXPECT_EQ(p.p_key_violations, 0);
  EXPECT_EQ(p.q_key_violations, 0);
  EXPECT_EQ(p.guid_cap, 32);
  EXPECT_FALSE(p.client_reregister);
  EXPECT_EQ(p.multicast_pkey_trap_suppression, 0);
  EXPECT_EQ(p.subnet_timeout, 31);
  EXPECT_EQ(p.resp_time_value, 0);
  EXPECT_EQ(p.local_phy_errors, 0);
  EXPECT_EQ(p.overrun_errors, 0);
  EXPECT_EQ(p.max_credit_hint, 0);
  EXPECT_EQ(p.link_round_trip_latency, 0U);
  EXPECT_EQ(p.capability_mask2, 0x30);
  EXPECT_EQ(p.link_speed_ext_active, 0);
  EXPECT_EQ(p.link_speed_ext_supported, 0);
  EXPECT_EQ(p.link_speed_ext_enabled, 0);
}

TEST(Golden, PortInfoLidRouted) {
  const auto request = load_golden("portinfo_lid.request.hex");
  ASSERT_EQ(request.size(), kMadSize);
  const auto built = build_smp_get_lid_routed(0x5d32ad9a, attr::kPortInfo, 1);
  EXPECT_TRUE(std::equal(built.begin(), built.end(), request.begin()));
  const auto response = load_golden("portinfo_lid.response.hex");
  auto smp = decode_smp(response);
  ASSERT_TRUE(smp.ok()) << smp.error().message;
  EXPECT_FALSE(smp->header.directed_route);
  EXPECT_EQ(smp->header.method, method::kGetResp);
  EXPECT_EQ(smp->header.status, 0);
  EXPECT_EQ(smp->header.attr_id, attr::kPortInfo);
  EXPECT_EQ(smp->header.attr_mod, 1U);
  EXPECT_EQ(tid_low32(smp->header.tid), 0x5d32ad9aU);
  auto info = decode_port_info(smp->data);
  ASSERT_TRUE(info.ok());
  expect_port_info_of_host_lid5(*info);
}

TEST(Golden, PortInfoDirectedRouteToLocalPort) {
  const auto request = load_golden("portinfo_dr0.request.hex");
  ASSERT_EQ(request.size(), kMadSize);
  const auto built = build_smp_get_directed(0x5bde5a2f, attr::kPortInfo, 0, {});
  EXPECT_TRUE(std::equal(built.begin(), built.end(), request.begin()));

  auto response = load_golden("portinfo_dr0.response.hex");
  response.resize(224);  // only 224 bytes are valid under umad2sim (docs/design.md §4)
  auto smp = decode_smp(response);
  ASSERT_TRUE(smp.ok()) << smp.error().message;
  EXPECT_TRUE(smp->header.directed_route);
  EXPECT_TRUE(smp->header.direction);
  EXPECT_EQ(smp->header.status, 0);
  EXPECT_EQ(smp->header.hop_pointer, 0);
  EXPECT_EQ(smp->header.hop_count, 0);
  EXPECT_EQ(smp->header.dr_slid, kPermissiveLid);
  EXPECT_EQ(smp->header.dr_dlid, kPermissiveLid);
  auto info = decode_port_info(smp->data);
  ASSERT_TRUE(info.ok());
  expect_port_info_of_host_lid5(*info);
}

TEST(Golden, PortInfoDirectedRouteOneHop) {
  // smpquery -D portinfo 0,1 from h0001: the leaf switch's port 0 (LID 4).
  const auto request = load_golden("portinfo_dr1.request.hex");
  const std::uint8_t path[] = {1};
  const auto built = build_smp_get_directed(0x1fa78112, attr::kPortInfo, 0, path);
  EXPECT_TRUE(std::equal(built.begin(), built.end(), request.begin()));

  const auto response = load_golden("portinfo_dr1.response.hex");
  auto smp = decode_smp(response);
  ASSERT_TRUE(smp.ok());
  EXPECT_TRUE(smp->header.direction);
  EXPECT_EQ(smp->header.hop_count, 1);
  EXPECT_EQ(smp->header.initial_path[1], 1);
  EXPECT_EQ(smp->header.return_path[1], 2);  // h0001 hangs on leaf0 port 2
  auto info = decode_port_info(smp->data);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->lid, 4);
  EXPECT_EQ(info->master_sm_lid, 1);
  EXPECT_EQ(info->capability_mask, 0xc048U);
  EXPECT_EQ(info->local_port_num, 2);  // the port the SMP entered the switch on
  EXPECT_EQ(info->link_width_enabled, 2);
}

TEST(Golden, SmInfoFromMaster) {
  // sminfo: "sm lid 1 sm guid 0x100001, activity count 810 priority 0 state 3 SMINFO_MASTER"
  const auto request = load_golden("sminfo.request.hex");
  auto req = decode_smp(request);
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->header.method, method::kGet);
  EXPECT_EQ(req->header.attr_id, attr::kSmInfo);

  const auto response = load_golden("sminfo.response.hex");
  auto smp = decode_smp(response);
  ASSERT_TRUE(smp.ok());
  EXPECT_EQ(smp->header.method, method::kGetResp);
  auto sm = decode_sm_info(smp->data);
  ASSERT_TRUE(sm.ok());
  EXPECT_EQ(sm->guid, 0x100001U);
  EXPECT_EQ(sm->sm_key, 1U);  // OpenSM's default SM_Key (sminfo does not print it)
  EXPECT_EQ(sm->act_count, 810U);
  EXPECT_EQ(sm->priority, 0);
  EXPECT_EQ(sm->state(), SmState::master);
}

}  // namespace
}  // namespace ibat::mad

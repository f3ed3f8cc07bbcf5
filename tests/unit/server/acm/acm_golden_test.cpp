// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ACM codec against golden bytes of the real ib_acme (rdma-core 44, Debian ibacm): the requests
// it sent, and the responses it accepted and printed (data/*.out.txt), captured by
// capture_ib_acme.py (see README.md).
#include <gtest/gtest.h>

#include "acm_fixtures.h"
#include "server/acm/acm_messages.h"

namespace ibat::acm {
namespace {

using test::load_capture;

Request decode_ok(const std::vector<std::uint8_t>& bytes) {
  auto r = decode_request(bytes);
  if (auto* e = std::get_if<RequestError>(&r)) {
    ADD_FAILURE() << e->message;
    return Request{};
  }
  return std::get<Request>(r);
}

// The path capture_ib_acme.py answered with (and ib_acme printed).
core::PathRecord answered_path() {
  core::PathRecord p;
  p.dgid = *core::Gid::parse("fe80::2:c903:0:2");
  p.sgid = *core::Gid::parse("fe80::2:c903:0:1");
  p.dlid = core::Lid{7};
  p.slid = core::Lid{3};
  p.flow_label = 0x12345;
  p.hop_limit = 64;
  p.tclass = 7;
  p.reversible = true;
  p.numb_path = 1;
  p.pkey = core::Pkey{0xFFFF};
  p.sl = 3;
  p.mtu_selector = 2;
  p.mtu = 4;
  p.rate_selector = 2;
  p.rate = 7;
  p.pkt_life_selector = 2;
  p.pkt_life = 18;
  return p;
}

TEST(AcmGolden, IbAcmeResolveByGidIsAPathRequest) {
  const auto req = decode_ok(load_capture("resolve_gid.req.bin"));
  ASSERT_TRUE(std::holds_alternative<ResolvePathRequest>(req));
  const auto& r = std::get<ResolvePathRequest>(req);
  EXPECT_EQ(r.path.dgid.to_string(), "fe80::2:c903:0:2");
  EXPECT_EQ(r.path.sgid.to_string(), "fe80::2:c903:0:1");
  EXPECT_EQ(r.path.dlid.value, 0);
  EXPECT_TRUE(r.path.reversible);
  EXPECT_EQ(r.path.numb_path, 1);
  EXPECT_EQ(r.flags, 0u);
  EXPECT_EQ(r.tid, Tid{});
}

TEST(AcmGolden, IbAcmeResolveByLidIsAPathRequest) {
  const auto req = decode_ok(load_capture("resolve_lid.req.bin"));
  ASSERT_TRUE(std::holds_alternative<ResolvePathRequest>(req));
  const auto& r = std::get<ResolvePathRequest>(req);
  EXPECT_EQ(r.path.dlid.value, 7);
  EXPECT_EQ(r.path.slid.value, 3);
  EXPECT_TRUE(r.path.dgid.is_zero());
}

TEST(AcmGolden, IbAcmeResolveByIpIsAnAddressRequest) {
  const auto req = decode_ok(load_capture("resolve_ip.req.bin"));
  ASSERT_TRUE(std::holds_alternative<ResolveAddressRequest>(req));
  const auto& r = std::get<ResolveAddressRequest>(req);
  ASSERT_TRUE(r.source.has_value());
  EXPECT_EQ(r.source->flags, kEpFlagSource);
  EXPECT_EQ(std::get<core::IpAddr>(r.source->address).to_string(), "192.168.0.1");
  EXPECT_EQ(r.dest.flags, kEpFlagDest);
  EXPECT_EQ(std::get<core::IpAddr>(r.dest.address).to_string(), "192.168.0.2");
}

TEST(AcmGolden, IbAcmePerfQueryAsksForServiceCounters) {
  const auto req = decode_ok(load_capture("perf_query.req.bin"));
  ASSERT_TRUE(std::holds_alternative<PerfQueryRequest>(req));
  EXPECT_EQ(std::get<PerfQueryRequest>(req).ep_index, 0);
  EXPECT_FALSE(std::get<PerfQueryRequest>(req).source.has_value());
}

TEST(AcmGolden, IbAcmeEnumeratesEndpointsByIndexAndPort) {
  // `ib_acme -e`: endpoint 1 on port 1 (answered, phys_port_cnt 1), then endpoint 2 on ports 1..255.
  const auto stream = load_capture("ep_query_all.req.bin");
  std::span<const std::uint8_t> rest(stream);
  std::vector<EpQueryRequest> queries;
  while (!rest.empty()) {
    const Framing f = frame(rest);
    ASSERT_EQ(f.kind, Framing::Kind::complete);
    const auto req = decode_ok({rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(f.length)});
    ASSERT_TRUE(std::holds_alternative<EpQueryRequest>(req));
    queries.push_back(std::get<EpQueryRequest>(req));
    rest = rest.subspan(f.length);
  }
  ASSERT_EQ(queries.size(), 256u);
  EXPECT_EQ(queries[0].ep_index, 1);
  EXPECT_EQ(queries[0].port, 1);
  for (std::size_t i = 1; i < queries.size(); ++i) {
    EXPECT_EQ(queries[i].ep_index, 2);
    EXPECT_EQ(queries[i].port, i);
  }
}

TEST(AcmGolden, ResolveResponseIsWhatIbAcmePrinted) {
  ResolveResponse resp;
  resp.path = answered_path();
  EXPECT_EQ(encode(resp), load_capture("resolve_gid.resp.bin"));
  const auto printed = test::load_text("resolve_gid.out.txt");
  EXPECT_NE(printed.find("  dlid: 7\n"), std::string::npos);
  EXPECT_NE(printed.find("  packet lifetime: 18\n"), std::string::npos);
}

TEST(AcmGolden, ErrorResponseIsWhatIbAcmeReportedAsNoData) {
  const auto req = decode_ok(load_capture("resolve_nodata.req.bin"));
  ASSERT_TRUE(std::holds_alternative<ResolvePathRequest>(req));
  EXPECT_EQ(encode_status_response(Opcode::resolve, std::get<ResolvePathRequest>(req).tid, Status::enodata),
            load_capture("resolve_nodata.resp.bin"));
  EXPECT_NE(test::load_text("resolve_nodata.out.txt").find("No data available"), std::string::npos);
}

TEST(AcmGolden, PerfResponseIsWhatIbAcmePrinted) {
  PerfQueryResponse resp;
  resp.counters = {1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(encode(resp), load_capture("perf_query.resp.bin"));
  EXPECT_NE(test::load_text("perf_query.out.txt").find("SOCK,1,2,3,4,5,6,7\n"), std::string::npos);
}

TEST(AcmGolden, EpQueryResponsesAreWhatIbAcmePrinted) {
  EpQueryResponse found;
  found.ep = EpConfig{0x0002C90300000001ULL, 1, 1, core::Pkey{0xFFFF}, "ibat", {"192.168.0.1", "node1"}};
  EXPECT_EQ(encode(found), load_capture("ep_query.resp.bin"));
  EXPECT_NE(test::load_text("ep_query.out.txt").find("SOCK,0x0002c90300000001,1,0xffff,1,ibat,192.168.0.1,node1"),
            std::string::npos);

  // ib_acme -e: the first answer, then EINVAL for each further query.
  std::vector<std::uint8_t> all = encode(found);
  for (int i = 1; i < 256; ++i) {
    const auto no = encode_status_response(Opcode::ep_query, Tid{}, Status::einval);
    all.insert(all.end(), no.begin(), no.end());
  }
  EXPECT_EQ(all, load_capture("ep_query_all.resp.bin"));
}

}  // namespace
}  // namespace ibat::acm

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The ACM codec against messages built byte by byte from the acm.h layout: every request shape
// rdma-core clients send, every rejection with the status ibacm would give, framing, and encoders.
#include <gtest/gtest.h>

#include "acm_fixtures.h"
#include "server/acm/acm_messages.h"
#include "server/acm/path_record_wire.h"

namespace ibat::acm {
namespace {

using test::header;
using test::put_entry;

constexpr std::uint16_t kName = 1, kIp = 2, kIp6 = 3, kPath = 0x10;

std::vector<std::uint8_t> resolve_with(const std::vector<std::vector<std::uint8_t>>& entries) {
  auto msg = header(0x01, 0, 0, 0, static_cast<std::uint16_t>(16 + 72 * entries.size()), true, 0x0102030405060708ULL);
  for (const auto& e : entries) msg.insert(msg.end(), e.begin(), e.end());
  return msg;
}

std::vector<std::uint8_t> entry(std::uint32_t flags, std::uint16_t type, const std::vector<std::uint8_t>& info) {
  std::vector<std::uint8_t> out;
  put_entry(out, flags, type, info);
  return out;
}

RequestError error_of(const std::vector<std::uint8_t>& msg) {
  auto r = decode_request(msg);
  if (!std::holds_alternative<RequestError>(r)) ADD_FAILURE() << "decoded";
  return std::holds_alternative<RequestError>(r) ? std::get<RequestError>(r) : RequestError{};
}

template <typename T>
T decode_as(const std::vector<std::uint8_t>& msg) {
  auto r = decode_request(msg);
  if (auto* e = std::get_if<RequestError>(&r)) ADD_FAILURE() << e->message;
  if (!std::holds_alternative<Request>(r) || !std::holds_alternative<T>(std::get<Request>(r))) {
    ADD_FAILURE() << "not the expected request type";
    return T{};
  }
  return std::get<T>(std::get<Request>(r));
}

TEST(AcmPathRecord, RoundTripsEveryField) {
  core::PathRecord p;
  p.service_id = 0x1122334455667788ULL;
  p.dgid = *core::Gid::parse("fe80::1");
  p.sgid = *core::Gid::parse("fe80::2");
  p.dlid = core::Lid{0xBFFF};
  p.slid = core::Lid{1};
  p.flow_label = 0xFFFFF;
  p.hop_limit = 255;
  p.tclass = 0xAB;
  p.reversible = true;
  p.numb_path = 0x7F;
  p.pkey = core::Pkey{0x8001};
  p.qos_class = 0xFFF;
  p.sl = 15;
  p.mtu_selector = 3;
  p.mtu = 0x3F;
  p.rate_selector = 1;
  p.rate = 16;
  p.pkt_life_selector = 2;
  p.pkt_life = 0x3F;
  p.preference = 9;
  std::array<std::uint8_t, 64> wire{};
  encode_path_record(p, wire);
  EXPECT_EQ(decode_path_record(wire), p);
}

TEST(AcmPathRecord, MatchesTheIbvPathRecordLayout) {
  std::vector<std::uint8_t> wire;
  test::put_be(wire, 0x0000000000000001ULL, 8);                       // service_id
  for (int i = 0; i < 16; ++i) wire.push_back(static_cast<std::uint8_t>(0xD0 + i));  // dgid
  for (int i = 0; i < 16; ++i) wire.push_back(static_cast<std::uint8_t>(0x50 + i));  // sgid
  test::put_be(wire, 0x0102, 2);                                     // dlid
  test::put_be(wire, 0x0304, 2);                                     // slid
  test::put_be(wire, (0xABCDEu << 8) | 0x40, 4);                     // flow label | hop limit
  wire.push_back(0x11);                                              // tclass
  wire.push_back(0x81);                                              // reversible | numb_path 1
  test::put_be(wire, 0x7FFF, 2);                                     // pkey
  test::put_be(wire, (0x123u << 4) | 0x5, 2);                        // qos class | sl
  wire.insert(wire.end(), {0x84, 0x46, 0x92, 0x07, 0, 0, 0, 0, 0, 0});  // mtu rate life pref rsvd
  ASSERT_EQ(wire.size(), 64u);
  const auto p = decode_path_record(std::span<const std::uint8_t, 64>(wire.data(), 64));
  EXPECT_EQ(p.service_id, 1u);
  EXPECT_EQ(p.dgid.raw[0], 0xD0);
  EXPECT_EQ(p.sgid.raw[15], 0x5F);
  EXPECT_EQ(p.dlid.value, 0x0102);
  EXPECT_EQ(p.slid.value, 0x0304);
  EXPECT_EQ(p.flow_label, 0xABCDEu);
  EXPECT_EQ(p.hop_limit, 0x40);
  EXPECT_EQ(p.tclass, 0x11);
  EXPECT_TRUE(p.reversible);
  EXPECT_EQ(p.numb_path, 1);
  EXPECT_EQ(p.pkey.value, 0x7FFF);
  EXPECT_EQ(p.qos_class, 0x123);
  EXPECT_EQ(p.sl, 5);
  EXPECT_EQ(p.mtu_selector, 2);
  EXPECT_EQ(p.mtu, 4);
  EXPECT_EQ(p.rate_selector, 1);
  EXPECT_EQ(p.rate, 6);
  EXPECT_EQ(p.pkt_life_selector, 2);
  EXPECT_EQ(p.pkt_life, 0x12);
  EXPECT_EQ(p.preference, 7);
  std::array<std::uint8_t, 64> again{};
  encode_path_record(p, again);
  EXPECT_TRUE(std::equal(again.begin(), again.end(), wire.begin()));
}

TEST(AcmDecode, TidIsEchoedByteForByte) {
  const auto r = decode_as<ResolvePathRequest>(resolve_with({entry(kFlagQuerySa, kPath, [] {
    std::vector<std::uint8_t> info(64, 0);
    info[8] = 0xfe;
    info[9] = 0x80;
    info[23] = 2;
    return info;
  }())}));
  EXPECT_EQ(r.tid, (Tid{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(r.flags, kFlagQuerySa);
  EXPECT_EQ(r.path.dgid.to_string(), "fe80::2");
  EXPECT_EQ(encode_status_response(Opcode::resolve, r.tid, Status::etimedout)[8], 1);
}

TEST(AcmDecode, NameAndIpv6Addresses) {
  std::vector<std::uint8_t> name = {'n', 'o', 'd', 'e', '2'};
  std::vector<std::uint8_t> v6(16, 0);
  v6[0] = 0xfe;
  v6[1] = 0x80;
  v6[15] = 9;
  const auto by_name = decode_as<ResolveAddressRequest>(resolve_with({entry(kEpFlagDest, kName, name)}));
  EXPECT_EQ(std::get<std::string>(by_name.dest.address), "node2");
  EXPECT_FALSE(by_name.source.has_value());

  const std::vector<std::uint8_t> full_name(64, 'x');  // no NUL: all 64 bytes are the name
  const auto long_name = decode_as<ResolveAddressRequest>(resolve_with({entry(kEpFlagDest, kName, full_name)}));
  EXPECT_EQ(std::get<std::string>(long_name.dest.address).size(), 64u);

  const auto by_v6 = decode_as<ResolveAddressRequest>(resolve_with({entry(kEpFlagDest, kIp6, v6)}));
  const auto& ip = std::get<core::IpAddr>(by_v6.dest.address);
  EXPECT_FALSE(ip.v4);
  EXPECT_EQ(ip.to_string(), "fe80::9");
}

TEST(AcmDecode, LibrdmacmRequestWithPathHintResolvesTheAddresses) {
  // librdmacm's ucma_ib_resolve: source IP, destination IP (+NODELAY), then a flag-less path hint.
  const auto r = decode_as<ResolveAddressRequest>(resolve_with({entry(kEpFlagSource, kIp, {10, 0, 0, 1}),
                                                                entry(kEpFlagDest | kFlagNoDelay, kIp, {10, 0, 0, 2}),
                                                                entry(0, kPath, {})}));
  ASSERT_TRUE(r.source.has_value());
  EXPECT_EQ(std::get<core::IpAddr>(r.source->address).to_string(), "10.0.0.1");
  EXPECT_EQ(std::get<core::IpAddr>(r.dest.address).to_string(), "10.0.0.2");
  EXPECT_EQ(r.dest.flags, kEpFlagDest | kFlagNoDelay);
}

TEST(AcmDecode, PerfQueryForTheEndpointOfASourceAddress) {
  // ib_acme -P s -s 10.0.0.1: network-order length, entry flags/type in host order.
  auto msg = header(0x02, 0, 0, 0, 88, false);
  put_entry(msg, kEpFlagSource, kIp, {10, 0, 0, 1});
  const auto r = decode_as<PerfQueryRequest>(msg);
  ASSERT_TRUE(r.source.has_value());
  EXPECT_EQ(std::get<core::IpAddr>(r.source->address).to_string(), "10.0.0.1");

  const auto indexed = decode_as<PerfQueryRequest>(header(0x02, 0, 0, 3, 16, false));
  EXPECT_EQ(indexed.ep_index, 3);
}

struct Rejection {
  const char* what;
  std::vector<std::uint8_t> msg;
  Status status;
};

TEST(AcmDecode, RejectsBadRequestsWithTheStatusIbacmGives) {
  const std::vector<std::uint8_t> no_dest_path(64, 0);
  auto partial_entry = header(0x01, 0, 0, 0, 16 + 70, true);  // 70 bytes: not a whole entry
  partial_entry.resize(16 + 70, 0);
  auto bad_perf = header(0x02, 0, 0, 0, 88, false);
  put_entry(bad_perf, kEpFlagSource, kPath, {});
  const Rejection cases[] = {
      {"partial entry", partial_entry, Status::einval},
      {"no entries", header(0x01, 0, 0, 0, 16, true), Status::edesttype},
      {"path without DGID or DLID", resolve_with({entry(0, kPath, no_dest_path)}), Status::edestaddr},
      {"two sources", resolve_with({entry(kEpFlagSource, kIp, {1}), entry(kEpFlagSource, kIp, {2}),
                                     entry(kEpFlagDest, kIp, {3})}), Status::esrcaddr},
      {"two destinations", resolve_with({entry(kEpFlagDest, kIp, {1}), entry(kEpFlagDest, kIp, {2})}), Status::edestaddr},
      {"source is a path", resolve_with({entry(kEpFlagDest, kIp, {1}), entry(kEpFlagSource, kPath, {})}), Status::esrctype},
      {"unknown destination type", resolve_with({entry(kEpFlagDest, 7, {1})}), Status::edesttype},
      {"no destination flag", resolve_with({entry(kEpFlagSource, kIp, {1})}), Status::edesttype},
      {"endpoint index 0", header(0x03, 0, 0, 1, 16, false), Status::einval},
      {"perf source is a path", bad_perf, Status::esrctype},
  };
  for (const auto& c : cases) {
    const auto e = error_of(c.msg);
    EXPECT_FALSE(e.fatal) << c.what << ": " << e.message;
    EXPECT_EQ(e.status, c.status) << c.what << ": " << e.message;
  }
}

TEST(AcmDecode, BrokenFramingIsFatal) {
  auto wrong_version = header(0x01, 0, 0, 0, 16, true);
  wrong_version[0] = 2;
  const std::vector<std::vector<std::uint8_t>> cases = {
      wrong_version,
      header(0x81, 0, 0, 0, 16, true),   // a response sent as a request
      header(0x04, 0, 0, 0, 16, false),  // unknown opcode
      header(0x02, 0, 0, 0, 15, false),  // shorter than a header
      header(0x02, 0, 0, 0, 593, false), // longer than struct acm_msg
      header(0x02, 0, 0, 0, 17, false),  // says 17, holds 16
      {1, 2, 0},                         // not even a header
  };
  for (const auto& msg : cases) {
    const auto e = error_of(msg);
    EXPECT_TRUE(e.fatal) << e.message;
    EXPECT_FALSE(e.message.empty());
  }
}

TEST(AcmFrame, WaitsForTheWholeMessageThenReportsItsLength) {
  auto two = resolve_with({entry(kEpFlagDest, kIp, {1, 2, 3, 4})});
  const std::size_t first = two.size();
  const auto perf = header(0x02, 0, 0, 0, 16, false);
  two.insert(two.end(), perf.begin(), perf.end());
  for (std::size_t n = 0; n < first; ++n)
    EXPECT_EQ(frame(std::span(two).first(n)).kind, Framing::Kind::need_more) << n;
  const auto f = frame(two);
  EXPECT_EQ(f.kind, Framing::Kind::complete);
  EXPECT_EQ(f.length, first);
  const auto g = frame(std::span(two).subspan(first));
  EXPECT_EQ(g.kind, Framing::Kind::complete);
  EXPECT_EQ(g.length, 16u);
  EXPECT_EQ(frame(std::vector<std::uint8_t>{7}).kind, Framing::Kind::invalid);
}

TEST(AcmEncode, ResolveResponseWithSourceCarriesItAsSecondEntry) {
  ResolveResponse resp;
  resp.tid = Tid{9, 9, 9, 9, 9, 9, 9, 9};
  resp.path.dlid = core::Lid{5};
  resp.source = EpAddr{kEpFlagSource, *core::IpAddr::parse("10.0.0.1")};
  const auto out = encode(resp);
  auto expected = header(0x81, 0, 0, 0, 160, true, 0x0909090909090909ULL);
  std::array<std::uint8_t, 64> path{};
  encode_path_record(resp.path, path);
  put_entry(expected, 0x2B, kPath, {path.begin(), path.end()});
  put_entry(expected, kEpFlagSource, kIp, {10, 0, 0, 1});
  EXPECT_EQ(out, expected);
}

TEST(AcmEncode, StatusResponsesUseTheByteOrderOfTheirOpcode) {
  EXPECT_EQ(encode_status_response(Opcode::resolve, Tid{}, Status::esrcaddr), header(0x81, 7, 0, 0, 16, true));
  EXPECT_EQ(encode_status_response(Opcode::perf_query, Tid{}, Status::esrcaddr), header(0x82, 7, 0, 0, 16, false));
  ResolveResponse failed;
  failed.status = Status::etimedout;
  EXPECT_EQ(encode(failed), header(0x81, 6, 0, 0, 16, true));
}

TEST(AcmEncode, CapsWhatDoesNotFitInAnAcmMessage) {
  EpQueryResponse ep;
  ep.ep.provider = std::string(100, 'p');
  ep.ep.addresses.assign(10, std::string(70, 'a'));
  const auto out = encode(ep);
  EXPECT_EQ(out.size(), 16 + 80 + kMaxEpAddresses * 64);
  EXPECT_LE(out.size(), kMaxMessageLength);
  EXPECT_EQ(out[16 + 14], 0);
  EXPECT_EQ(out[16 + 15], kMaxEpAddresses);
  EXPECT_EQ(out[16 + 16 + 62], 'p');
  EXPECT_EQ(out[16 + 16 + 63], 0);  // provider name NUL-terminated
  EXPECT_EQ(out[16 + 80 + 63], 0);  // each address NUL-terminated

  PerfQueryResponse perf;
  perf.counters.assign(100, 1);
  const auto p = encode(perf);
  EXPECT_EQ(p.size(), kMaxMessageLength);
  EXPECT_EQ(p[3], kMaxCounters);
}

}  // namespace
}  // namespace ibat::acm

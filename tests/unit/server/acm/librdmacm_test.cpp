// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// librdmacm's ACM client against the codec: requests built field by field the way librdmacm's
// ucma_ib_resolve() builds them (its private acm_hdr / acm_ep_addr_data structs, plain stores, so
// host-order length/flags/type, and <infiniband/sa.h>'s big-endian ibv_path_record), and replies
// judged the way ucma_ib_resolve() and ucma_ib_save_resp() judge them, plus the kernel's rule for
// RDMA_OPTION_IB_PATH (a path whose flags are exactly GMP|PRIMARY|BIDIRECTIONAL). docs/acm.md.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <infiniband/sa.h>

#include <cstring>

#include "server/acm/acm_messages.h"

namespace ibat::acm {
namespace {

// librdmacm/acm.c's private copies of the ACM structs (uint16_t length: host order).
struct LibAcmHdr {
  std::uint8_t version;
  std::uint8_t opcode;
  std::uint8_t status;
  std::uint8_t data[3];
  std::uint16_t length;
  std::uint64_t tid;
};
union LibAcmEpInfo {
  std::uint8_t addr[64];
  std::uint8_t name[64];
  ibv_path_record path;
};
struct LibAcmEpAddrData {
  std::uint32_t flags;
  std::uint16_t type;
  std::uint16_t reserved;
  LibAcmEpInfo info;
};
struct LibAcmMsg {
  LibAcmHdr hdr;
  LibAcmEpAddrData resolve_data[8];  // ACM_MSG_DATA_LENGTH = 8 entries
};
static_assert(sizeof(LibAcmHdr) == 16 && sizeof(LibAcmEpAddrData) == 72 && sizeof(LibAcmMsg) == 592);

constexpr std::uint32_t kLibSource = 1, kLibDest = 2, kLibNoDelay = 1u << 30;
constexpr std::uint16_t kLibIp = 2, kLibPath = 0x10;

// What ucma_ib_resolve() sends for rdma_getaddrinfo("10.0.0.2") from 10.0.0.1 with a route hint
// (hints->ai_route_len == sizeof(struct ibv_path_data)): source IP, destination IP, path hint.
LibAcmMsg librdmacm_request(bool numeric_host) {
  LibAcmMsg msg;
  std::memset(&msg, 0, sizeof msg);
  msg.hdr.version = 1;
  msg.hdr.opcode = 0x01;
  msg.hdr.length = 16;
  LibAcmEpAddrData* data = &msg.resolve_data[0];
  data->flags = kLibSource;
  data->type = kLibIp;
  const std::uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {10, 0, 0, 2};
  std::memcpy(data->info.addr, src, 4);
  ++data;
  msg.hdr.length += 72;
  data->flags = kLibDest | (numeric_host ? kLibNoDelay : 0);
  data->type = kLibIp;
  std::memcpy(data->info.addr, dst, 4);
  ++data;
  msg.hdr.length += 72;
  ibv_path_data hint;  // the caller's ai_route: a P_Key and reversible, nothing else
  std::memset(&hint, 0, sizeof hint);
  hint.path.pkey = htons(0xffff);
  hint.path.reversible_numpath = 0x81;
  std::memcpy(&data->info.path, &hint.path, sizeof hint.path);
  data->type = kLibPath;  // flags stay 0
  msg.hdr.length += 72;
  return msg;
}

std::span<const std::uint8_t> sent_bytes(const LibAcmMsg& msg) {  // send(sock, &msg, msg.hdr.length, 0)
  return {reinterpret_cast<const std::uint8_t*>(&msg), msg.hdr.length};
}

core::PathRecord sa_path() {
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
  p.pkey = core::Pkey{0xffff};
  p.sl = 3;
  p.mtu_selector = 2;
  p.mtu = 4;
  p.rate_selector = 2;
  p.rate = 7;
  p.pkt_life_selector = 2;
  p.pkt_life = 18;
  return p;
}

// recv(sock, &msg, sizeof msg, 0) of a reply written in one piece; false where ucma_ib_resolve gives up.
bool librdmacm_accepts(const std::vector<std::uint8_t>& reply, LibAcmMsg& msg) {
  std::memset(&msg, 0, sizeof msg);
  if (reply.size() > sizeof msg) return false;
  std::memcpy(&msg, reply.data(), reply.size());
  const auto ret = static_cast<std::int64_t>(reply.size());
  return !(ret < 16 || ret != msg.hdr.length || msg.hdr.status);
}

TEST(AcmLibrdmacm, ExactRequestDecodesAsAnIpResolveIgnoringThePathHint) {
  const LibAcmMsg msg = librdmacm_request(false);
  ASSERT_EQ(msg.hdr.length, 16 + 3 * 72);
  const auto framing = frame(sent_bytes(msg));
  ASSERT_EQ(framing.kind, Framing::Kind::complete) << framing.error;
  EXPECT_EQ(framing.length, 232u);
  auto decoded = decode_request(sent_bytes(msg));
  ASSERT_TRUE(std::holds_alternative<Request>(decoded)) << std::get<RequestError>(decoded).message;
  const auto* r = std::get_if<ResolveAddressRequest>(&std::get<Request>(decoded));
  ASSERT_NE(r, nullptr) << "librdmacm's request must resolve the destination IP";
  EXPECT_EQ(std::get<core::IpAddr>(r->dest.address).to_string(), "10.0.0.2");
  EXPECT_EQ(r->dest.flags, kEpFlagDest);
  ASSERT_TRUE(r->source.has_value());
  EXPECT_EQ(std::get<core::IpAddr>(r->source->address).to_string(), "10.0.0.1");
}

TEST(AcmLibrdmacm, NumericHostAsksForCachedDataOnly) {
  auto decoded = decode_request(sent_bytes(librdmacm_request(true)));
  ASSERT_TRUE(std::holds_alternative<Request>(decoded));
  EXPECT_EQ(std::get<ResolveAddressRequest>(std::get<Request>(decoded)).dest.flags, kEpFlagDest | kFlagNoDelay);
}

TEST(AcmLibrdmacm, ReplyIsWhatUcmaIbResolveAndTheKernelAccept) {
  ResolveResponse response;
  response.path = sa_path();
  const auto reply = encode(response);
  LibAcmMsg msg;
  ASSERT_TRUE(librdmacm_accepts(reply, msg)) << "hdr.length must equal the bytes of the one recv()";

  // ucma_ib_save_resp: entries = (length - 16) / 72; every PATH entry becomes one ibv_path_data.
  const int count = (msg.hdr.length - 16) / 72;
  int paths = 0;
  const ibv_path_data* route = nullptr;
  for (int i = 0; i < count; ++i) {
    LibAcmEpAddrData& e = msg.resolve_data[i];
    if (e.type != kLibPath) {
      EXPECT_TRUE(e.type == kLibIp && (e.flags & kLibSource)) << "entry " << i << " is neither a path nor a source";
      continue;
    }
    e.type = 0;
    if (route == nullptr) route = reinterpret_cast<const ibv_path_data*>(&e);
    ++paths;
  }
  ASSERT_EQ(paths, 1);
  ASSERT_NE(route, nullptr);
  // The kernel's ucma_set_ib_path() uses only a path flagged exactly this.
  EXPECT_EQ(route->flags, static_cast<std::uint32_t>(IBV_PATH_FLAG_GMP | IBV_PATH_FLAG_PRIMARY |
                                                     IBV_PATH_FLAG_BIDIRECTIONAL));
  EXPECT_EQ(route->flags, 0x2Bu);
  EXPECT_EQ(route->reserved, 0u);

  const ibv_path_record& p = route->path;
  const auto want = sa_path();
  EXPECT_EQ(std::memcmp(p.dgid.raw, want.dgid.raw.data(), 16), 0);
  EXPECT_EQ(std::memcmp(p.sgid.raw, want.sgid.raw.data(), 16), 0);
  EXPECT_EQ(ntohs(p.dlid), 7);
  EXPECT_EQ(ntohs(p.slid), 3);
  EXPECT_EQ(ntohl(p.flowlabel_hoplimit), (0x12345u << 8) | 64u);
  EXPECT_EQ(p.tclass, 7);
  EXPECT_EQ(p.reversible_numpath, 0x81);
  EXPECT_EQ(ntohs(p.pkey), 0xffff);
  EXPECT_EQ(ntohs(p.qosclass_sl) & 0xf, 3);
  EXPECT_EQ(p.mtu, 0x80 | 4);
  EXPECT_EQ(p.rate, 0x80 | 7);
  EXPECT_EQ(p.packetlifetime, 0x80 | 18);
  // ucma_ib_set_addr: the AF_IB flowinfo it derives.
  EXPECT_EQ(ntohl(p.flowlabel_hoplimit) >> 8, 0x12345u);
}

TEST(AcmLibrdmacm, ErrorReplyIsOneHeaderLibrdmacmFallsBackOn) {
  ResolveResponse response;
  response.status = Status::enodata;
  const auto reply = encode(response);
  ASSERT_EQ(reply.size(), 16u);
  LibAcmMsg msg;
  EXPECT_FALSE(librdmacm_accepts(reply, msg));  // status != 0: rdma_getaddrinfo goes on without a route
  EXPECT_EQ(msg.hdr.length, 16);
  EXPECT_EQ(msg.hdr.status, static_cast<std::uint8_t>(Status::enodata));
}

}  // namespace
}  // namespace ibat::acm

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The SMA behaviour the twin adds to ibsim for client reregistration (lab/umad-twin/sma_watch.h):
// PortInfo answers advertise IsClientReregistrationSupported; a directed-route PortInfo Set with
// ClientReregister names its port (learnt from the route's NodeInfo answer) once its answer comes,
// and only then; a Set without the bit, a refused Set, an unknown route, another TID name none.
#include "sma_watch.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <vector>

namespace ibat::umad_twin {
namespace {

using Mad = std::array<std::uint8_t, 256>;

constexpr std::uint16_t kNodeInfo = 0x0011;
constexpr std::uint16_t kPortInfo = 0x0015;
constexpr std::uint8_t kGet = 0x01, kSet = 0x02, kGetResp = 0x81;

void put16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
void put64(std::uint8_t* p, std::uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}

// A directed-route SMP along `route` (the initial path's hops).
Mad smp(std::uint8_t method, std::uint16_t attr, std::uint64_t tid, const std::vector<std::uint8_t>& route) {
  Mad m{};
  m[0] = 1;
  m[1] = 0x81;
  m[2] = 1;
  m[3] = method;
  if (method == kGetResp) m[4] = 0x80;  // the D bit: a returning SMP
  m[7] = static_cast<std::uint8_t>(route.size());
  put64(&m[8], tid);
  put16(&m[16], attr);
  for (std::size_t i = 0; i < route.size(); ++i) m[128 + 1 + i] = route[i];
  return m;
}

Mad node_info_answer(std::uint64_t tid, const std::vector<std::uint8_t>& route, std::uint64_t port_guid) {
  Mad m = smp(kGetResp, kNodeInfo, tid, route);
  m[64 + 2] = 1;  // NodeType: CA
  put64(&m[64 + 20], port_guid);
  return m;
}

Mad port_info_set(std::uint64_t tid, const std::vector<std::uint8_t>& route, bool rereg) {
  Mad m = smp(kSet, kPortInfo, tid, route);
  put16(&m[64 + 16], 12);  // the LID the SM gives
  m[64 + 51] = static_cast<std::uint8_t>((rereg ? 0x80 : 0) | 18);  // ClientReregister | SubnetTimeOut
  return m;
}

const std::vector<std::uint8_t> kRoute{1, 3, 7};

TEST(SmaWatch, PortInfoAnswersAdvertiseClientReregistration) {
  SmaWatch watch;
  Mad answer = smp(kGetResp, kPortInfo, 1, kRoute);
  answer[64 + 20] = 0x00;
  answer[64 + 23] = 0x48;
  EXPECT_FALSE(watch.on_receive(answer.data()));
  EXPECT_EQ(answer[64 + 20], 0x02) << "CapabilityMask bit 25";
  EXPECT_EQ(answer[64 + 23], 0x48) << "the other bits stay";
  Mad node = smp(kGetResp, kNodeInfo, 2, kRoute);
  watch.on_receive(node.data());
  EXPECT_EQ(node[64 + 20], 0x00) << "other attributes are not touched";
}

TEST(SmaWatch, AReregisterSetNamesItsPortWhenItsAnswerComes) {
  SmaWatch watch;
  Mad node = node_info_answer(5, kRoute, 0x0002c90300000011ULL);
  EXPECT_FALSE(watch.on_receive(node.data()));
  const Mad set = port_info_set(6, kRoute, true);
  watch.on_send(set.data());
  Mad other = smp(kGetResp, kPortInfo, 7, kRoute);
  EXPECT_FALSE(watch.on_receive(other.data())) << "another TID";
  Mad answer = smp(kGetResp, kPortInfo, 6, kRoute);
  const auto guid = watch.on_receive(answer.data());
  ASSERT_TRUE(guid);
  EXPECT_EQ(*guid, 0x0002c90300000011ULL);
  Mad again = smp(kGetResp, kPortInfo, 6, kRoute);
  EXPECT_FALSE(watch.on_receive(again.data())) << "a duplicate answer names nothing twice";
}

TEST(SmaWatch, NoAnnouncementWithoutTheBitARefusalOrAKnownRoute) {
  SmaWatch watch;
  Mad node = node_info_answer(1, kRoute, 0x11);
  watch.on_receive(node.data());

  const Mad plain = port_info_set(2, kRoute, false);
  watch.on_send(plain.data());
  Mad plain_answer = smp(kGetResp, kPortInfo, 2, kRoute);
  EXPECT_FALSE(watch.on_receive(plain_answer.data()));

  const Mad refused = port_info_set(3, kRoute, true);
  watch.on_send(refused.data());
  Mad refusal = smp(kGetResp, kPortInfo, 3, kRoute);
  refusal[5] = 0x1C;  // invalid attribute value
  EXPECT_FALSE(watch.on_receive(refusal.data()));

  const std::vector<std::uint8_t> unknown{1, 4};
  const Mad elsewhere = port_info_set(4, unknown, true);
  watch.on_send(elsewhere.data());
  Mad elsewhere_answer = smp(kGetResp, kPortInfo, 4, unknown);
  EXPECT_FALSE(watch.on_receive(elsewhere_answer.data())) << "no NodeInfo answer came by that route";
}

TEST(SmaWatch, RoutesOfDifferentLengthsAreDifferentPorts) {
  SmaWatch watch;
  Mad near = node_info_answer(1, {1}, 0xA);
  Mad far = node_info_answer(2, {1, 2}, 0xB);
  watch.on_receive(near.data());
  watch.on_receive(far.data());
  const Mad set = port_info_set(3, {1, 2}, true);
  watch.on_send(set.data());
  Mad answer = smp(kGetResp, kPortInfo, 3, {1, 2});
  EXPECT_EQ(watch.on_receive(answer.data()), 0xBULL);
}

}  // namespace
}  // namespace ibat::umad_twin

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Fuzzes the IPoIB ARP decoder: any input decodes or errors, and a decoded packet survives an
// encode/decode round trip unchanged.
#include <cstdlib>

#include "ipoib/arp.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ibat::ipoib;
  auto r = decode_arp({data, size});
  if (const auto* p = std::get_if<ArpPacket>(&r)) {
    auto again = decode_arp(encode_arp(*p));
    if (!std::holds_alternative<ArpPacket>(again) || std::get<ArpPacket>(again) != *p) std::abort();
  }
  return 0;
}

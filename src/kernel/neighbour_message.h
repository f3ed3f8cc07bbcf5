// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's neighbour table as rtnetlink reports it (RTM_NEWNEIGH / RTM_DELNEIGH, docs/linux.md):
// decoding one message into what ibatd needs — interface, IP, state, and an IPoIB hardware address
// (20 bytes: flags, QPN, GID) when the link layer carries one. Pure; attributes are parsed and
// length-checked with libmnl.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/types.h"

namespace ibat::kernel {

struct NeighbourMessage {
  enum class Kind : std::uint8_t {
    update,  // REACHABLE, STALE, DELAY, PROBE or PERMANENT: the address is usable
    remove,  // RTM_DELNEIGH or FAILED: forget it
    ignore,  // INCOMPLETE, NOARP, NONE: nothing known yet
  };
  Kind kind = Kind::ignore;
  int ifindex = 0;
  core::IpAddr ip;
  std::optional<core::HwAddr> ipoib_hw;  // set when the link-layer address is 20 bytes long
  std::uint16_t state = 0;
};

// Decodes one netlink message; nullopt when it is not a neighbour message of IPv4/IPv6 or is
// malformed (length fields that do not fit, attributes of the wrong size, no destination).
std::optional<NeighbourMessage> decode_neighbour(std::span<const std::uint8_t> message);

}  // namespace ibat::kernel

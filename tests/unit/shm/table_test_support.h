// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Helpers of the shared path table tests: an aligned buffer holding a table, keys and servable
// paths derived from small numbers so a test can tell which record it got back.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "shm/path_table_layout.h"

namespace ibat::shm::test {

// Zeroed, 8-byte aligned memory for a table of `slots` slots (plus `extra` bytes).
inline std::vector<std::uint64_t> table_memory(std::uint32_t slots, std::size_t extra = 0) {
  return std::vector<std::uint64_t>((table_bytes(slots) + extra + 7) / 8, 0);
}

inline core::Gid gid_of(std::uint64_t n) { return core::Gid::from_parts(0xfe80000000000000ULL, 0x0002c90300000000ULL + n); }

inline TableKey key_of(std::uint32_t n) {
  return TableKey::of(gid_of(0), gid_of(n + 1), core::Pkey{static_cast<std::uint16_t>(0xFFFF - (n % 3))});
}

// A servable path for key `n` whose every field follows from (n, version): a torn or invented
// record does not match path_of(n, version) for the version its service_id names.
inline core::PathRecord path_of(std::uint32_t n, std::uint64_t version) {
  TableKey k = key_of(n);
  core::PathRecord p;
  p.sgid = gid_of(0);
  p.dgid = gid_of(n + 1);
  p.pkey = core::Pkey{k.pkey};
  p.service_id = (version << 20) | n;
  p.dlid = core::Lid{static_cast<std::uint16_t>(1 + (version * 7 + n) % 0xBFFE)};
  p.slid = core::Lid{1};
  p.flow_label = static_cast<std::uint32_t>(version & 0xFFFFF);
  p.hop_limit = static_cast<std::uint8_t>(version);
  p.tclass = static_cast<std::uint8_t>(version >> 8);
  p.numb_path = static_cast<std::uint8_t>(version % 128);
  p.qos_class = static_cast<std::uint16_t>(version % 4096);
  p.sl = static_cast<std::uint8_t>(version % 16);
  p.mtu = static_cast<std::uint8_t>(1 + version % 5);
  p.mtu_selector = 2;
  p.rate = 3;
  p.rate_selector = 2;
  p.pkt_life = static_cast<std::uint8_t>(version % 64);
  p.preference = static_cast<std::uint8_t>(version >> 3);
  p.reversible = (version & 1) != 0;
  p.raw_traffic = (version & 2) != 0;
  return p;
}

}  // namespace ibat::shm::test

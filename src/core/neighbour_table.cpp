// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// NeighbourTable (see neighbour_table.h).
#include "core/neighbour_table.h"

#include <cstring>

namespace ibat::core {

NeighbourTable::Update NeighbourTable::upsert(const IpAddr& ip, const HwAddr& hw,
                                            std::optional<Lid> source_lid) {
  Update update;
  auto [it, inserted] = table_.try_emplace(ip, Neighbour{hw, source_lid});
  if (inserted) {
    update.added = true;
    return update;
  }
  Gid old_gid = it->second.hw.gid();
  if (old_gid != hw.gid()) update.previous_gid = old_gid;
  // Keep a known source LID unless the GID changed (then it belongs to the old port).
  if (source_lid || update.previous_gid) it->second.source_lid = source_lid;
  it->second.hw = hw;
  return update;
}

bool NeighbourTable::remove(const IpAddr& ip) { return table_.erase(ip) > 0; }

const Neighbour* NeighbourTable::find(const IpAddr& ip) const {
  auto it = table_.find(ip);
  return it == table_.end() ? nullptr : &it->second;
}

}  // namespace ibat::core

std::size_t std::hash<ibat::core::IpAddr>::operator()(const ibat::core::IpAddr& ip) const noexcept {
  std::uint64_t a, b;
  std::memcpy(&a, ip.raw.data(), 8);
  std::memcpy(&b, ip.raw.data() + 8, 8);
  std::uint64_t h = (a ^ (b * 0x9E3779B97F4A7C15ULL)) + (ip.v4 ? 1 : 0);
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  return static_cast<std::size_t>(h);
}

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// NeighbourTable: IP (v4 or v6) -> IPoIB hardware address (-> GID), fed by ARP / neighbour input,
// with the source LID seen on receive when known.
#pragma once

#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/types.h"

template <>
struct std::hash<ibat::core::IpAddr> {
  std::size_t operator()(const ibat::core::IpAddr& ip) const noexcept;
};

namespace ibat::core {

struct Neighbour {
  HwAddr hw;
  std::optional<Lid> source_lid;
};

class NeighbourTable {
 public:
  struct Update {
    bool added = false;              // the IP was not known before
    std::optional<Gid> previous_gid; // set when the IP was known with another GID
  };

  Update upsert(const IpAddr& ip, const HwAddr& hw, std::optional<Lid> source_lid);
  bool remove(const IpAddr& ip);
  const Neighbour* find(const IpAddr& ip) const;
  std::size_t size() const { return table_.size(); }

  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const auto& [ip, n] : table_) fn(ip, n);
  }

 private:
  std::unordered_map<IpAddr, Neighbour> table_;
};

}  // namespace ibat::core

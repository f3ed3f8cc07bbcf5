// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The mirror of the kernel's neighbour table (neighbour_mirror.h).
#include "kernel/neighbour_mirror.h"

namespace ibat::kernel {

void NeighbourMirror::apply(const NeighbourMessage& message, const NeighbourLink& link) {
  const bool ipoib = link.ipoib && message.ipoib_hw.has_value();
  if (!ipoib) ++counters_.ignored_non_ipoib;
  const Key key{message.ifindex, message.ip};
  auto it = table_.find(key);
  switch (message.kind) {
    case NeighbourMessage::Kind::update: {
      Entry entry{ipoib, ipoib ? *message.ipoib_hw : core::HwAddr{}, ipoib ? link.port : std::nullopt, true};
      const bool changed = it == table_.end() || it->second.ipoib != entry.ipoib || it->second.hw != entry.hw ||
                           it->second.port != entry.port;
      if (it != table_.end() && it->second.ipoib && (!ipoib || it->second.port != entry.port)) erase(it);
      table_[key] = entry;
      if (ipoib && changed) {
        ++counters_.updates;
        sink_.update(message.ip, entry.hw, entry.port);
      }
      break;
    }
    case NeighbourMessage::Kind::remove:
      if (it != table_.end()) erase(it);
      break;
    case NeighbourMessage::Kind::ignore:
      if (it != table_.end()) it->second.seen = true;  // still there, nothing new known
      break;
  }
}

void NeighbourMirror::erase(std::map<Key, Entry>::iterator it) {
  if (it->second.ipoib) {
    ++counters_.removals;
    sink_.remove(it->first.second, it->second.port);
  }
  table_.erase(it);
}

void NeighbourMirror::begin_dump() {
  for (auto& [key, entry] : table_) entry.seen = false;
}

void NeighbourMirror::end_dump() {
  for (auto it = table_.begin(); it != table_.end();) {
    auto next = std::next(it);
    if (!it->second.seen) erase(it);
    it = next;
  }
  ++counters_.dumps;
}

NeighbourMirrorStats NeighbourMirror::stats() const {
  NeighbourMirrorStats out = counters_;
  for (const auto& [key, entry] : table_) ++(entry.ipoib ? out.ipoib : out.other);
  return out;
}

}  // namespace ibat::kernel

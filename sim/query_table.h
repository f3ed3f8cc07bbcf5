// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// A node's MAD queries in flight, keyed by QueryId: open addressing with linear probing in one
// flat array (no allocation per query, one cache line per lookup), removal by backward shift so
// no tombstones accumulate. Replaces an unordered_map that was a top cost of the simulator
// (docs/simulator.md, "Simulator speed").
#pragma once

#include <cstdint>
#include <vector>

namespace ibat::sim {

template <typename Value>
class QueryTable {
 public:
  // The value under `id`, or nullptr. id 0 is never a key.
  Value* find(std::uint64_t id) {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(id);; i = (i + 1) & mask()) {
      if (slots_[i].id == id) return &slots_[i].value;
      if (slots_[i].id == 0) return nullptr;
    }
  }
  // Inserts or overwrites.
  void put(std::uint64_t id, const Value& value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    std::size_t i = home(id);
    while (slots_[i].id != 0 && slots_[i].id != id) i = (i + 1) & mask();
    if (slots_[i].id == 0) ++count_;
    slots_[i] = Slot{id, value};
  }
  void erase(std::uint64_t id) {
    if (slots_.empty()) return;
    std::size_t i = home(id);
    while (slots_[i].id != id) {
      if (slots_[i].id == 0) return;
      i = (i + 1) & mask();
    }
    // Backward shift: move later members of the probe run into the hole when their home allows.
    for (std::size_t j = (i + 1) & mask(); slots_[j].id != 0; j = (j + 1) & mask()) {
      const std::size_t h = home(slots_[j].id);
      const bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (movable) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --count_;
  }
  std::size_t size() const { return count_; }

 private:
  struct Slot {
    std::uint64_t id = 0;
    Value value{};
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t home(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ULL) >> 32) & mask();
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 16 : old.size() * 2, Slot{});
    count_ = 0;
    for (const Slot& s : old) {
      if (s.id != 0) put(s.id, s.value);
    }
  }

  std::vector<Slot> slots_;
  std::size_t count_ = 0;
};

}  // namespace ibat::sim

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The simulator's containers against the standard ones they replace: the event queue pops in
// (time, insertion) order, and the flat query table agrees with std::unordered_map under churn.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

#include "sim/event_queue.h"
#include "sim/query_table.h"

namespace ibat::sim {
namespace {

TEST(EventQueue, PopsByTimeThenInsertionOrder) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> time(0, 50);  // many ties
  EventQueue q;
  std::vector<std::pair<std::int64_t, std::uint64_t>> expected;
  std::vector<std::pair<std::int64_t, std::uint64_t>> popped;
  std::uint64_t next = 0;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 40; ++i) {
      const std::int64_t t = time(rng) + round * 10;
      q.push(t, EventKind::tick, 0, next);
      expected.emplace_back(t, next++);
    }
    for (int i = 0; i < 25; ++i) {
      const Event e = q.pop();
      popped.emplace_back(e.time_ns, e.arg);
    }
  }
  while (!q.empty()) {
    const Event e = q.pop();
    popped.emplace_back(e.time_ns, e.arg);
  }
  // Each pop is the least (time, seq) of what was queued then; with pushes interleaved the whole
  // sequence is not sorted, so check the invariant directly against a replay.
  std::vector<std::pair<std::int64_t, std::uint64_t>> pending;
  std::size_t pushed = 0, taken = 0;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 40; ++i) pending.push_back(expected[pushed++]);
    for (int i = 0; i < 25; ++i) {
      const auto least = std::min_element(pending.begin(), pending.end());
      ASSERT_EQ(*least, popped[taken++]);
      pending.erase(least);
    }
  }
  std::sort(pending.begin(), pending.end());
  for (const auto& p : pending) ASSERT_EQ(p, popped[taken++]);
  EXPECT_EQ(taken, expected.size());
}

TEST(QueryTable, AgreesWithUnorderedMapUnderChurn) {
  std::mt19937_64 rng(11);
  QueryTable<std::uint32_t> table;
  std::unordered_map<std::uint64_t, std::uint32_t> reference;
  std::uint64_t next_id = 1;
  for (int step = 0; step < 200'000; ++step) {
    const auto op = rng() % 3;
    if (op == 0 || reference.empty()) {
      const std::uint64_t id = next_id++;
      const auto value = static_cast<std::uint32_t>(rng());
      table.put(id, value);
      reference[id] = value;
    } else {
      // An id from the recent range: present or already erased.
      const std::uint64_t id = next_id - 1 - rng() % std::min<std::uint64_t>(next_id - 1, 300);
      const auto it = reference.find(id);
      std::uint32_t* found = table.find(id);
      ASSERT_EQ(found != nullptr, it != reference.end()) << "id " << id;
      if (found) {
        ASSERT_EQ(*found, it->second);
      }
      if (op == 1) {
        table.erase(id);
        reference.erase(id);
      }
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  for (const auto& [id, value] : reference) {
    const std::uint32_t* found = table.find(id);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, value);
  }
}

}  // namespace
}  // namespace ibat::sim

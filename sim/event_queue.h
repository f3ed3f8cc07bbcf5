// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The simulator's agenda: a 4-ary min-heap of small POD events keyed by virtual time (ns), ties
// broken by insertion order so runs are deterministic. No std::function per event: at 10,000
// nodes the queue holds ~10^6 events and each one is 32 bytes. Four children per node halve the
// depth of a binary heap, and a pop moves a hole down instead of swapping (docs/simulator.md,
// "Simulator speed").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibat::sim {

enum class EventKind : std::uint8_t {
  tick,           // call Resolver::tick() of `node` (if still the node's scheduled wake-up)
  query_answer,   // SA answer for query `arg` of `node` reaches the node
  query_timeout,  // MAD attempt for query `arg` of `node` timed out
  table_answer,   // SA answer for GetTable MAD `arg` of `node` (sim/simulator_tables.cpp) arrives
  table_timeout,  // an attempt of GetTable MAD `arg` of `node` timed out
  size_answer,    // SA answer for the size query `arg` of `node` (sim/simulator_tables.cpp) arrives
  size_timeout,   // an attempt of the size query `arg` of `node` timed out
  rank_step,      // workload: rank `arg` (global index) does its next action
  sm_changed,     // the new SM has swept: every node sees an SM change (and LID change if set)
  monitor_poll,   // port monitor of `node`: a poll with an SM/SA check due
  monitor_reply,  // port monitor of `node`: its MAD `arg` was answered
  monitor_lost,   // port monitor of `node`: an attempt of its MAD `arg` timed out
  monitor_refresh,  // port monitor of `node`: after an SM change, re-subscribe and re-read the group
  daemon_start,   // the daemon of `node` starts (boot, job-start --warm-s)
  job_start,      // job-start --warm-s: the job starts, the warm-up's figures are taken
  run_end,        // idle: the run's duration is over
};

struct Event {
  std::int64_t time_ns = 0;
  std::uint64_t seq = 0;
  std::uint64_t arg = 0;
  std::uint32_t node = 0;
  EventKind kind = EventKind::tick;
};

class EventQueue {
 public:
  void push(std::int64_t time_ns, EventKind kind, std::uint32_t node, std::uint64_t arg) {
    const Event e{time_ns, next_seq_++, arg, node, kind};
    std::size_t hole = heap_.size();
    heap_.emplace_back();
    while (hole > 0) {
      const std::size_t parent = (hole - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      heap_[hole] = heap_[parent];
      hole = parent;
    }
    heap_[hole] = e;
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  Event pop() {
    const Event top = heap_.front();
    const Event last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return top;
    std::size_t hole = 0;
    for (;;) {
      const std::size_t first = hole * kArity + 1;
      if (first >= n) break;
      std::size_t best = first;
      const std::size_t end = first + kArity < n ? first + kArity : n;
      for (std::size_t c = first + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], last)) break;
      heap_[hole] = heap_[best];
      hole = best;
    }
    heap_[hole] = last;
    return top;
  }

 private:
  static constexpr std::size_t kArity = 4;
  static bool before(const Event& a, const Event& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.seq < b.seq;
  }
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace ibat::sim

// The simulator's agenda: a binary min-heap of small POD events keyed by virtual time (ns), ties
// broken by insertion order so runs are deterministic. No std::function per event: at 10,000
// nodes the queue holds ~10^6 events and each one is 32 bytes.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

namespace ibat::sim {

enum class EventKind : std::uint8_t {
  tick,           // call Resolver::tick() of `node` (if still the node's scheduled wake-up)
  query_answer,   // SA answer for query `arg` of `node` reaches the node
  query_timeout,  // MAD attempt for query `arg` of `node` timed out
  rank_step,      // workload: rank `arg` (global index) does its next action
  sm_changed,     // the new SM has swept: every node sees an SM change (and LID change if set)
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
    heap_.push(Event{time_ns, next_seq_++, arg, node, kind});
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  Event pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time_ns != b.time_ns ? a.time_ns > b.time_ns : a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace ibat::sim

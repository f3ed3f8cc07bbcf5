// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The send queue of the waited GETs, served round robin among their requesters (docs/design.md §3
// item 5): each requester (a local uid, or none: the kernel's and the daemon's own requests) has
// its own FIFO of (job, queue_seq) items, and the next item comes from the requester whose turn it
// is, so one requester's many items delay another's one by at most one item each. Items go dead
// outside (a job re-queued or gone): the caller's `live` test drops them as they reach a front,
// and compact() sweeps them all. A requester with nothing queued has no entry. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>

namespace ibat::core {

using Requester = std::optional<std::uint32_t>;  // a local uid; nullopt: the kernel or the daemon itself

class FairQueue {
 public:
  using Item = std::pair<std::uint64_t, std::uint64_t>;  // (job, its queue_seq)
  using Live = std::function<bool(const Item&)>;

  void push_back(Requester r, Item item);
  void push_front(Requester r, Item item);  // a retry: ahead of its requester's other items
  // Drops the dead items at the front of the requester whose turn it is, and passes the turn on
  // from a requester left with none: is a live item left?
  bool live_front(const Live& live);
  // Takes the front item of the requester whose turn it is (call after live_front() said true);
  // the turn passes to the next requester.
  Item pop_front();
  void compact(const Live& live);  // drops every dead item
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }  // items, dead ones included
  std::size_t requesters() const { return fifos_.size(); }
  // The most items taken for other requesters between the queueing of an item whose requester had
  // nothing queued and its taking. Round robin bounds it by the requesters then queued, less one,
  // however long their queues (what a test of the fairness can assert without a clock).
  std::uint64_t lone_wait_max() const { return lone_wait_max_; }

 private:
  using Key = std::uint64_t;
  struct Fifo {
    std::deque<Item> items;
    std::optional<std::uint64_t> lone_since;  // pops_ when its front item came to an empty FIFO
  };
  static Key key_of(Requester r) { return r ? Key{*r} : Key{1} << 32; }
  Fifo& fifo_for(Key k);  // creates it at the back of the turns, its item to come a lone one
  std::unordered_map<Key, Fifo> fifos_;
  std::deque<Key> turns_;  // the requesters with items, whose turn first
  std::size_t size_ = 0;
  std::uint64_t pops_ = 0;
  std::uint64_t lone_wait_max_ = 0;
};

}  // namespace ibat::core

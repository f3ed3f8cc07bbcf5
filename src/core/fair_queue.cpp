// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
#include "core/fair_queue.h"

#include <algorithm>

namespace ibat::core {

FairQueue::Fifo& FairQueue::fifo_for(Key k) {
  auto [it, added] = fifos_.try_emplace(k);
  if (added) {
    turns_.push_back(k);
    it->second.lone_since = pops_;
  }
  return it->second;
}

void FairQueue::push_back(Requester r, Item item) {
  fifo_for(key_of(r)).items.push_back(item);
  ++size_;
}

void FairQueue::push_front(Requester r, Item item) {
  Fifo& fifo = fifo_for(key_of(r));
  if (!fifo.items.empty()) fifo.lone_since.reset();  // not the item that came alone any more
  fifo.items.push_front(item);
  ++size_;
}

bool FairQueue::live_front(const Live& live) {
  while (!turns_.empty()) {
    auto it = fifos_.find(turns_.front());
    Fifo& fifo = it->second;
    while (!fifo.items.empty() && !live(fifo.items.front())) {
      fifo.items.pop_front();
      fifo.lone_since.reset();
      --size_;
    }
    if (!fifo.items.empty()) return true;
    fifos_.erase(it);
    turns_.pop_front();
  }
  return false;
}

FairQueue::Item FairQueue::pop_front() {
  const Key k = turns_.front();
  turns_.pop_front();
  auto it = fifos_.find(k);
  Fifo& fifo = it->second;
  const Item item = fifo.items.front();
  fifo.items.pop_front();
  --size_;
  if (fifo.lone_since) lone_wait_max_ = std::max(lone_wait_max_, pops_ - *fifo.lone_since);
  fifo.lone_since.reset();
  ++pops_;
  if (fifo.items.empty()) fifos_.erase(it);
  else turns_.push_back(k);
  return item;
}

void FairQueue::compact(const Live& live) {
  for (auto it = fifos_.begin(); it != fifos_.end();) {
    Fifo& fifo = it->second;
    if (!fifo.items.empty() && !live(fifo.items.front())) fifo.lone_since.reset();
    size_ -= std::erase_if(fifo.items, [&](const Item& item) { return !live(item); });
    it = fifo.items.empty() ? fifos_.erase(it) : std::next(it);
  }
  std::erase_if(turns_, [this](Key k) { return !fifos_.contains(k); });
}

}  // namespace ibat::core

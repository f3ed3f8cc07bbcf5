#include "core/fair_queue.h"

#include <algorithm>

namespace ibat::core {

std::deque<FairQueue::Item>& FairQueue::fifo_for(Key k) {
  auto [it, added] = fifos_.try_emplace(k);
  if (added) turns_.push_back(k);
  return it->second;
}

void FairQueue::push_back(Requester r, Item item) {
  fifo_for(key_of(r)).push_back(item);
  ++size_;
}

void FairQueue::push_front(Requester r, Item item) {
  fifo_for(key_of(r)).push_front(item);
  ++size_;
}

bool FairQueue::live_front(const Live& live) {
  while (!turns_.empty()) {
    auto it = fifos_.find(turns_.front());
    std::deque<Item>& fifo = it->second;
    while (!fifo.empty() && !live(fifo.front())) {
      fifo.pop_front();
      --size_;
    }
    if (!fifo.empty()) return true;
    fifos_.erase(it);
    turns_.pop_front();
  }
  return false;
}

FairQueue::Item FairQueue::pop_front() {
  const Key k = turns_.front();
  turns_.pop_front();
  auto it = fifos_.find(k);
  const Item item = it->second.front();
  it->second.pop_front();
  --size_;
  if (it->second.empty()) fifos_.erase(it);
  else turns_.push_back(k);
  return item;
}

void FairQueue::compact(const Live& live) {
  for (auto it = fifos_.begin(); it != fifos_.end();) {
    size_ -= std::erase_if(it->second, [&](const Item& item) { return !live(item); });
    it = it->second.empty() ? fifos_.erase(it) : std::next(it);
  }
  std::erase_if(turns_, [this](Key k) { return !fifos_.contains(k); });
}

}  // namespace ibat::core

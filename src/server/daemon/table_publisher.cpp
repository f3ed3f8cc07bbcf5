// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TablePublisher (see table_publisher.h): the Resolvers decide what is valid; this mirrors it.
#include "server/daemon/table_publisher.h"

#include <chrono>

namespace ibat::server {

namespace {
std::uint64_t monotonic_ms(core::TimePoint t) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}
}  // namespace

void TablePublisher::attach(shm::PathTableWriter* writer, Grow grow) {
  writer_ = writer;
  grow_ = std::move(grow);
  expires_.clear();
  expiry_queue_ = {};
  if (writer_) writer_->clear();
}

void TablePublisher::on_stored(const core::PathStored& stored, core::Duration ttl) {
  if (writer_) publish(shm::TableKey::of(stored.sgid, stored.dgid, stored.pkey), stored.path, stored.produced, ttl);
}

void TablePublisher::on_change(const core::PathChange& change) {
  if (change.state != core::EntryState::valid) unpublish(shm::TableKey::of(change.sgid, change.dgid, change.pkey));
}

void TablePublisher::republish(const std::vector<core::CacheEntryView>& entries, core::TimePoint now,
                               core::Duration ttl) {
  if (!writer_) return;
  writer_->clear();
  expires_.clear();
  expiry_queue_ = {};
  for (const core::CacheEntryView& e : entries)
    if (e.state == core::EntryState::valid && e.age < ttl && e.qos.is_default())
      publish(shm::TableKey::of(e.sgid, e.dgid, e.pkey), e.path, now - e.age, ttl);
}

void TablePublisher::set_defaults(const core::Gid& local_gid, core::Pkey default_pkey) {
  if (writer_) writer_->set_defaults(local_gid, default_pkey);
}

void TablePublisher::publish(const shm::TableKey& key, const core::PathRecord& path, core::TimePoint produced,
                             core::Duration ttl) {
  if (grow_ && writer_->wants_larger_table_for(key)) writer_ = grow_();
  if (!writer_->publish(key, path, monotonic_ms(produced))) return;
  const core::TimePoint until = produced + ttl;
  expires_[key] = until;
  expiry_queue_.emplace(until, key);
  if (expiry_queue_.size() > 2 * expires_.size() + 1024) {  // mostly outdated items: rebuild
    expiry_queue_ = {};
    for (const auto& [k, t] : expires_) expiry_queue_.emplace(t, k);
  }
}

void TablePublisher::unpublish(const shm::TableKey& key) {
  if (!writer_) return;
  writer_->remove(key);
  expires_.erase(key);
}

void TablePublisher::expire(core::TimePoint now) {
  while (!expiry_queue_.empty() && expiry_queue_.top().first <= now) {
    const auto [until, key] = expiry_queue_.top();
    expiry_queue_.pop();
    auto it = expires_.find(key);
    if (it != expires_.end() && it->second == until) unpublish(key);
  }
}

std::optional<core::TimePoint> TablePublisher::next_expiry() const {
  if (expiry_queue_.empty()) return std::nullopt;
  return expiry_queue_.top().first;
}

}  // namespace ibat::server

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TablePublisher (see table_publisher.h): the Resolvers decide what is valid; this mirrors it.
#include "server/daemon/table_publisher.h"

#include <chrono>

namespace ibat::server {

namespace {
std::uint64_t monotonic_ms(core::TimePoint t) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}
// A TTL's end as the slot's expiry word, and back.
std::uint64_t expiry_word(core::TimePoint until) { return static_cast<std::uint64_t>(until.time_since_epoch().count()); }
core::TimePoint expiry_time(std::uint64_t word) { return core::TimePoint{core::Duration{static_cast<std::int64_t>(word)}}; }
}  // namespace

void TablePublisher::attach(shm::PathTableWriter* writer, Grow grow) {
  writer_ = writer;
  grow_ = std::move(grow);
  expiry_queue_ = {};
  if (writer_) writer_->clear();
}

void TablePublisher::on_stored(const core::PathStored& stored, core::Duration ttl) {
  if (writer_) publish(shm::TableKey::of(stored.sgid, stored.dgid, stored.pkey), stored.path, stored.produced, ttl);
}

void TablePublisher::on_change(const core::PathChange& change) {
  if (writer_ && change.state != core::EntryState::valid)
    writer_->remove(shm::TableKey::of(change.sgid, change.dgid, change.pkey));
}

void TablePublisher::clear() {
  if (!writer_) return;
  writer_->clear();
  expiry_queue_ = {};
}

void TablePublisher::publish_valid(const std::vector<core::CacheEntryView>& entries, core::TimePoint now,
                                   core::Duration ttl) {
  if (!writer_) return;
  for (const core::CacheEntryView& e : entries)
    if (e.state == core::EntryState::valid && e.age < ttl && e.qos.is_default())
      publish(shm::TableKey::of(e.sgid, e.dgid, e.pkey), e.path, now - e.age, ttl);
}

void TablePublisher::set_defaults(const core::Gid& local_gid, core::Pkey default_pkey) {
  if (writer_) writer_->set_defaults(local_gid, default_pkey);
}

void TablePublisher::publish(const shm::TableKey& key, const core::PathRecord& path, core::TimePoint produced,
                             core::Duration ttl) {
  if (grow_ && writer_->wants_larger_table_for(key)) {
    shm::PathTableWriter* grown = grow_();
    if (grown != writer_) follow(grown);
  }
  const core::TimePoint until = produced + ttl;
  if (!writer_->publish(key, path, monotonic_ms(produced), expiry_word(until))) return;
  expiry_queue_.push(Expiry{until, *writer_->slot_of(key)});
  if (expiry_queue_.size() > 2 * writer_->size() + 1024) requeue();  // mostly outdated items
}

void TablePublisher::follow(shm::PathTableWriter* writer) {
  writer_ = writer;
  requeue();
}

void TablePublisher::requeue() {
  std::vector<Expiry> items;
  items.reserve(writer_->size());
  for (std::uint32_t slot = 0; slot < writer_->slot_count(); ++slot)
    if (const std::optional<std::uint64_t> expiry = writer_->expiry_in(slot)) items.push_back({expiry_time(*expiry), slot});
  expiry_queue_ = decltype(expiry_queue_)(Later{}, std::move(items));
}

void TablePublisher::expire(core::TimePoint now) {
  while (!expiry_queue_.empty() && expiry_queue_.top().until <= now) {
    const Expiry item = expiry_queue_.top();
    expiry_queue_.pop();
    writer_->remove_if_expiry(item.slot, expiry_word(item.until));
  }
}

std::optional<core::TimePoint> TablePublisher::next_expiry() const {
  if (expiry_queue_.empty()) return std::nullopt;
  return expiry_queue_.top().until;
}

}  // namespace ibat::server

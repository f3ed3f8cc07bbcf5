// TablePublisher (see table_publisher.h). The acceptance test mirrors Resolver::on_query_result:
// an answer counts when it is servable and names the destination the query asked for.
#include "server/daemon/table_publisher.h"

#include <chrono>

namespace ibat::server {

namespace {
std::uint64_t monotonic_ms(core::TimePoint t) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}
}  // namespace

void TablePublisher::attach(shm::PathTableWriter* writer) {
  writer_ = writer;
  queries_.clear();
  expires_.clear();
  expiry_queue_ = {};
  if (writer_) writer_->clear();
}

void TablePublisher::send_path_query(const core::PathQuery& query) {
  if (writer_) queries_[query.id] = query;
  fabric_.send_path_query(query);
}

void TablePublisher::cancel_query(core::QueryId id) {
  queries_.erase(id);
  fabric_.cancel_query(id);
}

void TablePublisher::on_query_result(core::QueryId id, const core::QueryResult& result, core::TimePoint now,
                                     core::Duration ttl) {
  auto it = queries_.find(id);
  if (it == queries_.end()) return;  // cancelled, or sent before the table was attached
  const core::PathQuery query = it->second;
  queries_.erase(it);
  const core::PathRecord& p = result.path;
  if (query.dlid) {
    // By LID: the key is learnt from the answer; a failure names no key we published.
    if (result.error == core::Error::ok && p.is_servable() && p.dlid == *query.dlid)
      publish(shm::TableKey::of(query.sgid, p.dgid, query.pkey), p, now, ttl);
    return;
  }
  const shm::TableKey key = shm::TableKey::of(query.sgid, query.dgid.value_or(core::Gid{}), query.pkey);
  if (result.error == core::Error::ok && p.is_servable() && query.dgid && p.dgid == *query.dgid)
    publish(key, p, now, ttl);
  else
    unpublish(key);
}

void TablePublisher::republish(const std::vector<core::CacheEntryView>& entries, core::TimePoint now,
                               core::Duration ttl) {
  if (!writer_) return;
  writer_->clear();
  expires_.clear();
  expiry_queue_ = {};
  for (const core::CacheEntryView& e : entries)
    if (e.state == core::EntryState::valid && e.age < ttl)
      publish(shm::TableKey::of(e.sgid, e.dgid, e.pkey), e.path, now - e.age, ttl);
}

void TablePublisher::set_defaults(const core::Gid& local_gid, core::Pkey default_pkey) {
  if (writer_) writer_->set_defaults(local_gid, default_pkey);
}

void TablePublisher::publish(const shm::TableKey& key, const core::PathRecord& path, core::TimePoint produced,
                             core::Duration ttl) {
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

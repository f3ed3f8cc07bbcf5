// TablePublisher: keeps the shared path table (docs/shared-table.md) equal to the Resolver's valid
// entries. It sits between the Resolver and the fabric as the QuerySink, so it knows the key of
// every query; a result the Resolver accepts as valid is published (until its TTL ends), any other
// outcome unpublishes the key; events that may change many entries (SM change, flush, port change,
// GID out of service, reload) clear the table and republish what is still valid. No I/O, no timers:
// the Service calls expire() at next_expiry().
#pragma once

#include <optional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "core/query_sink.h"
#include "core/resolver.h"
#include "shm/path_table_writer.h"

namespace ibat::server {

class TablePublisher final : public core::QuerySink {
 public:
  explicit TablePublisher(core::QuerySink& fabric) : fabric_(fabric) {}

  // Starts publishing into `writer` (nullptr: stop). The table starts empty.
  void attach(shm::PathTableWriter* writer);
  bool attached() const { return writer_ != nullptr; }

  void send_path_query(const core::PathQuery& query) override;
  void cancel_query(core::QueryId id) override;
  // Passed on: what a table brings is published by republish() once the Resolver has it.
  bool send_table_query(const core::TableQuery& query) override { return fabric_.send_table_query(query); }

  // Call after Resolver::on_query_result(id, result) with the time the Resolver saw.
  void on_query_result(core::QueryId id, const core::QueryResult& result, core::TimePoint now, core::Duration ttl);
  // Clears the table and publishes the valid entries of `entries` (Resolver::entries()).
  void republish(const std::vector<core::CacheEntryView>& entries, core::TimePoint now, core::Duration ttl);
  void set_defaults(const core::Gid& local_gid, core::Pkey default_pkey);
  // Unpublishes the entries whose TTL has ended by `now`.
  void expire(core::TimePoint now);
  std::optional<core::TimePoint> next_expiry() const;

  std::size_t published() const { return writer_ ? writer_->size() : 0; }
  // The key a client's hit report names by (slot, generation), if still published there.
  std::optional<shm::TableKey> key_at(std::uint32_t slot, std::uint64_t generation) const {
    return writer_ ? writer_->key_at(slot, generation) : std::nullopt;
  }

 private:
  struct KeyHash {
    std::size_t operator()(const shm::TableKey& k) const noexcept { return static_cast<std::size_t>(shm::hash_key(k)); }
  };
  void publish(const shm::TableKey& key, const core::PathRecord& path, core::TimePoint produced, core::Duration ttl);
  void unpublish(const shm::TableKey& key);

  core::QuerySink& fabric_;
  shm::PathTableWriter* writer_ = nullptr;
  std::unordered_map<core::QueryId, core::PathQuery> queries_;  // in flight, while attached
  std::unordered_map<shm::TableKey, core::TimePoint, KeyHash> expires_;
  using Expiry = std::pair<core::TimePoint, shm::TableKey>;
  struct Later {
    bool operator()(const Expiry& a, const Expiry& b) const { return a.first > b.first; }
  };
  std::priority_queue<Expiry, std::vector<Expiry>, Later> expiry_queue_;  // outdated items skipped
};

}  // namespace ibat::server

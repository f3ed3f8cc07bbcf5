// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TablePublisher: keeps the shared path table (docs/shared-table.md) equal to the valid entries of
// every port's Resolver. It observes them, off the query path: each path a Resolver stores as valid
// (PathStored, before the answer's completions run) is published until its TTL ends, and a path
// that moves or is lost (PathChange to anything but valid) is unpublished; events that may change
// many entries (SM change, flush, port change, GID out of service, reload) clear the table and
// republish what is still valid. No I/O, no timers: the Service calls expire() at next_expiry(). A
// new key that the table has no room for (shm::PathTableWriter::wants_larger_table_for) first asks
// for a larger table (the Service grows the file; it makes it smaller after a republish that left
// it mostly empty). A path's expiry is kept in its slot (shm::TableSlot::expiry), not in a map
// here: what this holds is a queue of 16 bytes a path.
#pragma once

#include <functional>
#include <optional>
#include <queue>
#include <vector>

#include "core/resolver.h"
#include "shm/path_table_writer.h"

namespace ibat::server {

class TablePublisher {
 public:
  // Makes the table larger and returns the writer to use from then on (the same one if it could
  // not grow); what was published is in it.
  using Grow = std::function<shm::PathTableWriter*()>;
  // Starts publishing into `writer` (nullptr: stop), growing it by `grow` (empty: never). The table
  // starts empty.
  void attach(shm::PathTableWriter* writer, Grow grow = {});
  bool attached() const { return writer_ != nullptr; }

  // Resolver::set_store_observer: a path stored as valid, published until produced + ttl.
  void on_stored(const core::PathStored& stored, core::Duration ttl);
  // Resolver::set_path_observer: a path that is no longer valid is unpublished.
  void on_change(const core::PathChange& change);
  // Clears the table (then publish_valid() each page of every port's entries: a republish).
  void clear();
  // Publishes the valid entries of `entries` (a page of a port's Resolver::entries()).
  void publish_valid(const std::vector<core::CacheEntryView>& entries, core::TimePoint now, core::Duration ttl);
  // The table moved to `writer` (the Service made it smaller after a republish): what was
  // published is there, each path with its expiry.
  void follow(shm::PathTableWriter* writer);
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
  // The end of the TTL of the path published in `slot` with that expiry; outdated (skipped) once
  // the slot holds another expiry or nothing.
  struct Expiry {
    core::TimePoint until;
    std::uint32_t slot;
  };
  struct Later {
    bool operator()(const Expiry& a, const Expiry& b) const { return a.until > b.until; }
  };
  void publish(const shm::TableKey& key, const core::PathRecord& path, core::TimePoint produced, core::Duration ttl);
  // The queue anew from the table's slots: when it is mostly outdated items, and when the table
  // grew (its paths moved to other slots).
  void requeue();

  shm::PathTableWriter* writer_ = nullptr;
  Grow grow_;
  std::priority_queue<Expiry, std::vector<Expiry>, Later> expiry_queue_;
};

}  // namespace ibat::server

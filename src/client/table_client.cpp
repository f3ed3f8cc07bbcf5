// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// TableClient (see table_client.h).
#include "client/table_client.h"

#include <sys/socket.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace ibat::client {

namespace {

std::optional<uid_t> peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return std::nullopt;
  return cred.uid;
}

}  // namespace

std::unique_ptr<TableClient> TableClient::open(const std::string& socket, int fd) {
  const char* env = std::getenv("IBAT_SHARED_TABLE");
  if (env && std::strcmp(env, "0") == 0) return nullptr;
  std::optional<uid_t> owner = peer_uid(fd);
  if (!owner) return nullptr;
  std::string path = shm::table_path_for_socket(socket);
  auto table = map_current(path, *owner);
  if (!table) return nullptr;
  return std::unique_ptr<TableClient>(new TableClient(std::move(*table), std::move(path), *owner));
}

std::optional<shm::MappedTable> TableClient::map_current(const std::string& path, uid_t owner) {
  // Each try that finds a moved table follows one growth that happened since it opened the path.
  constexpr int kTries = 4;
  for (int i = 0; i < kTries; ++i) {
    std::string error;
    auto table = shm::open_table_file(path, owner, error);
    if (!table) return std::nullopt;
    if (!table->reader.moved()) return table;
  }
  return std::nullopt;
}

void TableClient::follow_move() {
  auto table = map_current(path_, owner_);
  if (!table) return;
  // Hits counted so far stay counted; the slots they came from named the old table.
  slots_.clear();
  table_ = std::move(*table);
  seen_.assign(seen_words(table_), 0);
}

void TableClient::first_hit(const shm::TableHit& hit) {
  if (hit.generation != generation_) {
    for (std::uint32_t slot : slots_) seen_[slot / 64] = 0;  // slots of an older generation name nothing now
    slots_.clear();
    generation_ = hit.generation;
  }
  std::uint64_t& word = seen_[hit.slot / 64];
  const std::uint64_t bit = 1ULL << (hit.slot % 64);
  if (word & bit) return;
  word |= bit;
  slots_.push_back(hit.slot);
}

protocol::TableHits TableClient::take_report() {
  protocol::TableHits report{generation_, hits_, std::move(slots_)};
  for (std::uint32_t slot : report.slots) seen_[slot / 64] = 0;
  slots_.clear();
  hits_ = 0;
  return report;
}

}  // namespace ibat::client

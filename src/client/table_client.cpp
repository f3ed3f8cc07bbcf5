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
  std::string error;
  auto table = shm::open_table_file(shm::table_path_for_socket(socket), *owner, error);
  if (!table) return nullptr;
  return std::unique_ptr<TableClient>(new TableClient(std::move(*table)));
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

// TableClient (see table_client.h).
#include "client/table_client.h"

#include <sys/socket.h>
#include <time.h>

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

// The coarse clock (a few ms resolution, a quarter of the cost) is enough for a ms age.
std::uint64_t monotonic_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}

constexpr std::uint32_t kTableFlags = IBAT_RESOLVE_SGID | IBAT_RESOLVE_PKEY | IBAT_RESOLVE_CACHE_ONLY;

// A slot's PathFields are ibat_path's dlid .. flow_label as they are, and its record the wire bytes.
static_assert(offsetof(ibat_path, slid) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, slid));
static_assert(offsetof(ibat_path, pkey) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, pkey));
static_assert(offsetof(ibat_path, sl) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, sl));
static_assert(offsetof(ibat_path, mtu) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, mtu));
static_assert(offsetof(ibat_path, rate) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, rate));
static_assert(offsetof(ibat_path, pkt_life) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, pkt_life));
static_assert(offsetof(ibat_path, hop_limit) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, hop_limit));
static_assert(offsetof(ibat_path, tclass) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, tclass));
static_assert(offsetof(ibat_path, flow_label) - offsetof(ibat_path, dlid) == offsetof(shm::PathFields, flow_label));
static_assert(offsetof(ibat_path, state) - offsetof(ibat_path, dlid) == sizeof(shm::PathFields));
static_assert(sizeof(ibat_path::record) == shm::kRecordBytes);

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

bool TableClient::resolve(const ibat_target& target, const ibat_resolve_opts* opts, ibat_path& out) {
  if (target.type != IBAT_TARGET_GID) return false;
  const std::uint32_t flags = opts ? opts->flags : 0;
  if ((flags & ~kTableFlags) != 0) return false;  // FORCE_SA or unknown bits
  const auto& reader = table_.reader;
  const std::uint64_t generation = reader.generation();
  if (generation != defaults_.generation) defaults_ = reader.defaults();
  shm::TableKey key;
  std::memcpy(key.dgid, target.u.gid.raw, 16);
  if (flags & IBAT_RESOLVE_SGID) {
    std::memcpy(key.sgid, opts->sgid.raw, 16);
  } else {
    key.sgid[0] = defaults_.local_gid[0];
    key.sgid[1] = defaults_.local_gid[1];
  }
  key.pkey = (flags & IBAT_RESOLVE_PKEY) ? opts->pkey : defaults_.pkey;
  shm::TableHit hit;
  if (!reader.lookup(key, generation, hit)) [[unlikely]] return false;
  record(hit);
  const std::uint64_t now = monotonic_ms();
  const std::uint64_t age = now > hit.produced_ms ? now - hit.produced_ms : 0;
  // The record's GIDs are the key's (the lookup compared them).
  std::memcpy(out.dgid.raw, key.dgid, 16);
  std::memcpy(out.sgid.raw, key.sgid, 16);
  std::memcpy(reinterpret_cast<unsigned char*>(&out) + offsetof(ibat_path, dlid), hit.path.fields,
              sizeof(shm::PathFields));
  out.state = IBAT_STATE_VALID;
  out.age_ms = static_cast<std::uint32_t>(age < UINT32_MAX ? age : UINT32_MAX);
  std::memcpy(out.record, hit.path.record, sizeof out.record);
  return true;
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

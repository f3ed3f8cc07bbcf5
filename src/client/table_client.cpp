// TableClient (see table_client.h).
#include "client/table_client.h"

#include <sys/socket.h>
#include <time.h>

#include <cstdlib>
#include <cstring>

#include "client/convert.h"
#include "mad/path_record.h"

namespace ibat::client {

namespace {

std::optional<uid_t> peer_uid(int fd) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred) return std::nullopt;
  return cred.uid;
}

std::uint64_t monotonic_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1'000'000;
}

constexpr std::uint32_t kTableFlags = IBAT_RESOLVE_SGID | IBAT_RESOLVE_PKEY | IBAT_RESOLVE_CACHE_ONLY;

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

bool TableClient::resolve(const ibat_target& target, const ibat_resolve_opts* opts, ibat_path& out) const {
  if (target.type != IBAT_TARGET_GID) return false;
  if (opts && (opts->flags & ~kTableFlags) != 0) return false;  // FORCE_SA or unknown bits
  core::Gid dgid, sgid;
  std::memcpy(dgid.raw.data(), target.u.gid.raw, 16);
  const bool has_sgid = opts && (opts->flags & IBAT_RESOLVE_SGID);
  const bool has_pkey = opts && (opts->flags & IBAT_RESOLVE_PKEY);
  if (has_sgid) std::memcpy(sgid.raw.data(), opts->sgid.raw, 16);
  const core::Pkey pkey{has_pkey ? opts->pkey : std::uint16_t{0}};
  const auto& reader = table_.reader;
  auto hit = reader.lookup(reader.key_for(dgid, has_sgid ? &sgid : nullptr, has_pkey ? &pkey : nullptr));
  if (!hit) return false;
  const std::uint64_t now = monotonic_ms();
  core::ResolveResult result;
  result.path = hit->path;
  result.state = core::EntryState::valid;
  result.age = std::chrono::milliseconds(now > hit->produced_ms ? now - hit->produced_ms : 0);
  out = to_c_path(result);
  const auto record = mad::encode_path_record(hit->path);
  std::memcpy(out.record, record.data(), sizeof out.record);
  return true;
}

}  // namespace ibat::client

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Peer credentials of Unix-socket clients and the privilege rule for administrative operations.
#include "server/daemon/peer_credentials.h"

#include <algorithm>
#include <cerrno>
#include <grp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ibat::server {

PeerCredentials read_peer_credentials(int fd) {
  PeerCredentials peer;
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof(cred)) {
    peer.pid = cred.pid;
    peer.uid = cred.uid;
    peer.gid = cred.gid;
  }
#ifdef SO_PEERGROUPS
  std::vector<gid_t> groups(64);
  for (int attempt = 0; attempt < 2; ++attempt) {
    socklen_t bytes = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &bytes) == 0) {
      groups.resize(bytes / sizeof(gid_t));
      peer.groups = std::move(groups);
      break;
    }
    if (errno != ERANGE) break;
    groups.resize(bytes / sizeof(gid_t) + 1);  // the kernel says how much it needs
  }
#endif
  return peer;
}

std::optional<gid_t> lookup_group(const std::string& group) {
  if (group.empty()) return std::nullopt;
  std::vector<char> buffer(4096);
  for (int attempt = 0; attempt < 4; ++attempt) {
    struct group entry {};
    struct group* found = nullptr;
    int rc = ::getgrnam_r(group.c_str(), &entry, buffer.data(), buffer.size(), &found);
    if (rc == ERANGE) {
      buffer.resize(buffer.size() * 4);
      continue;
    }
    if (rc != 0 || found == nullptr) return std::nullopt;
    return found->gr_gid;
  }
  return std::nullopt;
}

bool is_privileged(const PeerCredentials& peer, std::optional<gid_t> admin_gid) {
  if (peer.uid == 0) return true;
  if (!admin_gid) return false;
  return peer.gid == *admin_gid ||
         std::find(peer.groups.begin(), peer.groups.end(), *admin_gid) != peer.groups.end();
}

}  // namespace ibat::server

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Who is on the other end of a Unix socket (SO_PEERCRED, SO_PEERGROUPS) and whether that peer may
// run the privileged operations (NEIGH_ADD, NEIGH_DEL, FLUSH): root, or a member of admin_group.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <sys/types.h>

namespace ibat::server {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = static_cast<uid_t>(-1);
  gid_t gid = static_cast<gid_t>(-1);
  std::vector<gid_t> groups;  // supplementary groups, when the kernel reports them
};

// Reads the peer of a connected AF_UNIX socket. Unknown fields keep their "nobody" defaults.
PeerCredentials read_peer_credentials(int fd);

// The gid of `group`, nullopt when the name is empty or unknown.
std::optional<gid_t> lookup_group(const std::string& group);

// Root, or primary/supplementary membership of admin_gid.
bool is_privileged(const PeerCredentials& peer, std::optional<gid_t> admin_gid);

}  // namespace ibat::server

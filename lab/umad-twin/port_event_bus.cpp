// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortEventBus: ClientReregister announcements between the lab's processes (port_event_bus.h).
#include "port_event_bus.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "raw_io.h"

namespace ibat::umad_twin {
namespace {

sockaddr_un address_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) {
    throw std::runtime_error("port event socket path " + path + " is longer than " +
                             std::to_string(sizeof a.sun_path - 1) + " bytes; use a shorter IBAT_TWIN_EVENTS_DIR");
  }
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

std::string folder_of(const std::string& dir, const std::string& sockname) { return dir + "/" + sockname; }

// "<16 hex digits>-": the start of the names of a port's sockets.
std::string prefix_of(std::uint64_t port_guid) {
  char text[20];
  std::snprintf(text, sizeof text, "%016llx-", static_cast<unsigned long long>(port_guid));
  return text;
}

}  // namespace

PortEventBus::PortEventBus(const std::string& dir, const std::string& sockname, std::uint64_t port_guid,
                           std::uint32_t client_id) {
  const std::string folder = folder_of(dir, sockname);
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec) throw std::runtime_error("cannot make " + folder + ": " + ec.message());
  path_ = folder + "/" + prefix_of(port_guid) + std::to_string(client_id);
  const sockaddr_un a = address_of(path_);
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("port event socket: ") + std::strerror(errno));
  ::unlink(path_.c_str());  // a dead process's socket under a reused client id
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0) {
    const int e = errno;
    raw_close(fd_);
    throw std::runtime_error("cannot bind " + path_ + ": " + std::strerror(e));
  }
}

PortEventBus::~PortEventBus() {
  raw_close(fd_);
  ::unlink(path_.c_str());
}

std::vector<std::uint64_t> PortEventBus::receive() {
  std::vector<std::uint64_t> guids;
  std::uint64_t guid = 0;
  while (::recv(fd_, &guid, sizeof guid, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof guid)) guids.push_back(guid);
  return guids;
}

void PortEventBus::announce(const std::string& dir, const std::string& sockname, std::uint64_t port_guid) {
  const std::string folder = folder_of(dir, sockname);
  DIR* d = ::opendir(folder.c_str());
  if (!d) return;  // nobody listens on this fabric
  const std::string prefix = prefix_of(port_guid);
  const int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  while (fd >= 0) {
    const dirent* entry = ::readdir(d);
    if (!entry) break;
    if (std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    const std::string path = folder + "/" + entry->d_name;
    sockaddr_un a{};
    try {
      a = address_of(path);
    } catch (const std::exception&) {
      continue;
    }
    if (::sendto(fd, &port_guid, sizeof port_guid, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0 &&
        errno == ECONNREFUSED) {
      ::unlink(path.c_str());  // its process died without removing it
    }
  }
  if (fd >= 0) raw_close(fd);
  ::closedir(d);
}

}  // namespace ibat::umad_twin

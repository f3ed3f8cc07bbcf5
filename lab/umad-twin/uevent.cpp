// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The twin's uevents and uevent sockets (see uevent.h).
#include "uevent.h"

#include <fcntl.h>
#include <sys/socket.h>

#include <cerrno>

#include "raw_io.h"

namespace ibat::umad_twin {

std::string uevent_datagram(std::string_view action, std::string_view devpath, std::string_view subsystem,
                            const std::vector<std::pair<std::string, std::string>>& keys, std::uint64_t seqnum) {
  std::string out;
  const auto field = [&out](std::string_view key, std::string_view value) {
    out.append(key).append("=").append(value).push_back('\0');
  };
  out.append(action).append("@").append(devpath).push_back('\0');
  field("ACTION", action);
  field("DEVPATH", devpath);
  field("SUBSYSTEM", subsystem);
  for (const auto& [key, value] : keys) field(key, value);
  field("SEQNUM", std::to_string(seqnum));
  return out;
}

std::vector<std::string> ca_uevents(std::string_view action, const std::string& ca, unsigned umad, std::uint64_t seqnum) {
  const auto mad_device = [&](const char* kind, unsigned minor, std::uint64_t seq) {
    const std::string name = kind + std::to_string(umad);
    return uevent_datagram(action, "/devices/virtual/infiniband_mad/" + name, "infiniband_mad",
                           {{"MAJOR", std::to_string(kUmadMajor)}, {"MINOR", std::to_string(minor)},
                            {"DEVNAME", "infiniband/" + name}},
                           seq);
  };
  const auto umad_event = [&](std::uint64_t seq) { return mad_device("umad", umad, seq); };
  const auto issm_event = [&](std::uint64_t seq) { return mad_device("issm", kIssmMinorBase + umad, seq); };
  std::vector<std::string> events;
  if (action == "remove") {
    events.push_back(issm_event(seqnum));
    events.push_back(umad_event(seqnum + 1));
  } else {
    events.push_back(umad_event(seqnum));
    events.push_back(issm_event(seqnum + 1));
  }
  events.push_back(uevent_datagram(action, "/devices/virtual/infiniband/" + ca, "infiniband", {{"NAME", ca}}, seqnum + 2));
  return events;
}

int UeventSockets::open(int type) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_DGRAM | (type & (SOCK_NONBLOCK | SOCK_CLOEXEC)), 0, pair) != 0) return -1;
  (void)::fcntl(pair[1], F_SETFD, FD_CLOEXEC);  // the twin's end never outlives the process image
  std::lock_guard lock(mutex_);
  for (const int fd : pair) {
    // A number still listed is a program end closed behind close()'s back (close_range, a raw syscall).
    if (auto stale = ends_.find(fd); stale != ends_.end()) {
      raw_close(stale->second);
      ends_.erase(stale);
    }
  }
  ends_[pair[0]] = pair[1];
  return pair[0];
}

bool UeventSockets::owns(int fd) const {
  std::lock_guard lock(mutex_);
  return ends_.count(fd) != 0;
}

bool UeventSockets::forget(int fd) {
  std::lock_guard lock(mutex_);
  auto it = ends_.find(fd);
  if (it == ends_.end()) return false;
  raw_close(it->second);
  ends_.erase(it);
  return true;
}

void UeventSockets::broadcast(const std::string& datagram) const {
  std::lock_guard lock(mutex_);
  for (const auto& [program_end, twin_end] : ends_) {
    (void)::send(twin_end, datagram.data(), datagram.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  }
}

UeventSockets& uevent_sockets() {
  static UeventSockets* const sockets = new UeventSockets;
  return *sockets;
}

}  // namespace ibat::umad_twin

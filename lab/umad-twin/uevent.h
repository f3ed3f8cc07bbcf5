// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The kernel's uevents (NETLINK_KOBJECT_UEVENT, multicast group 1) as the twin gives them when one
// of its CAs is removed or added: the datagrams in the kernel's format and order, and the sockets
// they go to. A program's uevent socket is one end of a unix datagram socketpair; the twin keeps
// the other end and writes each uevent to every such end (interpose.cpp routes socket/bind/
// setsockopt/close of those descriptors here).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ibat::umad_twin {

inline constexpr int kUmadMajor = 231;        // the kernel's IB_UMAD_MAJOR
inline constexpr unsigned kIssmMinorBase = 64;  // issm<N> is minor 64 + N (IB_UMAD_NUM_FIXED_MINOR)

// One uevent as the kernel sends it: "ACTION@DEVPATH\0ACTION=..\0DEVPATH=..\0SUBSYSTEM=..\0",
// then each of `keys` as "KEY=VALUE\0", then "SEQNUM=<seqnum>\0".
std::string uevent_datagram(std::string_view action, std::string_view devpath, std::string_view subsystem,
                            const std::vector<std::pair<std::string, std::string>>& keys, std::uint64_t seqnum);

// The uevents of CA `ca` (umad device number `umad`) going away ("remove") or coming ("add"), in
// the kernel's order, numbered from `seqnum` on. remove: issm<N> and umad<N> (ib_umad_kill_port
// deletes the issm device first), then the CA. add: umad<N>, issm<N>, then the CA (its own "add"
// is held back until its clients are attached). DEVPATHs are under /devices/virtual/ (the twin's
// CAs have no PCI parent).
std::vector<std::string> ca_uevents(std::string_view action, const std::string& ca, unsigned umad, std::uint64_t seqnum);

// The process's uevent sockets. Thread-safe.
class UeventSockets {
 public:
  // socket(AF_NETLINK, type, NETLINK_KOBJECT_UEVENT): the program's end of a new socketpair (with
  // type's SOCK_NONBLOCK and SOCK_CLOEXEC), or -1 and errno.
  int open(int type);
  bool owns(int fd) const;
  // close() of the program's end: the twin's end is closed; false when `fd` is not one of them.
  bool forget(int fd);
  // To every socket; where the program's queue is full the uevent is lost, as the kernel loses it.
  void broadcast(const std::string& datagram) const;

 private:
  mutable std::mutex mutex_;
  std::map<int, int> ends_;  // the program's fd -> the twin's fd
};

// The one of the process, made at its first use and never destroyed (close() may come during exit).
UeventSockets& uevent_sockets();

}  // namespace ibat::umad_twin

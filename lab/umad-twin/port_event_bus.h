// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// PortEventBus: how the twin in the SM's process tells the twins of the other processes of a
// fabric that a port's SMA took a PortInfo Set with ClientReregister (sma_watch.h), as the HCA's
// firmware tells its own driver. Each CA of a process binds an AF_UNIX datagram socket
// <dir>/<sockname>/<port GUID>-<ibsim client id> (dir: IBAT_TWIN_EVENTS_DIR, sockname: the CA's
// simulator, so two fabrics with the same GUIDs stay apart); an announcement is the port GUID
// (8 bytes, host order) sent to the sockets of that port only, so a sweep's hundreds of
// announcements never fill one process's queue. Sockets of processes that died without removing
// theirs refuse the datagram and are removed by the sender.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ibat::umad_twin {

class PortEventBus {
 public:
  // Binds this CA's socket (making the folders). Throws std::runtime_error naming the path.
  PortEventBus(const std::string& dir, const std::string& sockname, std::uint64_t port_guid, std::uint32_t client_id);
  ~PortEventBus();  // closes and removes the socket
  PortEventBus(const PortEventBus&) = delete;
  PortEventBus& operator=(const PortEventBus&) = delete;

  int fd() const { return fd_; }  // readable while an announcement waits
  std::vector<std::uint64_t> receive();  // the port GUIDs announced since the last call

  // Sends `port_guid` to the sockets of that port on simulator `sockname` under `dir`.
  static void announce(const std::string& dir, const std::string& sockname, std::uint64_t port_guid);

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace ibat::umad_twin

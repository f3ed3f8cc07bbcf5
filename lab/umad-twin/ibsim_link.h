// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One CA of the twin attached to ibsim as a client, in ibsim's own client protocol (its
// include/ibsim.h, version 0.10 as Debian ships it): a control socket for connect and queries,
// a data socket carrying one struct sim_request (a 256-byte MAD and its addresses) per datagram.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

namespace ibat::umad_twin {

// ibsim's wire structures, byte for byte.
struct SimRequest {
  std::uint32_t dlid;  // network order in the low 16 bits
  std::uint32_t slid;
  std::uint32_t dqp;  // network order
  std::uint32_t sqp;
  std::uint32_t status;  // network order; 110 when ibsim could not deliver
  std::uint64_t length;  // big-endian
  std::uint8_t mad[256];
};
static_assert(sizeof(SimRequest) == 288);

inline constexpr std::uint32_t kPidSpan = 4194304;  // ibsim client id = pid + k * kPidSpan (k-th CA)

class IbsimLink {
 public:
  // Attaches to ibsim node `node` on simulator `sockname` (abstract unix names "<sockname>:ctl"...).
  // Throws std::runtime_error with a message naming the node and simulator.
  IbsimLink(const std::string& sockname, const std::string& node, std::uint32_t client_id, bool issm);
  ~IbsimLink();
  IbsimLink(const IbsimLink&) = delete;
  IbsimLink& operator=(const IbsimLink&) = delete;

  int data_fd() const { return data_fd_; }
  std::uint32_t slot() const { return slot_; }

  // Fresh copies of ibsim's records for the attached port (64 bytes each, as SMPs carry them).
  std::array<std::uint8_t, 64> node_info();
  std::array<std::uint8_t, 64> port_info();
  std::array<std::uint8_t, 64> pkeys();
  void set_issm(bool on);

 private:
  void control(std::uint32_t type, void* data, std::size_t length);

  std::mutex control_mutex_;
  int control_fd_ = -1;
  int data_fd_ = -1;
  std::uint32_t slot_ = 0;
  std::string where_;
};

}  // namespace ibat::umad_twin

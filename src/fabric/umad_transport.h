// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// UmadTransport: owns one libibumad port. A dedicated I/O thread blocks in umad_recv with a short
// timeout (umad2sim fds are >= 1024, so no epoll/select) and posts every received MAD into the
// owner's asio loop; sends go out from the caller's thread (umad_send is one write() on the fd).
// A device that goes away (read EIO) ends the thread. The SA agent is registered for RMPP
// (rmpp_version 1): the kernel joins a long answer (a GetTableResp) into one message, and the
// receive buffer grows to fit it (-ENOSPC says how long), up to a bound. Works on a real HCA and under umad2sim, which has no RMPP (docs/design.md §4).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <asio/io_context.hpp>

#include "core/types.h"
#include "fabric/mad_io.h"

namespace ibat::fabric {

// What umad_get_port() reported when the port was opened. Under umad2sim this snapshot is never
// refreshed (LID and SM LID go stale): PortMonitor tracks the live values.
struct PortSnapshot {
  std::string ca;
  int port = 0;
  core::Gid gid;
  core::Lid lid;
  core::Lid sm_lid;
  std::uint8_t sm_sl = 0;
  bool active = false;
};

class UmadTransport final : public MadSender {
 public:
  using Receiver = std::function<void(const ReceivedMad&)>;

  // Opens the port (ca empty / port 0: the first active one) and registers the SA and SMI agents.
  // A received message longer than `max_message_bytes` is read once into a buffer of its own (the
  // kernel keeps it first in line until it is), and only its first MAD is passed on, with its
  // length (ReceivedMad::length). Throws std::runtime_error naming the CA and port on failure.
  UmadTransport(asio::io_context& loop, const std::string& ca, int port, std::size_t max_message_bytes);
  ~UmadTransport() override;  // stops the I/O thread, closes the port
  UmadTransport(const UmadTransport&) = delete;
  UmadTransport& operator=(const UmadTransport&) = delete;

  // Starts the I/O thread; `receiver` runs on the loop thread for every received MAD.
  void start(Receiver receiver);
  void stop();

  bool send(const OutgoingMad& mad) override;

  const PortSnapshot& snapshot() const { return snapshot_; }
  // Whether a long SA answer arrives whole: false under umad2sim (no RMPP: its first 224 bytes only).
  bool reassembles_rmpp() const { return !simulator_; }
  // Messages longer than max_message_bytes: only their first MAD passed on.
  std::uint64_t oversized() const { return oversized_; }

 private:
  void io_thread_main();
  // Reads the first queued message, `length` MAD bytes, and passes on its first MAD.
  void read_oversized(const std::weak_ptr<Receiver>& receiver, int length);
  // Posts the first `kept` MAD bytes of the umad buffer, of a message `length` bytes long.
  void post(const std::weak_ptr<Receiver>& receiver, std::vector<std::uint8_t>& umad, std::size_t kept,
            std::size_t length);

  asio::io_context& loop_;
  PortSnapshot snapshot_;
  int port_id_ = -1;
  int sa_agent_ = -1;
  int smi_lid_agent_ = -1;
  int smi_dr_agent_ = -1;
  bool simulator_ = false;  // umad2sim (fd >= 1024): no RMPP, 224 valid bytes a MAD
  std::size_t max_message_bytes_;
  std::atomic<std::uint64_t> oversized_{0};
  std::mutex send_mutex_;
  std::atomic<bool> stopping_{false};
  std::thread io_thread_;
  // Shared with posted handlers: once the transport is gone, handlers still queued do nothing.
  std::shared_ptr<Receiver> receiver_;
};

}  // namespace ibat::fabric

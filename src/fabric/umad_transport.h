// UmadTransport: owns one libibumad port. A dedicated I/O thread blocks in umad_recv with a short
// timeout (umad2sim fds are >= 1024, so no epoll/select) and posts every received MAD into the
// owner's asio loop; sends go out from the caller's thread (umad_send is one write() on the fd).
// Works on a real HCA and under umad2sim (docs/design.md §4).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

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
  // Throws std::runtime_error naming the CA and port on failure.
  UmadTransport(asio::io_context& loop, const std::string& ca, int port);
  ~UmadTransport() override;  // stops the I/O thread, closes the port
  UmadTransport(const UmadTransport&) = delete;
  UmadTransport& operator=(const UmadTransport&) = delete;

  // Starts the I/O thread; `receiver` runs on the loop thread for every received MAD.
  void start(Receiver receiver);
  void stop();

  bool send(const OutgoingMad& mad) override;

  const PortSnapshot& snapshot() const { return snapshot_; }

 private:
  void io_thread_main();

  asio::io_context& loop_;
  PortSnapshot snapshot_;
  int port_id_ = -1;
  int sa_agent_ = -1;
  int smi_lid_agent_ = -1;
  int smi_dr_agent_ = -1;
  std::mutex send_mutex_;
  std::atomic<bool> stopping_{false};
  std::thread io_thread_;
  // Shared with posted handlers: once the transport is gone, handlers still queued do nothing.
  std::shared_ptr<Receiver> receiver_;
};

}  // namespace ibat::fabric

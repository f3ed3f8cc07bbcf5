// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// VerbsDevices: the twin's CAs as libibverbs devices that carry async events, the one part of
// verbs that ibatd uses (src/fabric/verbs_events.cpp): ibv_get_device_list lists one device per
// CA under its name, ibv_open_device gives a context whose async_fd is readable while an event
// waits (an eventfd in semaphore mode; O_NONBLOCK as the caller sets it), ibv_get_async_event
// takes the oldest, ibv_ack_async_event does nothing (there is no object to release). Events are
// raised by the twin's receive thread (interpose.cpp): CLIENT_REREGISTER when the SM's twin
// announces a ClientReregister Set for the port (port_event_bus.h), and LID_CHANGE, SM_CHANGE,
// PORT_ACTIVE, PORT_ERR, GID_CHANGE, PKEY_CHANGE from the port's PortInfo and P_Key table as ibsim
// has them (port_changes). Nothing else of verbs works on these contexts (no PD, QP, CQ).
#pragma once

#include <infiniband/verbs.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ibat::umad_twin {

// What an HCA's driver raises for a port whose records went from `before` to `after` (PortInfo
// and the first P_Key block, 64 bytes each as SMPs carry them), in the order mlx5 reports them.
std::vector<ibv_event_type> port_changes(const std::array<std::uint8_t, 64>& port_before,
                                         const std::array<std::uint8_t, 64>& port_after,
                                         const std::array<std::uint8_t, 64>& pkeys_before,
                                         const std::array<std::uint8_t, 64>& pkeys_after);

class VerbsDevices {
 public:
  explicit VerbsDevices(const std::vector<std::string>& ca_names);
  ~VerbsDevices();
  VerbsDevices(const VerbsDevices&) = delete;
  VerbsDevices& operator=(const VerbsDevices&) = delete;

  // As libibverbs': a null-terminated array the caller frees with free_list.
  ibv_device** list(int* count) const;
  static void free_list(ibv_device** list);
  bool owns(const ibv_device* device) const;
  bool owns(const ibv_context* context) const;
  ibv_context* open(ibv_device* device);  // null with errno when not ours
  int close(ibv_context* context);
  int get_event(ibv_context* context, ibv_async_event* event);  // -1 with errno (EAGAIN) when none

  // Queues `type` for port `port` on every open context of CA `ca` (its index in the list).
  void raise(unsigned ca, ibv_event_type type, int port);
  bool watched(unsigned ca) const;  // a context of it is open
  std::uint64_t raised() const;      // events queued so far (for the twin's stats)

 private:
  struct Context;
  std::vector<std::unique_ptr<ibv_device>> devices_;
  mutable std::mutex mutex_;
  std::map<const ibv_context*, std::unique_ptr<Context>> contexts_;
  std::uint64_t raised_ = 0;
};

}  // namespace ibat::umad_twin

// FabricPort: everything ibatd needs from one local HCA port, behind one object. It owns the umad
// I/O thread (UmadTransport) and, on the owner's asio event loop, the SaClient (PathRecord GETs with
// its own timers and retries), the PortMonitor (PortInfo/SMInfo polling) and the TrapSubscriber.
// Every callback in Events runs on the owner's loop thread, never on the I/O thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <asio/io_context.hpp>

#include "core/clock.h"
#include "core/query_sink.h"
#include "core/resolver.h"
#include "core/types.h"

namespace ibat::fabric {

struct FabricOptions {
  std::string ca;                          // empty: first CA umad finds
  int port = 0;                            // 0: first active port
  core::Duration mad_timeout = std::chrono::milliseconds(200);  // per MAD attempt
  std::uint32_t mad_retries = 3;           // resends of one MAD before reporting `timeout`
  core::Duration poll_interval = std::chrono::seconds(1);       // local PortInfo polling
  core::Duration sm_check_interval = std::chrono::seconds(60);  // routine SM/SA check (x [1, 1.5))
  bool subscribe_traps = true;             // InformInfo for traps 64/65
  core::Pkey broadcast_pkey{0xFFFF};       // IPoIB broadcast group read for on_broadcast_params
};

struct FabricEvents {
  std::function<void(core::QueryId, const core::QueryResult&)> on_query_result;
  std::function<void(const core::LocalPort&)> on_local_port;
  std::function<void()> on_sm_changed;
  std::function<void(const core::Gid&)> on_gid_out_of_service;
  std::function<void(const core::Gid&)> on_gid_in_service;
  std::function<void(const core::BroadcastParams&)> on_broadcast_params;
  // After each (re-)subscription: whether OpenSM accepted InformInfo for trap 64 or 65.
  std::function<void(std::uint16_t trap, bool ok)> on_trap_subscribed;
};

struct FabricStats {
  std::uint64_t mads_sent = 0;         // local_mads_sent + remote_mads_sent
  std::uint64_t local_mads_sent = 0;   // to the own port (0-hop PortInfo)
  std::uint64_t remote_mads_sent = 0;  // to another LID: the SM and SA
  std::uint64_t mads_received = 0;
  std::uint64_t mad_timeouts = 0;     // attempts that timed out (each may be retried)
  std::uint64_t mad_retries = 0;
  std::uint64_t late_or_duplicate = 0;  // responses with no matching outstanding TID
  std::uint64_t invalid_responses = 0;  // failed validation (class/method/attr/length/source LID)
  std::uint64_t reports = 0;            // trap Reports received from the SM (and answered)
  std::uint64_t rejected_reports = 0;   // Reports from a LID other than the SM's: dropped
  std::uint64_t sm_changes = 0;
  bool port_events = false;  // HCA port events are live (then no routine SM/SA check)
};

class FabricPort final : public core::QuerySink {
 public:
  // Opens the umad port; throws std::runtime_error with a message naming the CA/port on failure.
  FabricPort(asio::io_context& loop, const FabricOptions& options, FabricEvents events);
  ~FabricPort() override;  // stops the I/O thread
  FabricPort(const FabricPort&) = delete;
  FabricPort& operator=(const FabricPort&) = delete;

  // Starts the I/O thread and polling. The first on_local_port arrives once PortInfo is read.
  void start();
  void stop();

  void send_path_query(const core::PathQuery& query) override;
  void cancel_query(core::QueryId id) override;

  FabricStats stats() const;
  core::LocalPort local_port() const;
  // For the start-up log: where HCA port events come from, or why there are none.
  std::string port_events_status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibat::fabric

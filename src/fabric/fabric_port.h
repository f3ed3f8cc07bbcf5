// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
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
#include "core/fabric_input.h"
#include "core/query_sink.h"
#include "core/resolve_types.h"
#include "core/types.h"
#include "fabric/fabric_options.h"
#include "fabric/path_table.h"
#include "fabric/port_events.h"

namespace ibat::fabric {

// What the port reports: the inputs of its Resolver (core/fabric_input.h), and three notices that
// are the operator's alone.
struct FabricEvents {
  core::FabricInput* input = nullptr;  // none: nobody listens
  // After each (re-)subscription: whether OpenSM accepted InformInfo for trap 64 or 65.
  std::function<void(std::uint16_t trap, bool ok)> on_trap_subscribed;
  // Once per SM when PathRecord GetTables go off (refused, unanswered, unreadable; or no RMPP at
  // the first table asked for): why. Until the next SM, use GETs.
  std::function<void(const std::string& reason)> on_table_fallback;
  // Each HCA event of the port (verbs async events), before the port monitor acts on it.
  std::function<void(PortEvent event)> on_port_event;
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
  // The Resolver's GetTable (query_path_table); its answer comes as on_table_result.
  bool send_table_query(const core::TableQuery& query) override;
  // The Resolver's size query (query_subnet_size), once the SA is known; its answer comes as
  // on_subnet_size. False before the first PortInfo names the SM: the table then goes unspread.
  bool send_size_query(const core::SubnetSizeQuery& query) override;
  bool send_probe(const core::PathQuery& query) override;

  // The PathRecord GetTable of `sgid`'s subnet (SaClient::query_path_table); before the SM LID is
  // known it waits for the first PortInfo. Returns false, and never calls `done`, when GetTables
  // are off for this SM (tables_usable()).
  bool query_path_table(const core::Gid& sgid, core::Pkey pkey, std::function<void(const PathTable&)> done);
  bool tables_usable() const;

  FabricStats stats() const;
  core::LocalPort local_port() const;
  // For the start-up log: where HCA port events come from, or why there are none.
  std::string port_events_status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ibat::fabric

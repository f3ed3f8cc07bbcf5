// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// FabricInput: what one port's fabric tells the Resolver — the SA's answers to its queries and
// what the port, the SM and the SA's traps report. Declared once, here: the Resolver takes them,
// the daemon's PortRuntime passes them on (logging what an operator should see), and a FabricPort
// (or a test's fake) calls them, on the loop thread.
#pragma once

#include "core/query_sink.h"
#include "core/resolve_types.h"
#include "core/types.h"

namespace ibat::core {

class FabricInput {
 public:
  virtual ~FabricInput() = default;
  virtual void on_query_result(QueryId id, const QueryResult& result) = 0;
  // The answer to a TableQuery (Policy::prefetch).
  virtual void on_table_result(QueryId id, const TableResult& result) = 0;
  // The answer to a SubnetSizeQuery (before the first TableQuery).
  virtual void on_subnet_size(QueryId id, const SubnetSizeResult& result) = 0;
  virtual void on_local_port(const LocalPort& port) = 0;  // LID change, port down / up
  virtual void on_sm_changed() = 0;                       // SM restart or fail-over
  virtual void on_gid_out_of_service(const Gid& gid) = 0; // trap 65
  virtual void on_gid_in_service(const Gid& gid) = 0;     // trap 64
  virtual void on_broadcast_params(const BroadcastParams& params) = 0;
};

}  // namespace ibat::core

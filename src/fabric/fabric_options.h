// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// What ibatd configures of its fabric port (FabricOptions) and the counters the port reports
// (FabricStats): plain values, so the daemon's config and JSON views need neither Asio nor the port.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "core/clock.h"
#include "core/types.h"

namespace ibat::fabric {

// Records a GetTable answer may hold: a subnet has at most 49,151 unicast LIDs, and alias GUIDs
// add records. 65,536 PathRecords are a 4 MiB answer.
inline constexpr std::uint32_t kDefaultTableMaxRecords = 65536;
// After an SM change every host re-subscribes and re-reads the broadcast group at once: spread
// over this, their MADs stay a small share of the SA's work (docs/fabric.md, "After an SM change").
inline constexpr core::Duration kDefaultSmRefreshSpread = std::chrono::seconds(2);

struct FabricOptions {
  std::string ca;                          // empty: first CA umad finds
  int port = 0;                            // 0: first active port
  core::Duration mad_timeout = std::chrono::milliseconds(200);  // per MAD attempt
  std::uint32_t mad_retries = 3;           // resends of one MAD before reporting `timeout`
  core::Duration poll_interval = std::chrono::seconds(1);       // local PortInfo polling
  core::Duration sm_check_interval = std::chrono::seconds(60);  // routine SM/SA check (x [1, 1.5))
  bool subscribe_traps = true;             // InformInfo for traps 64/65
  // After an SM change, the trap subscriptions and the broadcast-group read go at a random time
  // within this (every host sees the change at once) while HCA port events are live; without
  // them at once: an SM that restarts again inside the window would not be noticed from the SA
  // side (docs/fabric.md).
  core::Duration sm_refresh_spread = kDefaultSmRefreshSpread;
  core::Pkey broadcast_pkey{0xFFFF};       // IPoIB broadcast group read for on_broadcast_params
  std::uint32_t table_max_records = kDefaultTableMaxRecords;  // bounds GetTable answers and the receive buffer
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
  std::uint64_t oversized_mads = 0;         // received messages too long to keep (GetTable bound)
  std::uint64_t sa_gettables_sent = 0;      // PathRecord and NodeRecord GetTables started
  std::uint64_t sa_gettables_answered = 0;  // GetTableResps received, whatever their status
  std::uint64_t sa_table_records = 0;       // records in the GetTableResps that could be read
  std::uint64_t sa_table_bytes = 0;         // bytes of every GetTableResp received
  // Gauges, a host's largest over its ports; 0 before anything was measured.
  std::uint64_t sa_srtt_us = 0;              // the SA's smoothed GET round trip (RoundTripEstimate)
  std::uint64_t sa_table_ns_per_record = 0;  // the SA's time per PathRecord of a table (TableTimer)
  std::uint64_t sa_mad_timer_floor_us = 0;    // the least a MAD attempt to the SA waits now (RoundTripEstimate)
  std::uint64_t sa_table_timer_floor_us = 0;  // the least a PathRecord table's attempt waits now (TableTimer)
  bool port_events = false;  // HCA port events are live (then no routine SM/SA check)

  // A host's total over its ports; port_events holds when it holds on every port.
  FabricStats& operator+=(const FabricStats& o) {
    for (auto [mine, theirs] : {std::pair{&mads_sent, &o.mads_sent}, {&local_mads_sent, &o.local_mads_sent},
                                {&remote_mads_sent, &o.remote_mads_sent}, {&mads_received, &o.mads_received},
                                {&mad_timeouts, &o.mad_timeouts}, {&mad_retries, &o.mad_retries},
                                {&late_or_duplicate, &o.late_or_duplicate},
                                {&invalid_responses, &o.invalid_responses}, {&reports, &o.reports},
                                {&rejected_reports, &o.rejected_reports}, {&sm_changes, &o.sm_changes},
                                {&oversized_mads, &o.oversized_mads}, {&sa_gettables_sent, &o.sa_gettables_sent},
                                {&sa_gettables_answered, &o.sa_gettables_answered},
                                {&sa_table_records, &o.sa_table_records}, {&sa_table_bytes, &o.sa_table_bytes}})
      *mine += *theirs;
    sa_srtt_us = std::max(sa_srtt_us, o.sa_srtt_us);
    sa_table_ns_per_record = std::max(sa_table_ns_per_record, o.sa_table_ns_per_record);
    sa_mad_timer_floor_us = std::max(sa_mad_timer_floor_us, o.sa_mad_timer_floor_us);
    sa_table_timer_floor_us = std::max(sa_table_timer_floor_us, o.sa_table_timer_floor_us);
    port_events = port_events && o.port_events;
    return *this;
  }
};

}  // namespace ibat::fabric

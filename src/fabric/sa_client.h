// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaClient: SA queries on the owner's loop. GET PathRecord (DGID or DLID target, always with SGID,
// P_Key and NumbPath=1, since OpenSM picks an arbitrary source otherwise), GET MCMemberRecord of
// the IPoIB broadcast group, and the PathRecord GetTable of a port's whole subnet (SGID, P_Key,
// Reversible, NumbPath=1, DGID wildcarded; path_table.h). Each answer is checked (SA status,
// record length, record fields vs. the question) and mapped to core::Error. TIDs, timers and
// retries live in MadRequester.
//
// GetTable falls back to GETs: when the SA refuses one, never answers it, or sends what cannot be
// read, GetTables stay off until the next SM (on_sm_changed), and on_tables_off reports it once.
// Without RMPP in the MAD layer (umad2sim) they are off from the start.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/query_sink.h"
#include "core/resolve_types.h"
#include "fabric/fabric_options.h"
#include "fabric/mad_requester.h"
#include "fabric/path_table.h"
#include "fabric/sa_tables.h"

namespace ibat::fabric {

struct TableOptions {
  std::size_t max_records = kDefaultTableMaxRecords;  // a longer table is refused (GetTables off)
  bool rmpp = true;  // the MAD layer joins RMPP answers; false: no GetTable
};

// PathRecord, NodeRecord and SwitchInfoRecord GetTables, counted per query (retries are MadRequester's).
struct TableCounters {
  std::uint64_t sent = 0;      // GetTables started
  std::uint64_t answered = 0;  // GetTableResps received, whatever their status
  std::uint64_t records = 0;   // records in the answers that could be read
  std::uint64_t bytes = 0;     // bytes of every GetTableResp received
};

class SaClient {
 public:
  using PathDone = std::function<void(const core::QueryResult&)>;
  using BroadcastDone = std::function<void(core::Error, const core::BroadcastParams&)>;
  using TableDone = std::function<void(const PathTable&)>;
  using SizeDone = std::function<void(const core::SubnetSizeResult&)>;

  SaClient(MadRequester& requester, const RetryPolicy& policy, const TableOptions& tables = {});

  // Where the SA lives (the SM LID and SL); requests in flight are redirected too.
  void set_sm(core::Lid sm_lid, std::uint8_t sm_sl);
  core::Lid sm_lid() const { return sm_lid_; }

  // Starts one PathRecord GET; `done` runs exactly once unless cancel(query.id) comes first.
  void query_path(const core::PathQuery& query, PathDone done);
  bool cancel(core::QueryId id);
  std::size_t in_flight() const { return paths_in_flight_.size(); }

  // GET MCMemberRecord of ff12:401b:<pkey>::ffff:ffff.
  void query_broadcast_group(const core::Gid& port_gid, core::Pkey pkey, BroadcastDone done);

  // Starts the PathRecord GetTable from `sgid` (with the switches' NodeRecord GetTable beside
  // it); `done` runs exactly once. Returns false, and never calls `done`, when GetTables are off.
  // A refused or unreadable table turns them off until the next SM, and so does one that times
  // out while the SA answered other queries; one that times out while the SA answered nothing
  // else (down, or OpenSM's first sweep; or busy, when only the NodeRecord table beside it was
  // answered) leaves them on: the caller may ask again.
  // `id` (non-zero) lets cancel(id) stop it: no more resends, `done` not called. `qos_class`: the
  // paths of that QoS class (its component-mask bit set), as a GET with it would answer each.
  bool query_path_table(const core::Gid& sgid, core::Pkey pkey, TableDone done, core::QueryId id = 0,
                        std::optional<std::uint16_t> qos_class = std::nullopt);
  // Starts the SwitchInfoRecord GetTable (every switch, no path computed) that tells the subnet's
  // size (subnet_size_from_answer); `done` runs exactly once. False, and never `done`, when
  // GetTables are off. Its failure turns nothing off: without it the PathRecord table goes unspread.
  bool query_subnet_size(SizeDone done);
  bool tables_usable() const { return sa_tables_.usable(); }
  const std::string& tables_off_reason() const { return sa_tables_.off_reason(); }
  // A new SM: GetTables may be tried again. Tables started before it no longer turn them off.
  void on_sm_changed();
  // Runs once when GetTables go off (per SM; or at the first query when there is no RMPP).
  void on_tables_off(std::function<void(const std::string& reason)> observer) {
    tables_off_observer_ = std::move(observer);
  }
  const TableCounters& table_counters() const { return table_counters_; }

 private:
  struct TableJob;
  OutgoingMad sa_mad(const mad::MadBuffer& bytes) const;
  void on_path_table(const std::shared_ptr<TableJob>& job, const MadAnswer* answer);
  void on_switch_table(const std::shared_ptr<TableJob>& job, const MadAnswer* answer);
  void finish_table(TableJob& job);
  void count_table_answer(const MadAnswer& answer, std::size_t records);
  bool cancel_table(core::QueryId id);

  MadRequester& requester_;
  RetryPolicy policy_;
  RetryPolicy table_policy_;  // table_retry_policy(policy_)
  TableOptions tables_;
  core::Lid sm_lid_;
  std::uint8_t sm_sl_ = 0;
  std::unordered_map<core::QueryId, MadRequester::Handle> paths_in_flight_;
  std::unordered_map<core::QueryId, std::shared_ptr<TableJob>> tables_in_flight_;  // by the caller's id
  // GetTables on or off, the SM changes and the SA answers: a table that times out while the SA
  // answers nothing else says the SA is down or in its first sweep (OpenSM ignores SA MADs then),
  // not that it refuses tables.
  SaTables sa_tables_;
  TableCounters table_counters_;
  std::function<void(const std::string&)> tables_off_observer_;
};

// The core error for an SA answer's MAD status word (0 -> ok).
core::Error error_from_sa_status(const mad::MadHeader& header);

// Checks a PathRecord GetResp against its query; ok with the path, or the error to report.
core::QueryResult path_result_from_answer(const core::PathQuery& query, const MadAnswer& answer);

}  // namespace ibat::fabric

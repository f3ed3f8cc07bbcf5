// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One port's subnet GetTable as one state machine (docs/design.md, "Admission"): the paths to
// every end port of the subnet on the default P_Key in one query (the default paths, or those of
// one QoS class: docs/design.md "QoS: the cache key"), the size query that may come first, the
// table gate's probes of the SA's queue, and the table's retries. The Resolver tells it
// what happened (wanted, dropped, answered, lost) and asks it what to send now (step) and when
// to ask again (wakeup); it owns the ids of the three kinds of query, so an answer is matched
// here and a stale one (asked before the last want) is told apart. It sends nothing itself.
// Pure: time, the retry delays and the hold after a LID move come from the caller.
//
//            want                    gate open: send
//   idle ----------> wanted ------------------------------> in_flight
//    ^  <----------  |  ^  \                                 |  |  |
//    |    drop       |  |   \ probe due        timeout,      |  |  | answered, refused,
//    |               |  |    v                 retries left  |  |  | out of retries
//    |               |  +- probing <---------- wanted <------+  |  v
//    |               |    (answered short: gate open)            |  idle
//    +---------------+-------------------------------------------+
//
// The size query (SubnetSizeQuery) goes once, before the first probe, while the subnet's size is
// unknown and an in-use window needs it; it lives beside the table's state: a new want keeps it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/clock.h"
#include "core/query_sink.h"
#include "core/table_gate.h"

namespace ibat::core {

enum class TableState : std::uint8_t {
  idle,       // no table wanted, none in flight
  wanted,     // to be sent once the port can, its retry time passed, the size is known and the gate opens
  probing,    // wanted, and the gate's probe is in flight
  in_flight,  // the GetTable is out: its answer is awaited
};

class SubnetTable {
 public:
  // What step() says to send now; `id` is the query's.
  enum class Send : std::uint8_t { nothing, size_query, probe, table };
  struct Step {
    Send send = Send::nothing;
    QueryId id = 0;
  };

  // `subnet_ports`: the subnet's end ports as the operator knows them (0: unknown). `qos_class`:
  // the class its GetTable asks with (nullopt: the default paths). `id_space`: its queries' ids
  // are its own among the port's tables (0 for the default one; below kIdSpaces).
  static constexpr std::uint16_t kIdSpaces = 1u << 15;
  SubnetTable(std::uint64_t gate_seed, std::size_t subnet_ports, std::optional<std::uint16_t> qos_class = std::nullopt,
              std::uint16_t id_space = 0);

  // The id space of a table's query (size, probe or GetTable); nullopt: no table's (a GET's).
  static std::optional<std::uint16_t> id_space_of(QueryId id) {
    if (!(id & kTableQueryBit)) return std::nullopt;
    return static_cast<std::uint16_t>((id >> kIdSpaceShift) & (kIdSpaces - 1));
  }
  std::optional<std::uint16_t> qos_class() const { return qos_class_; }

  TableState state() const { return state_; }
  // A table is wanted or in flight: the GET revalidations wait for it.
  bool awaited() const { return state_ != TableState::idle; }
  // A probe found the SA's queue long: the table is not coming soon.
  bool held() const { return gate_.held(); }
  // The end ports of the subnet as last seen (the last table, the warm cache, the operator), 0: unknown.
  std::size_t subnet_size() const { return subnet_size_; }
  void learn_size(std::size_t ports);  // keeps the largest seen
  TimePoint wanted_at() const { return wanted_at_; }
  const TableQuery& sent() const { return sent_; }  // the question of the one in flight or last sent
  TimePoint sent_at() const { return sent_at_; }
  bool asking_size(QueryId id) const { return id != 0 && id == size_; }  // the size query in flight
  bool in_flight(QueryId id) const { return id != 0 && id == table_; }   // the GetTable in flight
  // Whether the size is to be asked first: unknown, never settled, and a window needs it.
  bool size_wanted(bool window_needs_size) const;

  // A new table is wanted at `now`; returns the queries to cancel (the table or probe in flight).
  std::vector<QueryId> want(TimePoint now);
  // No table any more; returns the queries to cancel.
  std::vector<QueryId> drop();

  // What to send now, with the port usable (`port_ready`): its state moves as if it were sent
  // (for a probe, report the sink's answer with probe_sent). `hold`: how long after it was wanted
  // the table waits (InUseWindow::table_hold), read when the gate is first armed.
  Step step(TimePoint now, bool port_ready, bool window_needs_size, Duration hold, const Gid& sgid, Pkey pkey);
  // When step() has something to do; nullopt: not before an event.
  std::optional<TimePoint> wakeup(TimePoint now, bool port_ready, bool window_needs_size) const;
  // The probe step() asked for went (`sent`), or the sink cannot probe: then the gate opens.
  void probe_sent(TimePoint now, bool sent);

  // Answers, matched by id: false for one that is not the query in flight (cancelled, outdated).
  // When the probe `id` went; nullopt: it is not the probe in flight.
  std::optional<TimePoint> probe_sent_at(QueryId id) const;
  // The probe's, answered after waiting `queue` in the SA's queue or `lost` (TableGate::on_probe_result):
  // nullopt if not the probe in flight, else whether the gate opened.
  std::optional<bool> on_probe_result(QueryId id, TimePoint now, bool lost, Duration queue);
  // The table answered with `records` paths: the subnet's size from now on.
  bool on_table_answered(QueryId id, std::size_t records);
  // The table was lost (`retry_at`: the caller's backoff, nullopt: no retry left) or refused.
  bool on_table_failed(QueryId id, std::optional<TimePoint> retry_at);
  // The sink sends no tables: the table is forgotten as answered-never.
  bool on_table_unsent(QueryId id);
  // The size query's answer: `lids` (ok), `retry_at` (lost, retries left), or settled unanswered.
  enum class SizeOutcome : std::uint8_t { answered, retry, settled };
  bool on_size_result(QueryId id, SizeOutcome outcome, std::size_t lids, TimePoint retry_at);
  std::uint32_t table_attempts() const { return table_attempts_; }
  std::uint32_t size_attempts() const { return size_attempts_; }

 private:
  // Table, probe and size-query ids share one counter, marked by the top bit: never a GET's; the
  // next 15 bits name the table among the port's (the counter stays below 2^48).
  static constexpr QueryId kTableQueryBit = QueryId{1} << 63;
  static constexpr int kIdSpaceShift = 48;
  QueryId next_id() { return kTableQueryBit | QueryId{id_space_} << kIdSpaceShift | next_++; }
  // step() has something to weigh: a table is wanted, no size query is out, the port is usable.
  bool ready(bool port_ready) const;

  TableGate gate_;
  std::optional<std::uint16_t> qos_class_;
  std::uint16_t id_space_;
  TableState state_ = TableState::idle;
  QueryId next_ = 1;
  QueryId table_ = 0;  // the GetTable in flight
  QueryId probe_ = 0;  // the gate's probe in flight
  QueryId size_ = 0;   // the SubnetSizeQuery in flight
  std::uint32_t table_attempts_ = 0;  // unanswered GetTables since it was wanted
  std::uint32_t size_attempts_ = 0;   // the size query's unanswered attempts
  bool size_settled_ = false;         // asked and answered, refused or given up: not again
  std::size_t subnet_size_ = 0;
  TimePoint retry_at_{};
  TimePoint wanted_at_{};
  TableQuery sent_;
  TimePoint sent_at_{};
};

}  // namespace ibat::core

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// The SaClient's GetTables in the simulator, as fabric::SaClient::query_path_table runs them
// (src/fabric/sa_client_tables.cpp): for each TableQuery of a node's Resolver, the NodeRecord
// GetTable of the switches, then the PathRecord GetTable of the subnet, both in flight and joined
// when both have ended by a fabric::TableJoin, SaClient's own. Each runs MadRequester's attempts
// with fabric::table_retry_policy (20 x the GETs' first timeout, one resend: 4 s then 8 s
// +/- 25 %), raised by the node's TableTimer of that kind (RoundTrips::table_policy) as MadRequester
// raises it: its answer, one RMPP message, must arrive whole before the running attempt's timer
// fires, however long the SA took to compute it, and every resend is a new request the SA computes
// again. The PathRecord GetTable costs one record per end port: one per simulated node, the
// requester's own included (OpenSM lists the path to itself too); the simulated subnet has no
// switches, so their port-0 records (a real SA lists them: about N/12 more on a fat tree of 36-port
// switches, which ibatd then leaves out) are not counted, and the NodeRecord GetTable computes no
// path: the per-query overhead alone. The answer holds the records a GET gives (path_between). The
// join and the node's fabric::SaTables decide as in SaClient: a PathRecord GetTable that fails
// cancels the switches' one; whether it turns the node's GetTables off until the next SM change
// (the sink then refuses them and the Resolver uses GETs) is fabric::TableFallback's verdict, by
// the SA answers SaTables counts (the monitor's broadcast-group answers among them, as ibatd's
// SaClient counts its own); a GetTable the Resolver cancels (replaced after an SM change) sends no
// more resends, but what the SA already queued it still computes. Daemons running at time 0 had
// their table before the run: it is answered in the constructor, at no cost to the SA, and they ask
// no size. The size query (SaClient::query_subnet_size, the switches' SwitchInfoRecords) runs the
// table retry policy too, costs the per-query overhead alone (no path, as the NodeRecord one) and
// is answered with the simulated subnet's size.
#include <optional>
#include <utility>

#include "sim/simulator.h"

namespace ibat::sim {

bool Simulator::NodeSink::send_table_query(const core::TableQuery& query) { return sim_.send_table(node_, query); }
bool Simulator::NodeSink::send_size_query(const core::SubnetSizeQuery& query) { return sim_.send_size(node_, query); }
bool Simulator::NodeSink::send_probe(const core::PathQuery& query) {  // a GET, at a GET's cost
  send_path_query(query);
  return true;
}

// A monitor MAD answered. The broadcast group's MCMemberRecord GET is one of the node's SaClient's
// (FabricPort asks it through SaClient::query_broadcast_group): its answer counts as an SA answer.
void Simulator::on_monitor_reply(const Event& e) {
  const std::uint64_t before = monitor_.broadcast_answers(e.node);
  monitor_.handle(e, now_ns_);
  if (monitor_.broadcast_answers(e.node) != before) nodes_[e.node].sa_tables.on_sa_answer();
}

bool Simulator::send_table(std::uint32_t n, const core::TableQuery& query) {
  Node& node = nodes_[n];
  if (before_run_) {
    node.table_before_run = query.id;
    return true;
  }
  if (!node.sa_tables.usable()) {
    node.table_refused = true;
    return false;
  }
  const std::uint64_t table = node.next_table++;
  PendingTable pending;
  pending.id = query.id;
  pending.join = fabric::TableJoin(node.sa_tables);
  node.tables.put(table, pending);
  node.last_table = table;
  PendingTable& sent = *node.tables.find(table);
  table_attempt(n, table, sent, TablePart::switches);
  table_attempt(n, table, sent, TablePart::paths);
  return true;
}

TableKind Simulator::table_kind(TablePart part) { return part == TablePart::paths ? TableKind::paths : TableKind::switches; }

SaQuery Simulator::table_query(TablePart part) const {
  return part == TablePart::paths ? SaQuery::get_table(sc_.nodes) : SaQuery::switch_table();
}

void Simulator::table_attempt(std::uint32_t n, std::uint64_t table, PendingTable& pending, TablePart part) {
  MadAttempts& mad = part == TablePart::paths ? pending.path_mad : pending.switch_mad;
  mad.send(round_trips_.table_policy(n, table_kind(part), table_retry_), mad_rng_, sa_, queue_, now_ns_, n,
           table * 2 + static_cast<std::uint64_t>(part), EventKind::table_answer, EventKind::table_timeout,
           table_query(part));
}

// The table part a table_answer or table_timeout event is for, while that part is still running.
std::optional<Simulator::LiveTablePart> Simulator::live_table_part(const Event& e) {
  const std::uint64_t table = e.arg / 2;
  const auto part = static_cast<TablePart>(e.arg % 2);
  PendingTable* pending = nodes_[e.node].tables.find(table);
  if (pending == nullptr) return std::nullopt;
  if (!pending->join.running(part)) return std::nullopt;
  return LiveTablePart{table, part, pending, part == TablePart::paths ? &pending->path_mad : &pending->switch_mad};
}

void Simulator::on_table_answer(const Event& e) {
  const auto live = live_table_part(e);
  if (!live || !live->mad->is_answer(e.time_ns)) return;
  nodes_[e.node].sa_tables.on_sa_answer();
  monitor_.on_remote_answer(e.node, now_ns_);
  round_trips_.on_table_answer(e.node, table_kind(live->part), *live->mad, now_ns_, table_query(live->part).records);
  table_part_done(e.node, live->table, live->part, true);
}

void Simulator::on_table_timer(const Event& e) {
  const auto live = live_table_part(e);
  if (!live || !live->mad->is_timer(e.time_ns)) return;
  ++result_.table_timeouts;
  monitor_.on_remote_timeout(e.node, now_ns_, live->mad->sent_ns());  // MadRequester reports every timed-out remote attempt
  round_trips_.on_table_timeout(e.node, table_kind(live->part), *live->mad, now_ns_);
  if (live->mad->next_attempt(table_retry_)) return table_attempt(e.node, live->table, *live->pending, live->part);
  table_part_done(e.node, live->table, live->part, false);
}

void Simulator::table_part_done(std::uint32_t n, std::uint64_t table, TablePart part, bool answered) {
  Node& node = nodes_[n];
  PendingTable& pending = *node.tables.find(table);
  fabric::TableJoin& join = pending.join;
  // The model's SA answers a table whole and readable, or not at all. Switches cancelled by the
  // paths' failure have ended: their events find them so (live_table_part).
  if (part == TablePart::paths) {
    join.paths_ended(answered, !answered);
  } else {
    join.switches_ended(answered, answered);
  }
  if (!join.ended()) return;
  const fabric::TableJoin::Result joined = join.result(node.sa_tables);
  const core::QueryId id = pending.id;
  node.tables.erase(table);
  core::TableResult result;
  if (joined.ok) {
    result = subnet_table(n);
  } else {
    result.error = core::Error::timeout;
    result.reason = "the SA did not answer the PathRecord GetTable";
    if (joined.verdict.tables_off) node.sa_tables.turn_off(result.reason);
  }
  node.resolver->on_table_result(id, result);
  after_call(n);
}

void Simulator::answer_table_before_run(std::uint32_t n) {
  Node& node = nodes_[n];
  if (node.probe_before_run != 0) {  // its table gate's probe found the SA idle
    node.resolver->on_query_result(std::exchange(node.probe_before_run, 0), {core::Error::ok, path_between(n, n)});
    node.resolver->tick();
  }
  if (node.table_before_run == 0) return;
  ++tables_before_run_;
  // Its daemon measured that table as it measures every first attempt's answer: on an idle SA.
  const SaQuery query = table_query(TablePart::paths);
  round_trips_.on_table_sample(n, TableKind::paths, core::Duration(2 * sa_.latency_ns() + sa_.options().work_ns(query.records)), query.records, now_ns_);
  node.resolver->on_table_result(std::exchange(node.table_before_run, 0), subnet_table(n));
}

bool Simulator::send_size(std::uint32_t n, const core::SubnetSizeQuery& query) {
  Node& node = nodes_[n];
  if (before_run_ || !node.sa_tables.usable()) return false;
  node.size = PendingSize{query.id, ++node.sizes_sent, {}};
  size_attempt(n);
  return true;
}

void Simulator::size_attempt(std::uint32_t n) {
  PendingSize& size = *nodes_[n].size;
  size.mad.send(round_trips_.table_policy(n, TableKind::size, table_retry_), mad_rng_, sa_, queue_, now_ns_, n, size.seq,
                EventKind::size_answer, EventKind::size_timeout, SaQuery::switch_table());
}

void Simulator::on_size_answer(const Event& e) {
  Node& node = nodes_[e.node];
  if (!node.size || node.size->seq != e.arg || !node.size->mad.is_answer(e.time_ns)) return;
  node.sa_tables.on_sa_answer();
  monitor_.on_remote_answer(e.node, now_ns_);
  round_trips_.on_table_answer(e.node, TableKind::size, node.size->mad, now_ns_, SaQuery::switch_table().records);
  size_done(e.node, true);
}

void Simulator::on_size_timer(const Event& e) {
  Node& node = nodes_[e.node];
  if (!node.size || node.size->seq != e.arg || !node.size->mad.is_timer(e.time_ns)) return;
  ++result_.table_timeouts;
  monitor_.on_remote_timeout(e.node, now_ns_, node.size->mad.sent_ns());
  round_trips_.on_table_timeout(e.node, TableKind::size, node.size->mad, now_ns_);
  if (node.size->mad.next_attempt(table_retry_)) return size_attempt(e.node);
  size_done(e.node, false);
}

void Simulator::size_done(std::uint32_t n, bool answered) {
  Node& node = nodes_[n];
  const core::QueryId id = node.size->id;
  node.size.reset();
  core::SubnetSizeResult result{core::Error::ok, sc_.nodes, ""};
  if (!answered) result = {core::Error::timeout, 0, "the SA did not answer the SwitchInfoRecord GetTable"};
  node.resolver->on_subnet_size(id, result);
  after_call(n);
}

core::TableResult Simulator::subnet_table(std::uint32_t n) const {
  core::TableResult table;
  table.paths.reserve(sc_.nodes);
  for (std::uint32_t d = 0; d < sc_.nodes; ++d) table.paths.push_back(path_between(n, d));
  return table;
}

// boot: a daemon's own connects wait until its prefetch has settled (its table answered, given up,
// or refused), so that they show which paths it holds rather than race the table with GETs.
bool Simulator::prefetch_settled(std::uint32_t n) {
  Node& node = nodes_[n];
  if (node.prefetch_settled || sc_.policy.prefetch == core::Prefetch::off) return true;
  const core::Stats st = node.resolver->stats();
  node.prefetch_settled = node.table_refused || st.sa_tables_answered + st.sa_tables_failed > 0;
  return node.prefetch_settled;
}

}  // namespace ibat::sim

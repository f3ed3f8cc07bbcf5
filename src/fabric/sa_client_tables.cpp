// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaClient's GetTables: the PathRecord table of a port's subnet and, beside it, the switches'
// NodeRecords that say which of its records lead to a switch's port 0; the fall-back to GETs; and
// the switches' SwitchInfoRecords that tell the subnet's size before a first table.
#include "fabric/sa_client.h"

#include "fabric/table_join.h"

#include "mad/node_record.h"
#include "mad/path_record.h"
#include "mad/sa_table.h"
#include "mad/switch_info_record.h"

namespace ibat::fabric {
namespace {

const MadExpectation kPathTableAnswer{mad::mgmt_class::kSubnAdm, mad::method::kGetTableResp,
                                      mad::attr::kPathRecord, true};
const MadExpectation kNodeTableAnswer{mad::mgmt_class::kSubnAdm, mad::method::kGetTableResp,
                                      mad::attr::kNodeRecord, true};
const MadExpectation kSwitchInfoTableAnswer{mad::mgmt_class::kSubnAdm, mad::method::kGetTableResp,
                                            mad::attr::kSwitchInfoRecord, true};

}  // namespace

// One query_path_table: both GetTables in flight, joined (TableJoin) when both have ended.
struct SaClient::TableJob {
  TableJob(const core::Gid& source, core::Pkey partition, const SaTables& tables)
      : sgid(source), pkey(partition), join(tables) {}
  core::Gid sgid;
  core::Pkey pkey;
  TableJoin join;
  TableDone done;
  std::optional<PathTable> paths;
  std::optional<SwitchTable> switches;                 // the NodeRecord GetTable's answer, if it had one
  std::optional<MadRequester::Handle> switch_request;  // while the NodeRecord GetTable is in flight
  std::optional<MadRequester::Handle> path_request;    // while the PathRecord GetTable is in flight
  core::QueryId id = 0;                                // the caller's, for cancel (0: none)
};

bool SaClient::query_path_table(const core::Gid& sgid, core::Pkey pkey, TableDone done, core::QueryId id,
                                std::optional<std::uint16_t> qos_class) {
  if (!tables_usable()) {
    if (sa_tables_.refuse() && tables_off_observer_) tables_off_observer_(tables_off_reason());
    return false;
  }
  auto job = std::make_shared<TableJob>(sgid, pkey, sa_tables_);
  job->id = id;
  job->done = std::move(done);

  core::PathRecord want;
  want.sgid = sgid;
  want.pkey = pkey;
  want.reversible = true;
  want.numb_path = 1;
  std::uint64_t path_mask =
      mad::pr_mask::kSgid | mad::pr_mask::kPkey | mad::pr_mask::kReversible | mad::pr_mask::kNumbPath;
  if (qos_class) {  // a QoS class's table: what the SM's qos-class rules answer for it (as query_path)
    want.qos_class = *qos_class;
    path_mask |= mad::pr_mask::kQosClass;
  }
  mad::NodeRecord switches;
  switches.node_type = mad::node_type::kSwitch;
  table_counters_.sent += 2;
  job->switch_request = requester_.submit(
      sa_mad(mad::build_sa_get_table(0, mad::attr::kNodeRecord, mad::encode_node_record(switches),
                                     mad::nr_mask::kNodeType)),
      kNodeTableAnswer, table_policy_, [this, job](const MadAnswer* answer) { on_switch_table(job, answer); });
  job->path_request = requester_.submit(
      sa_mad(mad::build_sa_get_table(0, mad::attr::kPathRecord, mad::encode_path_record(want), path_mask)),
      kPathTableAnswer, table_policy_, [this, job](const MadAnswer* answer) { on_path_table(job, answer); });
  if (id != 0) tables_in_flight_[id] = job;
  return true;
}

bool SaClient::cancel_table(core::QueryId id) {
  auto it = tables_in_flight_.find(id);
  if (it == tables_in_flight_.end()) return false;
  TableJob& job = *it->second;
  if (job.path_request) requester_.cancel(*job.path_request);
  if (job.switch_request) requester_.cancel(*job.switch_request);
  job.path_request.reset();
  job.switch_request.reset();
  job.done = nullptr;
  tables_in_flight_.erase(it);
  return true;
}

void SaClient::on_path_table(const std::shared_ptr<TableJob>& job, const MadAnswer* answer) {
  job->path_request.reset();
  if (!answer) {
    job->paths = failed_table(core::Error::timeout, "the SA did not answer the PathRecord GetTable (" +
                                                        std::to_string(table_policy_.retries + 1) + " attempts)");
  } else {
    job->paths = path_table_from_answer(job->sgid, job->pkey, *answer, tables_.max_records);
    count_table_answer(*answer, job->paths->records);
  }
  if (job->join.paths_ended(job->paths->error == core::Error::ok, job->paths->error == core::Error::timeout)) {
    requester_.cancel(*job->switch_request);  // no use for the switches now
    job->switch_request.reset();
  }
  finish_table(*job);
}

void SaClient::on_switch_table(const std::shared_ptr<TableJob>& job, const MadAnswer* answer) {
  job->switch_request.reset();
  if (answer) {
    job->switches = switch_table_from_answer(*answer, tables_.max_records);
    count_table_answer(*answer, job->switches->records);
  }
  job->join.switches_ended(answer != nullptr, job->switches && job->switches->error.empty());
  finish_table(*job);
}

void SaClient::finish_table(TableJob& job) {
  if (!job.join.ended() || !job.done) return;
  if (job.id != 0) tables_in_flight_.erase(job.id);
  PathTable& table = *job.paths;
  const TableJoin::Result result = job.join.result(sa_tables_);
  if (result.leave_out_switches) leave_out_switches(table, job.switches->ports);
  if (result.verdict.tables_off && sa_tables_.turn_off(table.reason) && tables_off_observer_) {
    tables_off_observer_(table.reason);
  }
  if (result.verdict.sa_silent) {
    table.reason += job.switches ? ", only the NodeRecord GetTable beside it: busy"
                                 : ", nor anything else meanwhile: down or sweeping";
  }
  job.done(table);
}

bool SaClient::query_subnet_size(SizeDone done) {
  if (!tables_usable()) return false;
  ++table_counters_.sent;
  requester_.submit(sa_mad(mad::build_sa_get_table(0, mad::attr::kSwitchInfoRecord,
                                                   mad::encode_switch_info_record({}), 0)),
                    kSwitchInfoTableAnswer, table_policy_, [this, done = std::move(done)](const MadAnswer* answer) {
                      if (!answer) {
                        done({core::Error::timeout, 0,
                              "the SA did not answer the SwitchInfoRecord GetTable (" +
                                  std::to_string(table_policy_.retries + 1) + " attempts)"});
                        return;
                      }
                      const SwitchInfoTable table = subnet_size_from_answer(*answer, tables_.max_records);
                      count_table_answer(*answer, table.records);
                      done(table.size);
                    });
  return true;
}

void SaClient::count_table_answer(const MadAnswer& answer, std::size_t records) {
  sa_tables_.on_sa_answer();
  ++table_counters_.answered;
  table_counters_.records += records;
  table_counters_.bytes += answer.length;
}

void SaClient::on_sm_changed() { sa_tables_.on_sm_changed(); }

}  // namespace ibat::fabric

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// SaClient: PathRecord and broadcast MCMemberRecord GETs, answer checks and error mapping.
#include "fabric/sa_client.h"

#include <algorithm>

#include "mad/mcmember_record.h"
#include "mad/path_record.h"

namespace ibat::fabric {
namespace {

const MadExpectation kPathRecordAnswer{mad::mgmt_class::kSubnAdm, mad::method::kGetResp,
                                       mad::attr::kPathRecord, true};
const MadExpectation kMcMemberAnswer{mad::mgmt_class::kSubnAdm, mad::method::kGetResp,
                                     mad::attr::kMcMemberRecord, true};

}  // namespace

core::Error error_from_sa_status(const mad::MadHeader& header) {
  if (header.status == 0) return core::Error::ok;
  if (header.invalid_field_code() != 0) return core::Error::invalid;  // bad version/method/attr
  switch (header.sa_status()) {
    case mad::SaStatus::success:
      return header.busy() ? core::Error::timeout : core::Error::ok;
    case mad::SaStatus::no_records:
    case mad::SaStatus::invalid_gid:
      return core::Error::no_record;
    case mad::SaStatus::no_resources:
      return core::Error::timeout;  // transient: the SA could not answer now
    case mad::SaStatus::req_invalid:
    case mad::SaStatus::too_many_records:
    case mad::SaStatus::insufficient_components:
    case mad::SaStatus::req_denied:
      return core::Error::invalid;
  }
  return core::Error::invalid;
}

core::QueryResult path_result_from_answer(const core::PathQuery& query, const MadAnswer& answer) {
  core::QueryResult result;
  result.error = error_from_sa_status(answer.header);
  if (result.error != core::Error::ok) return result;
  auto sa = mad::decode_sa_mad(answer.bytes);
  if (!sa.ok()) return {core::Error::invalid, {}};
  auto record = mad::first_record(*sa);
  if (!record.ok()) return {core::Error::no_record, {}};  // GetResp with no record in it
  auto path = mad::decode_path_record(*record);
  if (!path.ok()) return {core::Error::invalid, {}};
  const bool answers_query = path->sgid == query.sgid && (!query.dgid || path->dgid == *query.dgid) &&
                             (!query.dlid || path->dlid == *query.dlid) &&
                             path->pkey.base() == query.pkey.base();
  if (!answers_query) return {core::Error::invalid, {}};
  result.path = *path;
  return result;
}

SaClient::SaClient(MadRequester& requester, const RetryPolicy& policy, const TableOptions& tables)
    : requester_(requester),
      policy_(policy),
      table_policy_(table_retry_policy(policy)),
      tables_(tables),
      sa_tables_(tables.rmpp) {}

void SaClient::set_sm(core::Lid sm_lid, std::uint8_t sm_sl) {
  sm_lid_ = sm_lid;
  sm_sl_ = sm_sl;
  requester_.retarget(MadRoute::sa, sm_lid);
}

OutgoingMad SaClient::sa_mad(const mad::MadBuffer& bytes) const {
  OutgoingMad out;
  out.route = MadRoute::sa;
  out.dlid = sm_lid_;
  out.remote_qpn = 1;
  out.sl = sm_sl_;
  out.bytes.assign(bytes.begin(), bytes.end());
  return out;
}

void SaClient::query_path(const core::PathQuery& query, PathDone done) {
  core::PathRecord want;
  want.sgid = query.sgid;
  want.pkey = query.pkey;
  want.numb_path = 1;
  std::uint64_t mask = mad::pr_mask::kSgid | mad::pr_mask::kPkey | mad::pr_mask::kNumbPath;
  if (query.dgid) {
    want.dgid = *query.dgid;
    mask |= mad::pr_mask::kDgid;
  } else if (query.dlid) {
    want.dlid = *query.dlid;
    mask |= mad::pr_mask::kDlid;
  }
  // What the SM's QoS policy matches on (OpenSM: service-id rules need both ServiceID bits).
  if (query.service_id) {
    want.service_id = *query.service_id;
    mask |= mad::pr_mask::kServiceId;
  }
  if (query.qos_class) {
    want.qos_class = *query.qos_class;
    mask |= mad::pr_mask::kQosClass;
  }
  const core::QueryId id = query.id;
  const auto handle = requester_.submit(
      sa_mad(mad::build_path_record_get(0, want, mask)), kPathRecordAnswer, policy_,
      [this, query, done = std::move(done)](const MadAnswer* answer) {
        paths_in_flight_.erase(query.id);
        if (answer) sa_tables_.on_sa_answer();
        done(answer ? path_result_from_answer(query, *answer) : core::QueryResult{core::Error::timeout, {}});
      });
  paths_in_flight_[id] = handle;
}

bool SaClient::cancel(core::QueryId id) {
  if (cancel_table(id)) return true;
  auto it = paths_in_flight_.find(id);
  if (it == paths_in_flight_.end()) return false;
  requester_.cancel(it->second);
  paths_in_flight_.erase(it);
  return true;
}

void SaClient::query_broadcast_group(const core::Gid& port_gid, core::Pkey pkey, BroadcastDone done) {
  mad::McMemberRecord want;
  want.mgid = mad::ipoib_broadcast_mgid(pkey);
  want.port_gid = port_gid;
  const std::uint64_t mask = mad::mcm_mask::kMgid;
  requester_.submit(sa_mad(mad::build_mcmember_get(0, want, mask)), kMcMemberAnswer, policy_,
                    [this, pkey, done = std::move(done)](const MadAnswer* answer) {
                      core::BroadcastParams params;
                      params.pkey = pkey;
                      if (!answer) return done(core::Error::timeout, params);
                      sa_tables_.on_sa_answer();
                      const core::Error status = error_from_sa_status(answer->header);
                      if (status != core::Error::ok) return done(status, params);
                      auto sa = mad::decode_sa_mad(answer->bytes);
                      if (!sa.ok()) return done(core::Error::invalid, params);
                      auto record = mad::first_record(*sa);
                      if (!record.ok()) return done(core::Error::no_record, params);
                      auto group = mad::decode_mcmember_record(*record);
                      if (!group.ok() || group->mgid != mad::ipoib_broadcast_mgid(pkey)) {
                        return done(core::Error::invalid, params);
                      }
                      params.mtu = group->mtu;
                      params.rate = group->rate;
                      params.sl = group->sl;
                      params.pkt_life = group->pkt_life;
                      return done(core::Error::ok, params);
                    });
}

}  // namespace ibat::fabric

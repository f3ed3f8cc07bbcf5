// SaClient: SA queries on the owner's loop. GET PathRecord (DGID or DLID target, always with SGID,
// P_Key and NumbPath=1, since OpenSM picks an arbitrary source otherwise) and GET MCMemberRecord of
// the IPoIB broadcast group. Each answer is checked (SA status, record length, record fields vs.
// the question) and mapped to core::Error. TIDs, timers and retries live in MadRequester.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>

#include "core/query_sink.h"
#include "core/resolve_types.h"
#include "fabric/mad_requester.h"

namespace ibat::fabric {

class SaClient {
 public:
  using PathDone = std::function<void(const core::QueryResult&)>;
  using BroadcastDone = std::function<void(core::Error, const core::BroadcastParams&)>;

  SaClient(MadRequester& requester, const RetryPolicy& policy);

  // Where the SA lives (the SM LID and SL); requests in flight are redirected too.
  void set_sm(core::Lid sm_lid, std::uint8_t sm_sl);
  core::Lid sm_lid() const { return sm_lid_; }

  // Starts one PathRecord GET; `done` runs exactly once unless cancel(query.id) comes first.
  void query_path(const core::PathQuery& query, PathDone done);
  bool cancel(core::QueryId id);
  std::size_t in_flight() const { return paths_in_flight_.size(); }

  // GET MCMemberRecord of ff12:401b:<pkey>::ffff:ffff.
  void query_broadcast_group(const core::Gid& port_gid, core::Pkey pkey, BroadcastDone done);

 private:
  OutgoingMad sa_mad(const mad::MadBuffer& bytes) const;

  MadRequester& requester_;
  RetryPolicy policy_;
  core::Lid sm_lid_;
  std::uint8_t sm_sl_ = 0;
  std::unordered_map<core::QueryId, MadRequester::Handle> paths_in_flight_;
};

// The core error for an SA answer's MAD status word (0 -> ok).
core::Error error_from_sa_status(const mad::MadHeader& header);

// Checks a PathRecord GetResp against its query; ok with the path, or the error to report.
core::QueryResult path_result_from_answer(const core::PathQuery& query, const MadAnswer& answer);

}  // namespace ibat::fabric

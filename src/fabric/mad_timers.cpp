// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadTimers: the composed MAD timer policy and Karn's sample rule (see mad_timers.h).
#include "fabric/mad_timers.h"

#include <algorithm>

namespace ibat::fabric {

template <typename T>
const T* MadTimers::find(const std::vector<std::pair<std::uint32_t, T>>& all, std::uint32_t key) {
  const auto it = std::find_if(all.begin(), all.end(), [key](const auto& entry) { return entry.first == key; });
  return it == all.end() ? nullptr : &it->second;
}

template <typename T>
T& MadTimers::at(std::vector<std::pair<std::uint32_t, T>>& all, std::uint32_t key) {
  const auto it = std::find_if(all.begin(), all.end(), [key](const auto& entry) { return entry.first == key; });
  if (it != all.end()) return it->second;
  if (all.empty()) all.reserve(kFew);
  return all.emplace_back(key, T{}).second;
}

RetryPolicy MadTimers::policy_now(const TimedRequest& request, const RetryPolicy& policy) const {
  if (!request.remote) return policy;
  const RoundTripEstimate* rtt = round_trip(request.mgmt_class, request.dlid);
  const RetryPolicy raised = rtt == nullptr ? policy : rtt->applied_to(policy);
  if (!request.table) return raised;
  const TableTimer* table = table_timer(request.attr_id, request.dlid);
  return table == nullptr ? raised : table->applied_to(raised, rtt == nullptr ? core::Duration::zero() : rtt->srtt());
}

void MadTimers::on_answer(const TimedRequest& request, std::uint32_t attempt, core::Duration rtt,
                          std::size_t records, core::TimePoint now) {
  if (!request.remote || attempt != 0) return;
  if (!request.table) return at(round_trips_, key(request.mgmt_class, request.dlid)).on_sample(rtt, now);
  const RoundTripEstimate* queue = round_trip(request.mgmt_class, request.dlid);
  at(table_timers_, key(request.attr_id, request.dlid))
      .on_sample(rtt, records, queue == nullptr ? core::Duration::zero() : queue->srtt(), now);
}

void MadTimers::on_timeout(const TimedRequest& request, core::Duration fired, core::TimePoint now) {
  if (!request.remote) return;
  if (request.table) return at(table_timers_, key(request.attr_id, request.dlid)).on_timeout(fired, now);
  at(round_trips_, key(request.mgmt_class, request.dlid)).on_timeout(fired, now);
}

const RoundTripEstimate* MadTimers::round_trip(std::uint8_t mgmt_class, core::Lid dlid) const {
  return find(round_trips_, key(mgmt_class, dlid));
}

const TableTimer* MadTimers::table_timer(std::uint16_t attr_id, core::Lid dlid) const {
  return find(table_timers_, key(attr_id, dlid));
}

}  // namespace ibat::fabric

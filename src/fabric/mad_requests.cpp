// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadRequests: TIDs, the outstanding requests, response matching and validation (see mad_requests.h).
#include "fabric/mad_requests.h"

#include <algorithm>

#include "mad/constants.h"
#include "mad/sa_table.h"
#include "wire/byte_order.h"

namespace ibat::fabric {

MadRequests::MadRequests(std::uint64_t seed) : rng_(seed), next_tid_(static_cast<std::uint32_t>(rng_())) {}

MadRequests::Attempt MadRequests::submit(OutgoingMad request, const MadExpectation& expect, const RetryPolicy& policy,
                                         core::TimePoint now) {
  Handle tid = 0;
  do {
    tid = ++next_tid_;
  } while (tid == 0 || outstanding_.contains(tid));
  if (request.bytes.size() < mad::kMadHeaderSize) request.bytes.resize(mad::kMadSize, 0);
  wire::put64(request.bytes, 8, tid);  // upper 32 bits: the kernel / umad2sim owns them
  Outstanding& entry =
      outstanding_.try_emplace(tid, Outstanding{.request = std::move(request), .expect = expect, .policy = policy})
          .first->second;
  return send_attempt(tid, entry, now);
}

void MadRequests::retarget(MadRoute route, core::Lid dlid) {
  for (auto& [tid, entry] : outstanding_) {
    if (entry.request.route == route) entry.request.dlid = dlid;
  }
}

TimedRequest MadRequests::timed(const Outstanding& entry) {
  return {.remote = entry.request.route != MadRoute::smi_directed,
          .mgmt_class = entry.expect.mgmt_class,
          .attr_id = entry.expect.attr_id,
          .table = entry.expect.method == mad::method::kGetTableResp,
          .dlid = entry.request.dlid};
}

MadRequests::Attempt MadRequests::send_attempt(Handle handle, Outstanding& entry, core::TimePoint now) {
  const RetryPolicy policy = timers_.policy_now(timed(entry), entry.policy);
  const core::TimePoint fires = entry.attempts.send(now, policy, rng_);
  entry.request.timeout_ms = entry.attempts.kernel_wait_ms(policy);
  ++counters_.sent;
  ++(entry.request.route == MadRoute::smi_directed ? counters_.local_sent : counters_.remote_sent);
  return {.handle = handle, .attempt = entry.attempts.attempt(), .mad = &entry.request, .fires = fires};
}

MadRequests::Timeout MadRequests::on_timer(Handle handle, std::uint32_t attempt, core::TimePoint now) {
  auto it = outstanding_.find(handle);
  if (it == outstanding_.end() || it->second.attempts.attempt() != attempt) return {};
  ++counters_.timeouts;
  Outstanding& entry = it->second;
  Timeout out{.route = entry.request.route, .dlid = entry.request.dlid, .attempt_sent = entry.attempts.sent()};
  timers_.on_timeout(timed(entry), now - out.attempt_sent, now);
  if (entry.attempts.timed_out(entry.policy)) {
    ++counters_.retries;
    out.kind = Timeout::Kind::resend;
    out.resend = send_attempt(handle, entry, now);
  } else {
    out.kind = Timeout::Kind::failed;
    outstanding_.erase(it);
  }
  return out;
}

MadRequests::Received MadRequests::on_receive(const ReceivedMad& mad, core::TimePoint now) {
  using Kind = Received::Kind;
  ++counters_.received;
  auto header = mad::decode_mad_header(mad.bytes);
  if (!header.ok()) {
    ++counters_.invalid_responses;
    return {.kind = Kind::undecodable};
  }
  // A non-zero umad status is the transport telling us a send went unanswered (or could not be
  // routed); the attempt timer already covers that case.
  if (mad.status != 0) return {.kind = Kind::send_status};
  if (!header->is_response()) return {.kind = Kind::not_a_response};
  const Handle handle = mad::tid_low32(header->tid);
  auto it = outstanding_.find(handle);
  if (it == outstanding_.end()) {
    ++counters_.late_or_duplicate;
    return {.kind = Kind::late_or_duplicate};
  }
  Outstanding& entry = it->second;
  const bool valid = header->mgmt_class == entry.expect.mgmt_class && header->method == entry.expect.method &&
                     header->attr_id == entry.expect.attr_id &&
                     (!entry.expect.check_source_lid || mad.slid == entry.request.dlid);
  if (!valid) {
    ++counters_.invalid_responses;  // keep waiting: the real answer may still come
    return {.kind = Kind::invalid, .handle = handle};
  }
  const TimedRequest request = timed(entry);
  const std::size_t records =
      request.table ? mad::sa_table_records(std::span<const std::uint8_t>(mad.bytes).first(std::min(mad.length, mad.bytes.size()))) : 0;
  const AttemptAnswer answered = entry.attempts.answered(now);
  timers_.on_answer(request, answered.attempt, answered.round_trip, records, now);
  outstanding_.erase(it);
  return {.kind = Kind::answered, .handle = handle, .answer = MadAnswer{*header, mad.bytes, mad.length}};
}

}  // namespace ibat::fabric

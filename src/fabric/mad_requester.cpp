// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadRequester: TIDs, timers, retries and response validation (see mad_requester.h).
#include "fabric/mad_requester.h"

#include <algorithm>

#include "mad/constants.h"
#include "mad/sa_table.h"
#include "wire/byte_order.h"

namespace ibat::fabric {

struct MadRequester::Outstanding {
  Outstanding(asio::io_context& loop) : timer(loop) {}
  OutgoingMad request;
  MadExpectation expect;
  RetryPolicy policy;
  AnswerHandler on_answer;
  MadAttempts attempts;  // which attempt runs, when it went, its timer
  asio::steady_timer timer;
};

MadRequester::MadRequester(asio::io_context& loop, MadSender& sender, std::uint64_t seed)
    : loop_(loop), sender_(sender), rng_(seed), next_tid_(static_cast<std::uint32_t>(rng_())) {}

MadRequester::~MadRequester() = default;

MadRequester::Handle MadRequester::submit(OutgoingMad request, const MadExpectation& expect,
                                          const RetryPolicy& policy, AnswerHandler on_answer) {
  Handle tid = 0;
  do {
    tid = ++next_tid_;
  } while (tid == 0 || outstanding_.contains(tid));
  if (request.bytes.size() < mad::kMadHeaderSize) request.bytes.resize(mad::kMadSize, 0);
  wire::put64(request.bytes, 8, tid);  // upper 32 bits: the kernel / umad2sim owns them
  auto entry = std::make_unique<Outstanding>(loop_);
  entry->request = std::move(request);
  entry->expect = expect;
  entry->policy = policy;
  entry->on_answer = std::move(on_answer);
  Outstanding& ref = *entry;
  outstanding_.emplace(tid, std::move(entry));
  send_attempt(ref);
  return tid;
}

bool MadRequester::cancel(Handle handle) { return outstanding_.erase(handle) > 0; }

void MadRequester::retarget(MadRoute route, core::Lid dlid) {
  for (auto& [tid, entry] : outstanding_) {
    if (entry->request.route == route) entry->request.dlid = dlid;
  }
}

TimedRequest MadRequester::timed(const Outstanding& entry) {
  return {.remote = entry.request.route != MadRoute::smi_directed,
          .mgmt_class = entry.expect.mgmt_class,
          .attr_id = entry.expect.attr_id,
          .table = entry.expect.method == mad::method::kGetTableResp,
          .dlid = entry.request.dlid};
}

void MadRequester::send_attempt(Outstanding& entry) {
  const RetryPolicy policy = timers_.policy_now(timed(entry), entry.policy);
  const core::TimePoint fires = entry.attempts.send(core::SteadyClock{}.now(), policy, rng_);
  entry.request.timeout_ms = entry.attempts.kernel_wait_ms(policy);
  ++counters_.sent;
  ++(entry.request.route == MadRoute::smi_directed ? counters_.local_sent : counters_.remote_sent);
  if (!sender_.send(entry.request)) ++counters_.send_failures;  // the timer treats it as lost
  const Handle tid = mad::tid_low32(wire::get64(entry.request.bytes, 8));
  const std::uint32_t attempt = entry.attempts.attempt();
  entry.timer.expires_at(fires);
  entry.timer.async_wait([this, tid, attempt](const std::error_code& ec) {
    if (!ec) on_timer(tid, attempt);
  });
}

void MadRequester::on_timer(Handle handle, std::uint32_t attempt) {
  auto it = outstanding_.find(handle);
  if (it == outstanding_.end() || it->second->attempts.attempt() != attempt) return;
  ++counters_.timeouts;
  Outstanding& entry = *it->second;
  const MadRoute route = entry.request.route;
  const core::Lid dlid = entry.request.dlid;
  const core::TimePoint attempt_sent = entry.attempts.sent();
  timers_.on_timeout(timed(entry), core::SteadyClock{}.now() - attempt_sent);
  if (entry.attempts.timed_out(entry.policy)) {
    ++counters_.retries;
    send_attempt(entry);
  } else {
    AnswerHandler on_answer = std::move(entry.on_answer);
    outstanding_.erase(it);
    on_answer(nullptr);
  }
  if (route != MadRoute::smi_directed && remote_timeout_observer_) remote_timeout_observer_(route, dlid, attempt_sent);
}

bool MadRequester::on_receive(const ReceivedMad& mad) {
  ++counters_.received;
  auto header = mad::decode_mad_header(mad.bytes);
  if (!header.ok()) {
    ++counters_.invalid_responses;
    return true;
  }
  // A non-zero umad status is the transport telling us a send went unanswered (or could not be
  // routed); the attempt timer already covers that case.
  if (mad.status != 0) return true;
  if (!header->is_response()) return false;
  const core::TimePoint now = core::SteadyClock{}.now();
  if (answer_observer_) answer_observer_(mad.slid, now);
  auto it = outstanding_.find(mad::tid_low32(header->tid));
  if (it == outstanding_.end()) {
    ++counters_.late_or_duplicate;
    return true;
  }
  Outstanding& entry = *it->second;
  const bool valid = header->mgmt_class == entry.expect.mgmt_class && header->method == entry.expect.method &&
                     header->attr_id == entry.expect.attr_id &&
                     (!entry.expect.check_source_lid || mad.slid == entry.request.dlid);
  if (!valid) {
    ++counters_.invalid_responses;  // keep waiting: the real answer may still come
    return true;
  }
  const TimedRequest request = timed(entry);
  const std::size_t records =
      request.table ? mad::sa_table_records(std::span<const std::uint8_t>(mad.bytes).first(std::min(mad.length, mad.bytes.size()))) : 0;
  const AttemptAnswer answered = entry.attempts.answered(now);
  timers_.on_answer(request, answered.attempt, answered.round_trip, records);
  AnswerHandler on_answer = std::move(it->second->on_answer);
  outstanding_.erase(it);
  const MadAnswer answer{*header, mad.bytes, mad.length};
  on_answer(&answer);
  return true;
}

}  // namespace ibat::fabric

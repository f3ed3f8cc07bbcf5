// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// MadRequester: MadRequests' decisions carried out with the transport, asio timers and the clock
// (see mad_requester.h).
#include "fabric/mad_requester.h"

#include <utility>

namespace ibat::fabric {

MadRequester::MadRequester(asio::io_context& loop, MadSender& sender, std::uint64_t seed)
    : loop_(loop), sender_(sender), requests_(seed) {}

MadRequester::~MadRequester() = default;

MadRequester::Handle MadRequester::submit(OutgoingMad request, const MadExpectation& expect,
                                          const RetryPolicy& policy, AnswerHandler on_answer) {
  const MadRequests::Attempt attempt =
      requests_.submit(std::move(request), expect, policy, core::SteadyClock{}.now());
  Pending& pending = pending_.try_emplace(attempt.handle, loop_).first->second;
  pending.on_answer = std::move(on_answer);
  send(pending, attempt);
  return attempt.handle;
}

bool MadRequester::cancel(Handle handle) {
  pending_.erase(handle);
  return requests_.cancel(handle);
}

void MadRequester::retarget(MadRoute route, core::Lid dlid) { requests_.retarget(route, dlid); }

void MadRequester::send(Pending& pending, const MadRequests::Attempt& attempt) {
  if (!sender_.send(*attempt.mad)) requests_.send_failed();  // the timer treats it as lost
  pending.timer.expires_at(attempt.fires);
  pending.timer.async_wait([this, handle = attempt.handle, n = attempt.attempt](const std::error_code& ec) {
    if (!ec) on_timer(handle, n);
  });
}

void MadRequester::complete(Handle handle, const MadAnswer* answer) {
  auto it = pending_.find(handle);
  AnswerHandler on_answer = std::move(it->second.on_answer);
  pending_.erase(it);
  on_answer(answer);
}

void MadRequester::on_timer(Handle handle, std::uint32_t attempt) {
  const MadRequests::Timeout timeout = requests_.on_timer(handle, attempt, core::SteadyClock{}.now());
  switch (timeout.kind) {
    case MadRequests::Timeout::Kind::stale:
      return;
    case MadRequests::Timeout::Kind::resend:
      send(pending_.at(handle), timeout.resend);
      break;
    case MadRequests::Timeout::Kind::failed:
      complete(handle, nullptr);
      break;
  }
  if (timeout.remote() && remote_timeout_observer_) {
    remote_timeout_observer_(timeout.route, timeout.dlid, timeout.attempt_sent);
  }
}

bool MadRequester::on_receive(const ReceivedMad& mad) {
  const core::TimePoint now = core::SteadyClock{}.now();
  const MadRequests::Received received = requests_.on_receive(mad, now);
  if (received.kind == MadRequests::Received::Kind::not_a_response) return false;
  if (received.heard() && answer_observer_) answer_observer_(mad.slid, now);
  if (received.kind == MadRequests::Received::Kind::answered) complete(received.handle, &received.answer);
  return true;
}

}  // namespace ibat::fabric

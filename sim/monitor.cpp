// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Port monitor MADs of every simulated daemon: see monitor.h.
#include "sim/monitor.h"

#include <algorithm>
#include <optional>

namespace ibat::sim {
namespace {

core::TimePoint time_point(std::int64_t ns) { return core::TimePoint{core::Duration{ns}}; }
std::int64_t ns_of(core::TimePoint t) { return t.time_since_epoch().count(); }

}  // namespace

// Daemons already running at time 0: each settled its last check at a random time within one
// routine interval before (its logic heard the SM answer MASTER and the SA confirm both trap
// subscriptions), so the next routine checks are spread over the first interval. The others wait
// for start_daemon(), unsubscribed.
Monitor::Monitor(const MonitorOptions& options, std::uint32_t nodes, const fabric::RetryPolicy& sa_retry,
                 RoundTrips& round_trips, std::uint64_t seed, EventQueue& queue, SaModel& sa)
    : options_(options),
      settings_(fabric::MonitorSettings::of(core::Duration{options.poll_ns}, core::Duration{options.sm_check_ns},
                                            sa_retry.timeout, core::Duration{options.refresh_spread_ns},
                                            options.hca_events)),
      sa_retry_(sa_retry),
      round_trips_(round_trips),
      queue_(queue),
      sa_(sa),
      rng_(seed ^ 0x6d6f6e69746f72ULL) {  // its own stream: the workload's draws do not move
  if (!options.enabled) return;
  nodes_.reserve(nodes);
  std::uniform_int_distribution<std::int64_t> phase(0, options_.poll_ns - 1);
  const std::int64_t routine_ns = settings_.routine.count();
  std::uniform_int_distribution<std::int64_t> settled_ago(0, std::max<std::int64_t>(routine_ns - 1, 0));
  for (std::uint32_t n = 0; n < nodes; ++n) {
    NodeState& s = nodes_.emplace_back(settings_, rng_());
    if (!options_.running_at_start) {
      s.phase_ns = kNotStarted;
      continue;
    }
    s.phase_ns = phase(rng_);
    const core::TimePoint last = time_point(-settled_ago(rng_));
    s.logic.start(last);
    s.logic.begin_check(last, true);         // the full check of its start: SMInfo,
    s.logic.sm_info_answered(last, true);    // MASTER (no subscription to check yet)
    s.logic.subscription_confirmed();        // trap 64
    s.logic.subscription_confirmed();        // trap 65
  }
}

void Monitor::start() {
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
    if (nodes_[n].phase_ns != kNotStarted) schedule(n, 0);
  }
}

void Monitor::start_daemon(std::uint32_t n, std::int64_t now_ns) {
  if (nodes_.empty()) return;
  NodeState& s = nodes_[n];
  s.phase_ns = now_ns;
  s.logic.start(time_point(now_ns));
  s.logic.sm_found(time_point(now_ns));  // its first poll finds the SM: the refresh, at once
  if (s.logic.take_refresh(time_point(now_ns))) refresh(n, now_ns);
  schedule(n, now_ns);  // the full check, this poll
}

void Monitor::refresh(std::uint32_t n, std::int64_t now_ns) {
  send(n, Purpose::subscribe, now_ns);  // trap 64
  send(n, Purpose::subscribe, now_ns);  // trap 65
  send(n, Purpose::mcmember, now_ns);   // the broadcast group
}

std::int64_t Monitor::next_poll(const NodeState& s, std::int64_t t) const {
  if (t <= s.phase_ns) return s.phase_ns;
  const std::int64_t k = (t - s.phase_ns + options_.poll_ns - 1) / options_.poll_ns;
  return s.phase_ns + k * options_.poll_ns;
}

// Keeps one monitor_poll scheduled at the first poll where the schedule has a check due.
void Monitor::schedule(std::uint32_t n, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  if (s.logic.check() != fabric::SmCheck::none) return;  // its end schedules
  const core::TimePoint due = s.logic.next_check_due();
  if (due == core::TimePoint::max()) return;
  const std::int64_t at = next_poll(s, std::max(now_ns, ns_of(due)));
  if (s.poll_at >= 0 && s.poll_at <= at) return;
  s.poll_at = at;
  queue_.push(at, EventKind::monitor_poll, n, 0);
}

void Monitor::handle(const Event& e, std::int64_t now_ns) {
  const std::uint32_t n = e.node;
  NodeState& s = nodes_[n];
  if (e.kind == EventKind::monitor_poll) {
    if (s.poll_at != e.time_ns) return;  // superseded by an earlier poll
    s.poll_at = -1;
    return poll(n, now_ns);
  }
  if (e.kind == EventKind::monitor_refresh) {
    if (s.logic.take_refresh(time_point(now_ns))) refresh(n, now_ns);  // else a later SM change's is pending
    return;
  }
  Mad* mad = s.mads.find(e.arg);
  if (mad == nullptr) return;
  bool answered = true;
  if (e.kind == EventKind::monitor_lost) {
    if (!mad->attempts.is_timer(e.time_ns)) return;
    ++totals_.timeouts;
    round_trips_.on_timeout(n, manager_of(mad->purpose), mad->attempts, now_ns);
    on_remote_timeout(n, now_ns, mad->attempts.sent_ns());  // MadRequester reports every timed-out remote attempt
    if (mad->attempts.next_attempt(policy_of(mad->purpose))) return attempt(n, e.arg, *mad, now_ns);
    answered = false;
  } else if (!mad->attempts.is_answer(e.time_ns)) {
    return;
  } else {
    on_remote_answer(n, now_ns);
    round_trips_.on_answer(n, manager_of(mad->purpose), mad->attempts, now_ns);
  }
  const Purpose purpose = mad->purpose;
  s.mads.erase(e.arg);
  done(n, purpose, answered, now_ns);
}

void Monitor::poll(std::uint32_t n, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  if (s.logic.check() != fabric::SmCheck::none) return;
  const fabric::CheckMad mad = s.logic.begin_check(time_point(now_ns), true);  // the model's port is active, its SM known
  if (mad == fabric::CheckMad::none) return schedule(n, now_ns);
  ++(s.logic.check() == fabric::SmCheck::full ? totals_.full_checks : totals_.routine_checks);
  ask(n, mad, now_ns);
}

const fabric::RetryPolicy& Monitor::policy_of(Purpose purpose) const {
  return purpose == Purpose::sm_info || purpose == Purpose::sub_check ? settings_.check_policy : sa_retry_;
}

void Monitor::send(std::uint32_t n, Purpose purpose, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  const std::uint64_t id = s.next_mad++;
  s.mads.put(id, Mad{purpose, {}});
  attempt(n, id, *s.mads.find(id), now_ns);
}

void Monitor::attempt(std::uint32_t n, std::uint64_t id, Mad& mad, std::int64_t now_ns) {
  ++totals_.remote_mads;
  mad.attempts.send(round_trips_.applied_to(n, manager_of(mad.purpose), policy_of(mad.purpose)), rng_, sa_, queue_, now_ns, n, id, EventKind::monitor_reply,
                    EventKind::monitor_lost);
}

// What the check MADs and the refresh's MADs tell the logic. The model's SM is MASTER whenever it
// answers, and its SA holds the subscriptions whenever it answers the check.
void Monitor::done(std::uint32_t n, Purpose purpose, bool answered, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  const core::TimePoint now = time_point(now_ns);
  const std::optional<bool> answer = answered ? std::optional<bool>(true) : std::nullopt;
  switch (purpose) {
    case Purpose::subscribe:
      if (answered) s.logic.subscription_confirmed();
      return;
    case Purpose::mcmember:
      if (answered) ++s.broadcast_answers;
      return;
    case Purpose::sm_info: return ask(n, s.logic.sm_info_answered(now, answer), now_ns);
    case Purpose::sub_check: return ask(n, s.logic.subscription_answered(now, answer), now_ns);
  }
}

void Monitor::ask(std::uint32_t n, fabric::CheckMad mad, std::int64_t now_ns) {
  switch (mad) {
    case fabric::CheckMad::sm_info: return send(n, Purpose::sm_info, now_ns);
    case fabric::CheckMad::subscription: return send(n, Purpose::sub_check, now_ns);
    case fabric::CheckMad::none: return schedule(n, now_ns);
  }
}

void Monitor::on_remote_timeout(std::uint32_t n, std::int64_t now_ns, std::int64_t sent_ns) {
  if (nodes_.empty() || !nodes_[n].logic.remote_timeout(time_point(sent_ns))) return;  // a queue, not a lost SA
  schedule(n, now_ns);
}

void Monitor::on_remote_answer(std::uint32_t n, std::int64_t now_ns) {
  if (!nodes_.empty()) nodes_[n].logic.heard(time_point(now_ns));
}

void Monitor::on_sm_changed(std::uint32_t n, std::int64_t now_ns) {
  if (nodes_.empty() || nodes_[n].phase_ns == kNotStarted) return;  // it will find the new SM at its start
  NodeState& s = nodes_[n];
  const core::TimePoint at = s.logic.sm_changed(time_point(now_ns), rng_);
  queue_.push(ns_of(at), EventKind::monitor_refresh, n, 0);
  schedule(n, now_ns);
}

MonitorTotals Monitor::totals(std::int64_t end_ns) const {
  MonitorTotals t = totals_;
  for (const NodeState& s : nodes_) {
    if (end_ns >= s.phase_ns) t.local_mads += static_cast<std::uint64_t>((end_ns - s.phase_ns) / options_.poll_ns) + 1;
  }
  return t;
}

}  // namespace ibat::sim

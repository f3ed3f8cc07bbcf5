// Port monitor MADs of every simulated daemon: see monitor.h.
#include "sim/monitor.h"

#include <algorithm>

namespace ibat::sim {

Monitor::Monitor(const MonitorOptions& options, std::uint32_t nodes, std::int64_t sa_mad_timeout_ns,
                 std::uint32_t sa_mad_retries, std::uint64_t seed, EventQueue& queue, SaModel& sa)
    : options_(options),
      sa_timeout_ns_(sa_mad_timeout_ns),
      sa_retries_(sa_mad_retries),
      queue_(queue),
      sa_(sa),
      rng_(seed ^ 0x6d6f6e69746f72ULL),  // its own stream: the workload's draws do not move
      nodes_(options.enabled ? nodes : 0) {
  std::uniform_int_distribution<std::int64_t> phase(0, options_.poll_ns - 1);
  std::uniform_real_distribution<double> into(0.0, 1.0);
  for (NodeState& s : nodes_) {
    s.phase_ns = phase(rng_);
    s.next_routine_ns = static_cast<std::int64_t>(into(rng_) * static_cast<double>(routine_interval()));
  }
}

std::int64_t Monitor::routine_interval() {
  std::uniform_real_distribution<double> stretch(1.0, 1.5);
  return static_cast<std::int64_t>(static_cast<double>(options_.sm_check_ns) * stretch(rng_));
}

// SmCheckSchedule's back-off: poll x 2^false_alarms, capped at the routine interval.
std::int64_t Monitor::timeout_backoff_ns(const NodeState& s) const {
  const std::int64_t cap = options_.sm_check_ns > 0 ? options_.sm_check_ns : 64 * options_.poll_ns;
  std::int64_t backoff = options_.poll_ns;
  for (std::uint8_t i = 0; i < s.false_alarms && backoff < cap; ++i) backoff *= 2;
  return std::min(backoff, cap);
}

std::int64_t Monitor::full_check_due_ns(const NodeState& s) const {
  std::int64_t due = INT64_MAX;
  if (s.suspect) due = s.last_check_ns + options_.poll_ns / 2;
  if (s.timeout_suspect) due = std::min(due, s.last_check_ns + timeout_backoff_ns(s) - options_.poll_ns / 2);
  return due;
}

void Monitor::start() {
  for (std::uint32_t n = 0; n < nodes_.size(); ++n) schedule(n, 0);
}

std::int64_t Monitor::next_poll(const NodeState& s, std::int64_t t) const {
  if (t <= s.phase_ns) return s.phase_ns;
  const std::int64_t k = (t - s.phase_ns + options_.poll_ns - 1) / options_.poll_ns;
  return s.phase_ns + k * options_.poll_ns;
}

// Keeps one monitor_poll scheduled at the first poll where a check is due (SmCheckSchedule::due).
void Monitor::schedule(std::uint32_t n, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  if (s.check != Check::none) return;  // finish() schedules
  const std::int64_t due = std::max(now_ns, std::min(full_check_due_ns(s), s.next_routine_ns));
  const std::int64_t at = next_poll(s, due);
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
  Mad* mad = s.mads.find(e.arg);
  if (mad == nullptr) return;
  if (e.kind == EventKind::monitor_lost) {
    on_remote_timeout(n, now_ns);  // MadRequester reports every timed-out remote attempt
    if (mad->tries_left > 0) {
      --mad->tries_left;
      return attempt(n, e.arg, now_ns);
    }
  }
  const Purpose purpose = mad->purpose;
  s.mads.erase(e.arg);
  done(n, purpose, e.kind == EventKind::monitor_reply, now_ns);
}

void Monitor::poll(std::uint32_t n, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  if (s.check != Check::none) return;
  if (now_ns >= full_check_due_ns(s)) {
    s.check = Check::full;
    ++totals_.full_checks;
  } else if (now_ns >= s.next_routine_ns) {
    s.check = Check::routine;
    ++totals_.routine_checks;
  } else {
    return schedule(n, now_ns);
  }
  s.master_seen = false;
  s.kept = false;
  const bool ask_sa = s.check == Check::routine && s.subscriptions == 2;
  send(n, ask_sa ? Purpose::sub_check : Purpose::sm_info, now_ns);
}

void Monitor::send(std::uint32_t n, Purpose purpose, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  const bool check = purpose == Purpose::sm_info || purpose == Purpose::sub_check;
  const std::uint64_t id = s.next_mad++;
  s.mads.put(id, Mad{purpose, check ? options_.check_retries : sa_retries_});
  attempt(n, id, now_ns);
}

void Monitor::attempt(std::uint32_t n, std::uint64_t id, std::int64_t now_ns) {
  const Mad* mad = nodes_[n].mads.find(id);
  const bool check = mad->purpose == Purpose::sm_info || mad->purpose == Purpose::sub_check;
  const std::int64_t timeout = check ? options_.check_timeout_ns : sa_timeout_ns_;
  ++totals_.remote_mads;
  const auto answer_at = sa_.submit(now_ns);
  if (answer_at && *answer_at - now_ns <= timeout) {
    queue_.push(*answer_at, EventKind::monitor_reply, n, id);
  } else {
    queue_.push(now_ns + timeout, EventKind::monitor_lost, n, id);
  }
}

// PortMonitor's sequence: a full check asks SMInfo, then (subscriptions confirmed, SM master) the
// subscription check; a routine check asks the subscription check, and SMInfo if it went unanswered.
void Monitor::done(std::uint32_t n, Purpose purpose, bool answered, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  switch (purpose) {
    case Purpose::subscribe:
      if (answered && s.subscriptions < 2) ++s.subscriptions;
      return;
    case Purpose::mcmember: return;
    case Purpose::sm_info:
      s.master_seen = answered;
      if (s.check == Check::full && answered && s.subscriptions == 2) return send(n, Purpose::sub_check, now_ns);
      return finish(n, now_ns);
    case Purpose::sub_check:
      s.kept = answered;
      if (s.check == Check::routine && !answered) return send(n, Purpose::sm_info, now_ns);
      return finish(n, now_ns);
  }
}

void Monitor::finish(std::uint32_t n, std::int64_t now_ns) {
  NodeState& s = nodes_[n];
  const bool settled = s.master_seen || s.kept;
  if (!settled || s.check == Check::routine) {
    s.false_alarms = 0;
  } else if (s.timeout_suspect && !s.suspect && s.false_alarms < 63) {
    ++s.false_alarms;
  }
  s.check = Check::none;
  s.last_check_ns = now_ns;
  s.suspect = !settled;
  s.timeout_suspect = false;
  s.next_routine_ns = now_ns + routine_interval();
  schedule(n, now_ns);
}

void Monitor::on_remote_timeout(std::uint32_t n, std::int64_t now_ns) {
  if (nodes_.empty()) return;
  nodes_[n].timeout_suspect = true;
  schedule(n, now_ns);
}

void Monitor::on_sm_changed(std::uint32_t n, std::int64_t now_ns) {
  if (nodes_.empty()) return;
  NodeState& s = nodes_[n];
  s.subscriptions = 0;
  send(n, Purpose::subscribe, now_ns);  // trap 64
  send(n, Purpose::subscribe, now_ns);  // trap 65
  send(n, Purpose::mcmember, now_ns);   // the broadcast group
  s.suspect = true;
  s.false_alarms = 0;
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

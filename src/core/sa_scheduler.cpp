// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One port's SA scheduler (see sa_scheduler.h).
#include "core/sa_scheduler.h"

#include <algorithm>
#include <functional>

namespace ibat::core {

SaScheduler::SaScheduler(const Policy& policy, TimePoint now, std::uint64_t admission_seed, std::uint64_t table_seed)
    : revalidate_per_s_(policy.revalidate_per_s), revalidate_jitter_(policy.revalidate_jitter),
      in_use_window_paths_per_s_(policy.in_use_window_paths_per_s), admission_(policy, now, admission_seed, sa_),
      table_seed_(table_seed), table_(table_seed, policy.expected_subnet_ports) {}

void SaScheduler::on_get_result(TimePoint sent, TimePoint now, bool lost) {
  if (lost) sa_.on_lost(now - sent);
  else sa_.on_answer(now - sent);
  admission_.on_result(sent, now, lost);
}

void SaScheduler::on_table_lost(TimePoint sent, TimePoint now) {
  sa_.on_lost(now - sent);
  admission_.on_table_lost(sent, now);
}

std::optional<bool> SaScheduler::on_probe_result(QueryId id, TimePoint now, bool lost) {
  SubnetTable* table = table_of(id);
  const std::optional<TimePoint> sent = table ? table->probe_sent_at(id) : std::nullopt;
  if (!sent) return std::nullopt;
  const Duration round_trip = now - *sent;
  // All of it counts as queue, and it is no sample of the port's estimate of the SA: a base learnt
  // while the subnet's hosts all start is a queue itself, and a probe's round trip in the pacer's
  // smoothed one slows the renewals after an SM change (docs/scale.md, appendix "The table gate
  // and the port's estimate of the SA").
  return table->on_probe_result(id, now, lost, round_trip);
}

void SaScheduler::configure(const Policy& policy, TimePoint now) {
  revalidate_per_s_ = policy.revalidate_per_s;
  revalidate_jitter_ = policy.revalidate_jitter;
  in_use_window_paths_per_s_ = policy.in_use_window_paths_per_s;
  admission_.configure(policy, now);
  for_each_table([&](SubnetTable& t) { t.learn_size(policy.expected_subnet_ports); });
}

SubnetTable* SaScheduler::table_for(const QosKey& qos) {
  if (qos.is_default()) return &table_;
  if (qos.sent_service_id()) return nullptr;
  for (SubnetTable& t : class_tables_) {
    if (t.qos_class() == qos.qos_class) return &t;
  }
  return nullptr;
}

SubnetTable* SaScheduler::add_class_table(const QosKey& qos) {
  if (!qos.sent_qos_class() || qos.sent_service_id() || class_tables_.size() >= kMaxClassTables) return nullptr;
  const auto id_space = static_cast<std::uint16_t>(class_tables_.size() + 1);
  // Its own gate's draw: the port's tables are not probed in step.
  return &class_tables_.emplace_back(table_seed_ + 0x9E3779B97F4A7C15ULL * id_space, table_.subnet_size(),
                                     qos.qos_class, id_space);
}

SubnetTable* SaScheduler::table_of(QueryId id) {
  const std::optional<std::uint16_t> space = SubnetTable::id_space_of(id);
  if (!space) return nullptr;
  if (*space == 0) return &table_;
  return *space <= class_tables_.size() ? &class_tables_[*space - 1] : nullptr;
}

bool SaScheduler::tables_awaited() const {
  return table_.awaited() ||
         std::any_of(class_tables_.begin(), class_tables_.end(), [](const SubnetTable& t) { return t.awaited(); });
}

// Items of destroyed or re-queued jobs are skipped when they reach the front; a queue that holds
// mostly such items is swept, so that each queue stays within 2 x jobs + 64 items.
bool SaScheduler::needs_sweep(std::size_t items, const Jobs& jobs) { return items > 2 * jobs.count() + 64; }

FairQueue::Live SaScheduler::live_test(const Jobs& jobs) {
  return [&jobs](const Item& i) { return jobs.live(i); };
}

void SaScheduler::compact_waited(const Jobs& jobs) {
  if (needs_sweep(waited_.size(), jobs)) waited_.compact(live_test(jobs));
}

void SaScheduler::queue(Traffic kind, Requester requester, Item item, bool at_head, TimePoint now, const Jobs& jobs) {
  if (kind == Traffic::waited) {
    if (at_head) waited_.push_front(requester, item);
    else waited_.push_back(requester, item);
    return compact_waited(jobs);
  }
  SendQueue& q = queue_of(kind);
  if (kind == Traffic::late && !live_front(kind, jobs)) late_from_ = now;  // the late GETs' schedule starts
  if (at_head) q.push_front(item);
  else q.push_back(item);
  if (needs_sweep(q.size(), jobs)) std::erase_if(q, std::not_fn(live_test(jobs)));
}

void SaScheduler::promote(Requester requester, Item item, const Jobs& jobs) {
  waited_.push_back(requester, item);
  compact_waited(jobs);
}

bool SaScheduler::live_front(Traffic kind, const Jobs& jobs) {
  if (kind == Traffic::waited) return waited_.live_front(live_test(jobs));
  SendQueue& q = queue_of(kind);
  while (!q.empty()) {
    if (jobs.live(q.front())) return true;
    q.pop_front();
  }
  return false;
}

SaScheduler::JobId SaScheduler::pop_front(Traffic kind) {
  if (kind == Traffic::waited) return waited_.pop_front().first;
  SendQueue& q = queue_of(kind);
  const JobId id = q.front().first;
  q.pop_front();
  return id;
}

bool SaScheduler::empty(Traffic kind) const {
  return kind == Traffic::waited ? waited_.empty() : queue_of(kind).empty();
}

std::size_t SaScheduler::queued() const {
  std::size_t n = waited_.size();
  for (const SendQueue& q : queues_) n += q.size();
  return n;
}

SendLoad SaScheduler::load(std::size_t inflight, const Jobs& jobs) const {
  const bool awaited = tables_awaited();  // late_due() only matters then (SaAdmission)
  return {.inflight = inflight, .table_awaited = awaited, .late_due = awaited ? late_due(jobs) : std::nullopt};
}

// The highest-priority queue with a live item that the admission lets be picked now goes first;
// when the admission holds its next GET, nothing goes until get_wakeup().
std::optional<SaScheduler::JobId> SaScheduler::next_get(TimePoint now, std::size_t inflight, const Jobs& jobs) {
  const SendLoad l = load(inflight, jobs);
  const auto kind = std::find_if(kTrafficByPriority.begin(), kTrafficByPriority.end(), [&](Traffic k) {
    return admission_.eligible(k, l, now) && live_front(k, jobs);
  });
  if (kind == kTrafficByPriority.end()) return std::nullopt;
  const std::optional<TimePoint> at = admission_.earliest(*kind, l, now);
  if (!at || *at > now) return std::nullopt;
  admission_.on_sent(now);
  if (*kind == Traffic::late) late_from_ = now;
  return pop_front(*kind);
}

// The earliest time any non-empty send queue may send, as next_get() asks it: a late GET due by
// its deadlines may go before a waited one.
std::optional<TimePoint> SaScheduler::get_wakeup(TimePoint now, std::size_t inflight, const Jobs& jobs) const {
  std::optional<TimePoint> next;
  const SendLoad l = load(inflight, jobs);
  for (Traffic kind : kTrafficByPriority) {
    if (empty(kind)) continue;
    if (auto at = admission_.earliest(kind, l, now); at && (!next || *at < *next)) next = at;
  }
  return next;
}

// The requests that could not wait for the table have deadlines, and nothing else says when their
// GETs must go: the table will bring their paths, and behind the other hosts' tables the SaPacer
// would hold them as long as the SA's queue is long. So each is due by an even schedule that
// sends the queued ones, in order, each by its latest time, and not sooner. The k-th of them,
// latest at L_k, allows (L_k - late_from) / k a GET; the schedule takes the least. No SA speed
// is assumed.
std::optional<TimePoint> SaScheduler::late_due(const Jobs& jobs) const {
  const SendQueue& q = queue_of(Traffic::late);
  std::optional<Duration> gap;
  std::size_t k = 0;
  for (const Item& item : q) {
    if (!jobs.live(item)) continue;
    const std::optional<TimePoint> deadline = jobs.first_deadline(item.first);
    if (!deadline) continue;
    const Duration slack = *deadline - kTableWaitReserve - late_from_;
    if (slack <= Duration::zero()) return late_from_;
    ++k;
    // Past the lookahead, every job still queued (at most q.size()) is taken to be due then.
    const auto ahead = static_cast<Duration::rep>(k == kLateLookahead ? q.size() : k);
    gap = std::min(gap.value_or(Duration::max()), slack / ahead);
    if (k == kLateLookahead) break;
  }
  if (!gap) return std::nullopt;
  return late_from_ + *gap;
}

std::optional<std::pair<TimePoint, SaScheduler::JobId>> SaScheduler::due_retry(TimePoint now) {
  if (retries_.empty() || retries_.top().first > now) return std::nullopt;
  const Timed due = retries_.top();
  retries_.pop();
  return due;
}

std::optional<TimePoint> SaScheduler::retry_wakeup() const {
  if (retries_.empty()) return std::nullopt;
  return retries_.top().first;
}

void SaScheduler::start_revalidations(TimePoint now, Prng& prng) {
  next_revalidation_ = now + prng.uniform(Duration::zero(), revalidate_jitter_);
}

Duration SaScheduler::revalidation_interval() const {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(1.0 / revalidate_per_s_));
}

void SaScheduler::revalidation_asked(Prng& prng) {
  const Duration interval = revalidation_interval();
  next_revalidation_ += prng.uniform(interval / 2, interval + interval / 2);
}

TimePoint SaScheduler::in_use_release_at() const {
  return in_use_.release_at(table_.subnet_size(), in_use_window_paths_per_s_);
}

std::optional<TimePoint> SaScheduler::revalidation_wakeup(TimePoint now, bool scheduled, bool set_aside) const {
  std::optional<TimePoint> next;
  auto consider = [&next](TimePoint t) {
    if (!next || t < *next) next = t;
  };
  if (scheduled) {
    if (!tables_awaited()) consider(next_revalidation_);
    else if (in_use_first_) consider(now);
  }
  if (set_aside) consider(tables_awaited() ? in_use_release_at() : now);
  return next;
}

}  // namespace ibat::core

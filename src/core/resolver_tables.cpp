// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Prefetch and bulk revalidation (Policy::prefetch, docs/design.md "Prefetch"): when the port
// becomes usable and after every SM change or move of our own LID, one PathRecord GetTable asks
// the paths to the whole subnet on the default P_Key. Its answer fills the cache (only while there
// is room: it never pushes out an entry) and refreshes every entry it names; meanwhile the GET
// revalidation schedule waits, so the only GETs are those that requests wait on now. What the
// table does not name (other P_Keys, destinations it lacks) is then revalidated by GET as before;
// a table that times out is asked again with the GET backoff (retry_base..retry_max, retry_count:
// the SA may be down or in its first sweep, when GETs would fail as well), and one the SA refuses
// or that still finds no answer leaves everything to GETs.
//
// A wanted table goes when the table gate (core/table_gate.h) opens: a probe GET found the SA's
// queue short. The subnet's first probes are spread over a window that grows with its size; a port
// that knows nothing of its size (a first start with no cache file) asks it first, by a query that
// computes no path (SubnetSizeQuery), so that a fabric's cold power-on spreads its probes as a warm
// one does; without an answer its first probe goes at once. After our LIDs moved, the gate's
// first probe waits for the subnet's GETs renewing paths in use (core/in_use_window.h).
#include <algorithm>

#include "core/backoff.h"
#include "core/resolver_impl.h"

namespace ibat::core {

void Resolver::Impl::want_table() {
  if (policy.prefetch == Prefetch::off) return;
  if (table_query != 0) outbox.emplace_back(CancelCall{table_query});  // its answer may be outdated
  table_query = 0;
  table_wanted = true;
  table_attempts = 0;
  table_retry_at = TimePoint{};
  table_wanted_at = now();
  cancel_probe();
  table_gate.clear();
}

// From tick() only, never in the middle of an event: the events of one poll (our LID moved, then the
// SM changed) ask one table between them, not one each.
void Resolver::Impl::send_table() {
  if (!table_ready()) return;
  if (size_wanted()) {
    if (now() >= table_retry_at) ask_size();
    return;
  }
  if (!table_gate.wanted()) {
    const Duration hold = in_use_window.table_hold(table_wanted_at, subnet_size, policy.table_spread_paths_per_s);
    table_gate.want(now(), subnet_size, std::max(table_retry_at, table_wanted_at + hold));
  }
  if (!table_gate.open()) {
    if (auto due = table_gate.probe_due(); due && *due <= now()) send_probe();
    if (!table_gate.open()) return;
  }
  table_gate.clear();
  table_wanted = false;
  table_query = kTableQueryBit | next_table++;
  table_sent = TableQuery{.id = table_query, .sgid = port->gid, .pkey = policy.default_pkey};
  table_sent_at = now();
  outbox.emplace_back(table_sent);
}

// Sent here, not through the outbox: a sink that cannot probe opens the gate at once, and the
// table goes in the same tick.
void Resolver::Impl::send_probe() {
  const PathQuery probe{.id = kTableQueryBit | next_table++, .sgid = port->gid, .dgid = port->gid, .dlid = std::nullopt,
                        .pkey = policy.default_pkey, .service_id = std::nullopt, .qos_class = std::nullopt};
  table_gate.on_probe_sent(now());
  if (sink.send_probe(probe)) {
    probe_query = probe.id;
    ++stats.sa_probes;
  } else {
    table_gate.on_probe_result(now(), false);
  }
}

void Resolver::Impl::cancel_probe() {
  if (probe_query != 0) outbox.emplace_back(CancelCall{probe_query});
  probe_query = 0;
}

std::optional<TimePoint> Resolver::Impl::table_wakeup() const {
  if (!table_ready()) return std::nullopt;
  if (size_wanted()) return std::max(table_retry_at, now());
  if (!table_gate.wanted() || table_gate.open()) return std::max(table_retry_at, now());  // send_table arms it
  if (auto due = table_gate.probe_due()) return std::max(*due, now());
  return std::nullopt;
}

void Resolver::Impl::ask_size() {
  size_query = kTableQueryBit | next_table++;
  outbox.emplace_back(SubnetSizeQuery{size_query});
}

void Resolver::on_subnet_size(QueryId id, const SubnetSizeResult& result) {
  Impl& m = *impl_;
  if (id == 0 || id != m.size_query) return;
  m.size_query = 0;
  if (result.error == Error::ok) {
    m.subnet_size = std::max(m.subnet_size, result.lids);
    m.size_settled = true;
  } else if (result.error == Error::timeout && m.size_attempts < m.policy.retry_count) {
    // The SA is down or sweeping: its table would be lost as well. Asked again after a backoff.
    ++m.size_attempts;
    m.table_retry_at = std::max(m.table_retry_at, m.now() + backoff_delay(m.policy, m.size_attempts, m.prng));
  } else {
    m.size_settled = true;  // the table's probes go unspread
  }
  m.settle();
}

void Resolver::Impl::resume_revalidations() {
  next_revalidation = std::max(next_revalidation, now());
  release_table_waits();
}

// A whole subnet's daemons starting with a job want their tables at once; spread, most come later
// than the job's first connects. Sent as GETs at once, those connects would ask the SA again and
// again while the tables keep it busy (window after window, each daemon until its table comes);
// parked, a daemon's window asks by GET at most once per request deadline, and not at all when the
// table comes first. Only what the table will name waits: a default path (no ServiceID or QoS
// class kept apart) by GID on the default P_Key from our port's GID, with no stale path to fall back on, for a request allowed more than the reserve.
bool Resolver::Impl::park_for_table(JobId id, const Pending& p) {
  if (!awaiting_table() || !port || p.stale_fallback || p.request.force_sa) return false;
  Job& job = jobs.at(id);
  if (job.key.by_lid || job.key.sgid != port->gid || job.key.pkey != policy.default_pkey || !job.key.qos.is_default())
    return false;
  const TimePoint until = p.deadline - kTableWaitReserve;
  if (until <= now()) return false;
  if (table_gate.held()) {  // a probe found the SA's queue long: by GET now, at the late pace
    enqueue_late(id);
    return true;
  }
  job.state = JobState::table_wait;
  job.retry_at = until;
  retries.emplace(until, id);
  return true;
}

// The requests that could not wait for the table have deadlines, and nothing else says when their
// GETs must go: the table will bring their paths, and behind the other hosts' tables the SaPacer
// would hold them as long as the SA's queue is long. So each is due by an even schedule that
// sends the queued ones, in order, each by its latest time, and not sooner. The k-th of them,
// latest at L_k, allows (L_k - late_from) / k a GET; the schedule takes the least. No SA speed
// is assumed.
std::optional<TimePoint> Resolver::Impl::late_due() const {
  const SendQueue& queue = send_queue(Traffic::late);
  std::optional<Duration> gap;
  std::size_t k = 0;
  for (const auto& [id, seq] : queue) {
    if (!live(id, seq)) continue;
    const Job& job = jobs.at(id);
    if (job.waiters.empty()) continue;
    TimePoint deadline = TimePoint::max();
    for (RequestId w : job.waiters) deadline = std::min(deadline, pending.at(w).deadline);
    const Duration slack = deadline - kTableWaitReserve - late_from;
    if (slack <= Duration::zero()) return late_from;
    ++k;
    // Past the lookahead, every job still queued (at most queue.size()) is taken to be due then.
    const auto ahead = static_cast<Duration::rep>(k == kLateLookahead ? queue.size() : k);
    gap = std::min(gap.value_or(Duration::max()), slack / ahead);
    if (k == kLateLookahead) break;
  }
  if (!gap) return std::nullopt;
  return late_from + *gap;
}

void Resolver::Impl::shorten_table_wait(JobId id, const Pending& p) {
  Job& job = jobs.at(id);
  const TimePoint until = p.deadline - kTableWaitReserve;
  if (until >= job.retry_at) return;
  if (until <= now()) return enqueue(id, true);
  job.retry_at = until;
  retries.emplace(until, id);
}

void Resolver::Impl::release_table_waits_late() {
  std::vector<std::pair<TimePoint, JobId>> parked;
  for (const auto& [id, job] : jobs) {
    if (job.state == JobState::table_wait) parked.emplace_back(job.retry_at, id);
  }
  std::sort(parked.begin(), parked.end());  // the earliest deadline first
  for (const auto& item : parked) enqueue_late(item.second);
}

void Resolver::Impl::release_table_waits() {
  for (auto& [id, job] : jobs) {
    if (job.state == JobState::table_wait) enqueue(id, !job.waiters.empty());
  }
}

void Resolver::Impl::drop_table() {
  if (table_query != 0) outbox.emplace_back(CancelCall{table_query});
  table_query = 0;
  table_wanted = false;
  cancel_probe();
  table_gate.clear();
  resume_revalidations();
}

void Resolver::Impl::table_unsent(QueryId id) {
  if (id != table_query) return;
  table_query = 0;
  resume_revalidations();
}

void Resolver::Impl::table_failed() {
  ++stats.sa_tables_failed;
  resume_revalidations();
}

void Resolver::on_table_result(QueryId id, const TableResult& result) {
  Impl& m = *impl_;
  if (id == 0 || id != m.table_query) return;  // cancelled, or asked before the last SM change
  m.table_query = 0;
  if (result.error == Error::ok) {
    ++m.stats.sa_tables_answered;
    m.apply_table(result.paths);
    m.release_table_waits();  // what the table did not name
  } else {
    // A lost table is the SA's overload signal as much as a lost GET; its round trip, long by
    // nature, is no sample of the SA's queue.
    if (result.error == Error::timeout) m.admission.on_table_lost(m.table_sent_at, m.now());
    if (result.error == Error::timeout && m.table_attempts < m.policy.retry_count) {
      ++m.table_attempts;
      m.table_retry_at = m.now() + backoff_delay(m.policy, m.table_attempts, m.prng);
      m.table_wanted = true;
      m.table_gate.clear();
    } else {
      m.table_failed();
    }
  }
  m.settle();
}

void Resolver::Impl::apply_table(const std::vector<PathRecord>& paths) {
  subnet_size = paths.size();
  const Gid sgid = table_sent.sgid;
  const Pkey pkey = table_sent.pkey;
  for (const PathRecord& p : paths) {
    if (!p.is_servable() || p.sgid != sgid || p.dgid.is_zero()) {
      ++stats.table_skipped;
      continue;
    }
    const PathKey key{sgid, p.dgid, pkey, QosKey{}};
    PathCache::Index i = cache.find(key);
    if (i == PathCache::npos) {
      if (cache.size() >= policy.capacity) {
        ++stats.table_skipped;
        continue;
      }
      i = cache.insert_least_recent(key, now());
    }
    ++stats.table_paths;
    JobId job = job_for(JobKey::for_path(key));
    if (job == 0) {
      store_path(i, p, PathOrigin::sa_table);
      continue;
    }
    // A GET for it is queued or in flight (a request waits, or a revalidation): the table's
    // answer is as fresh, so it completes the waiters now and the GET is not needed.
    Job& j = jobs.at(job);
    if (j.query != 0) {
      outbox.emplace_back(CancelCall{j.query});
      inflight.erase(j.query);
      j.query = 0;
    }
    accept(job, p, PathOrigin::sa_table);
  }
}

}  // namespace ibat::core

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Prefetch and bulk revalidation (Policy::prefetch, docs/design.md "Admission of a port's SA traffic, as states"): when the port
// becomes usable and after every SM change or move of our own LID, one PathRecord GetTable asks
// the paths to the whole subnet on the default P_Key. Its answer fills the cache (only while there
// is room: it never pushes out an entry) and refreshes every entry it names; meanwhile the GET
// revalidation schedule waits, so the only GETs are those that requests wait on now. What the
// table does not name (other P_Keys, destinations it lacks) is then revalidated by GET as before;
// a table that times out is asked again with the GET backoff (retry_base..retry_max, retry_count:
// the SA may be down or in its first sweep, when GETs would fail as well), and one the SA refuses
// or that still finds no answer leaves everything to GETs.
//
// The table's life (size query, probes, retries, ids) is core::SubnetTable's; here the Resolver
// tells it what happened and sends what it says. A wanted table goes when the table gate
// (core/table_gate.h) opens: a probe GET found the SA's queue short. The subnet's first probes are spread over a window that grows with its size; a port
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
  scheduler.for_each_table([&](SubnetTable& t) { cancel(t.want(now())); });
}

void Resolver::Impl::cancel(const std::vector<QueryId>& queries) {
  for (QueryId id : queries) outbox.emplace_back(CancelCall{id});
}

// From tick() only, never in the middle of an event: the events of one poll (our LID moved, then the
// SM changed) ask one table between them, not one each.
void Resolver::Impl::send_table() {
  scheduler.for_each_table([&](SubnetTable& t) { send_table(t); });
}

// The table says what goes; a probe goes to the sink here, not through the outbox: a sink that
// cannot probe opens the gate at once, and the table goes in the same tick.
void Resolver::Impl::send_table(SubnetTable& table) {
  const bool needs_size = table_needs_size(table);
  while (true) {
    const Duration hold =
        scheduler.in_use().table_hold(table.wanted_at(), table.subnet_size(), policy.in_use_window_paths_per_s);
    const SubnetTable::Step step =
        table.step(now(), port_usable(), needs_size, hold, port ? port->gid : Gid{}, policy.default_pkey);
    switch (step.send) {
      case SubnetTable::Send::nothing: return;
      case SubnetTable::Send::size_query: outbox.emplace_back(SubnetSizeQuery{step.id}); return;
      case SubnetTable::Send::table: outbox.emplace_back(table.sent()); return;
      case SubnetTable::Send::probe: {
        const PathQuery probe{.id = step.id, .sgid = port->gid, .dgid = port->gid, .dlid = std::nullopt,
                              .pkey = policy.default_pkey, .service_id = std::nullopt, .qos_class = std::nullopt};
        const bool sent = sink.send_probe(probe);
        if (sent) ++stats.sa_probes;
        table.probe_sent(now(), sent);
        if (sent) return;
        break;  // the gate is open: the table goes now
      }
    }
  }
}

std::optional<TimePoint> Resolver::Impl::table_wakeup() const {
  std::optional<TimePoint> next;
  scheduler.for_each_table([&](const SubnetTable& t) {
    if (auto at = t.wakeup(now(), port_usable(), table_needs_size(t)); at && (!next || *at < *next)) next = at;
  });
  return next;
}

void Resolver::on_subnet_size(QueryId id, const SubnetSizeResult& result) {
  Impl& m = *impl_;
  if (!m.scheduler.table().asking_size(id)) return;  // cancelled, or asked before the last SM change
  using Outcome = SubnetTable::SizeOutcome;
  Outcome outcome = Outcome::settled;  // refused or given up: the table's probes go unspread
  TimePoint retry_at{};
  if (result.error == Error::ok) {
    outcome = Outcome::answered;
  } else if (result.error == Error::timeout && m.scheduler.table().size_attempts() < m.policy.retry_count) {
    // The SA is down or sweeping: its table would be lost as well. Asked again after a backoff.
    outcome = Outcome::retry;
    retry_at = m.now() + backoff_delay(m.policy, m.scheduler.table().size_attempts() + 1, m.prng);
  }
  m.scheduler.table().on_size_result(id, outcome, result.lids, retry_at);
  m.settle();
}

void Resolver::Impl::resume_revalidations(const SubnetTable* table) {
  scheduler.resume_revalidations(now());
  release_table_waits(table);
}

// A whole subnet's daemons starting with a job want their tables at once; spread, most come later
// than the job's first connects. Sent as GETs at once, those connects would ask the SA again and
// again while the tables keep it busy (window after window, each daemon until its table comes);
// parked, a daemon's window asks by GET at most once per request deadline, and not at all when the
// table comes first. Only what a table will name waits: a path by GID on the default P_Key from our
// port's GID, with the default key (the subnet's table) or a QoS class alone (its class's table,
// wanted now if the port has none: the class's first resolve, whatever its deadline), with no stale
// path to fall back on, for a request allowed more than the reserve.
bool Resolver::Impl::park_for_table(JobId id, const Pending& p) {
  if (policy.prefetch == Prefetch::off || !port || p.stale_fallback || p.request.force_sa) return false;
  Job& job = jobs.at(id);
  if (job.key.by_lid || job.key.sgid != port->gid || job.key.pkey != policy.default_pkey) return false;
  SubnetTable* table = scheduler.table_for(job.key.qos);
  if (!table && (table = scheduler.add_class_table(job.key.qos))) cancel(table->want(now()));  // the class's first resolve
  if (!table || !table->awaited()) return false;
  const TimePoint until = p.deadline - SaScheduler::kTableWaitReserve;
  // A request that cannot wait for the table, or whose table a probe found the SA's queue too long
  // for: by GET now, at the late pace (the pacer would read the subnet's tables as congestion).
  if (until <= now() || table->held()) {
    enqueue_late(id);
    return true;
  }
  job.state = JobState::table_wait;
  job.retry_at = until;
  scheduler.retry_at(until, id);
  return true;
}

void Resolver::Impl::shorten_table_wait(JobId id, const Pending& p) {
  Job& job = jobs.at(id);
  const TimePoint until = p.deadline - SaScheduler::kTableWaitReserve;
  if (until >= job.retry_at) return;
  if (until <= now()) return enqueue_late(id);
  job.retry_at = until;
  scheduler.retry_at(until, id);
}

bool Resolver::Impl::waits_for(const Job& job, const SubnetTable* table) {
  return job.state == JobState::table_wait && (!table || scheduler.table_for(job.key.qos) == table);
}

void Resolver::Impl::release_table_waits_late(const SubnetTable& table) {
  std::vector<std::pair<TimePoint, JobId>> parked;
  for (const auto& [id, job] : jobs) {
    if (waits_for(job, &table)) parked.emplace_back(job.retry_at, id);
  }
  std::sort(parked.begin(), parked.end());  // the earliest deadline first
  for (const auto& item : parked) enqueue_late(item.second);
}

void Resolver::Impl::release_table_waits(const SubnetTable* table) {
  for (auto& [id, job] : jobs) {
    if (waits_for(job, table)) enqueue(id, job.waited_or_background());
  }
}

void Resolver::Impl::drop_table() {
  scheduler.for_each_table([&](SubnetTable& t) { cancel(t.drop()); });
  resume_revalidations(nullptr);
}

void Resolver::Impl::table_unsent(QueryId id) {
  SubnetTable* table = scheduler.table_of(id);
  if (table && table->on_table_unsent(id)) resume_revalidations(table);
}

void Resolver::Impl::table_failed(const SubnetTable& table) {
  ++stats.sa_tables_failed;
  resume_revalidations(&table);
}

void Resolver::on_table_result(QueryId id, const TableResult& result) {
  Impl& m = *impl_;
  SubnetTable* table = m.scheduler.table_of(id);
  if (!table || !table->in_flight(id)) return;  // cancelled, or asked before the last SM change
  if (result.error == Error::ok) {
    table->on_table_answered(id, result.paths.size());
    ++m.stats.sa_tables_answered;
    m.apply_table(*table, result.paths);
    m.release_table_waits(table);  // what the table did not name
  } else {
    // A lost table is the SA's overload signal as much as a lost GET; its round trip, long by
    // nature, is no sample of the SA's queue.
    if (result.error == Error::timeout) m.scheduler.on_table_lost(table->sent_at(), m.now());
    std::optional<TimePoint> retry_at;
    if (result.error == Error::timeout && table->table_attempts() < m.policy.retry_count)
      retry_at = m.now() + backoff_delay(m.policy, table->table_attempts() + 1, m.prng);
    table->on_table_failed(id, retry_at);
    if (!retry_at) m.table_failed(*table);
  }
  m.settle();
}

// The answer's paths are cached under the table's key: the default one, or its QoS class alone.
void Resolver::Impl::apply_table(const SubnetTable& table, const std::vector<PathRecord>& paths) {
  const Gid sgid = table.sent().sgid;
  const Pkey pkey = table.sent().pkey;
  QosKey qos;
  if (table.qos_class()) {
    qos.qos_class = *table.qos_class();
    qos.fields = QosKey::kQosClass;
  }
  for (const PathRecord& p : paths) {
    if (!p.is_servable() || p.sgid != sgid || p.dgid.is_zero()) {
      ++stats.table_skipped;
      continue;
    }
    const PathKey key{sgid, p.dgid, pkey, qos};
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

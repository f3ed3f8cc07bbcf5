// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Resolver: the public entry points and the request side (serve from cache, wait, complete).
// Queries and jobs are in resolver_jobs.cpp, fabric/neighbour events in resolver_events.cpp.
#include <algorithm>

#include "core/resolver_impl.h"

namespace ibat::core {

Resolver::Impl::Impl(const Policy& p, const Clock& c, QuerySink& s, std::uint64_t seed)
    : policy(p), clock(c), sink(s), prng(seed),
      scheduler(p, c.now(), seed ^ 0x5A9ACE5EEDULL, seed ^ 0x7AB1E6A7EULL) {}

Resolver::Resolver(const Policy& policy, const Clock& clock, QuerySink& sink, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(policy, clock, sink, seed)) {}

Resolver::~Resolver() = default;

RequestId Resolver::resolve(const ResolveRequest& request, Completion done) {
  Impl& m = *impl_;
  RequestId id = m.next_id.request++;
  ++m.stats.resolves;
  Duration timeout = std::min(request.timeout.value_or(m.policy.request_timeout), m.policy.max_request_timeout);
  Pending p{std::move(done), m.now() + timeout, 0, request};
  if (request.timeout && *request.timeout < Duration::zero())
    m.deliver(id, std::move(p), failure(Error::invalid));
  else
    m.dispatch(id, std::move(p));
  m.settle();
  return id;
}

bool Resolver::cancel(RequestId id) {
  Impl& m = *impl_;
  if (!m.pending.contains(id)) return false;
  m.complete(id, failure(Error::cancelled));
  m.settle();
  return true;
}

void Resolver::cancel_all(Error error) {
  Impl& m = *impl_;
  std::vector<RequestId> ids;
  ids.reserve(m.pending.size());
  for (const auto& [id, p] : m.pending) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (RequestId id : ids) m.complete(id, failure(error));
  m.settle();
}

void Resolver::tick() {
  Impl& m = *impl_;
  TimePoint now = m.now();
  m.expire_deadlines(now);
  m.release_retries(now);
  m.release_revalidations(now);
  m.send_table();
  m.settle();
}

std::optional<TimePoint> Resolver::next_wakeup() const {
  const Impl& m = *impl_;
  std::optional<TimePoint> next;
  auto consider = [&next](TimePoint t) {
    if (!next || t < *next) next = t;
  };
  if (!m.deadlines.empty()) consider(m.deadlines.begin()->first);
  if (auto t = m.scheduler.retry_wakeup()) consider(*t);
  if (auto t = m.scheduler.revalidation_wakeup(m.now(), !m.revalidation_schedule.empty(), !m.in_use_aside.empty()))
    consider(*t);
  if (auto t = m.table_wakeup()) consider(*t);
  if (m.port_active) {
    if (auto at = m.scheduler.get_wakeup(m.now(), m.inflight.size(), m)) consider(*at);
  }
  return next;
}

Stats Resolver::stats() const {
  Stats s = impl_->stats;
  s.entries = impl_->cache.size();
  s.pending = impl_->pending.size();
  s.inflight = impl_->inflight.size();
  s.neighbours = impl_->neighbours.size();
  s.sa_window = impl_->scheduler.window();
  s.sa_turns_waited_max = impl_->scheduler.lone_wait_max();
  return s;
}

Resolver::TableSizes Resolver::table_sizes() const {
  const Impl& m = *impl_;
  return {.pending = m.pending.size(), .deadlines = m.deadlines.size(), .jobs = m.jobs.size(),
          .queued = m.scheduler.queued(), .lid_failures = m.lid_failures.size(), .outbox = m.outbox.capacity()};
}

const Policy& Resolver::policy() const { return impl_->policy; }

void Resolver::set_policy(const Policy& policy) {
  Impl& m = *impl_;
  m.policy = policy;
  m.scheduler.configure(policy, m.now());
  if (policy.prefetch == Prefetch::off) m.drop_table();
  m.make_room();
  m.settle();
}

// ---- request side ----

void Resolver::Impl::dispatch(RequestId id, Pending&& p) {
  const ResolveRequest& r = p.request;
  if ((r.pkey && !r.pkey->is_valid()) || (r.sgid && r.sgid->is_zero()))
    return deliver(id, std::move(p), failure(Error::invalid));
  Gid sgid = r.sgid ? *r.sgid : (port ? port->gid : Gid{});
  // Before the first port report (a daemon that has just started) a request waits for it, up to
  // its deadline, instead of failing a destination that may well exist.
  if (sgid.is_zero()) {
    if (!port) return wait_for_port(id, std::move(p));
    return deliver(id, std::move(p), failure(Error::unreachable));
  }
  // A path from a GID that is not our port's is not this host's to give: nothing is queried or
  // remembered for it. (Before the port is known, an explicit source GID is taken as given.)
  if (port && sgid != port->gid) return deliver(id, std::move(p), failure(Error::invalid));
  // A pulled cable: nothing this port sends arrives, so not even a cached path is of use.
  if (port && port->link_down) return deliver(id, std::move(p), failure(Error::unreachable));
  Pkey pkey = r.pkey.value_or(policy.default_pkey);
  const QosKey qos = QosKey::of(r.service_id, r.qos_class, policy.qos_service_ids, policy.qos_classes);

  if (const auto* gid = std::get_if<Gid>(&r.target)) {
    if (gid->is_zero()) return deliver(id, std::move(p), failure(Error::invalid));
    return resolve_gid(id, std::move(p), PathKey{sgid, *gid, pkey, qos});
  }
  if (const auto* hw = std::get_if<HwAddr>(&r.target)) {
    Gid gid = hw->gid();
    if (gid.is_zero()) return deliver(id, std::move(p), failure(Error::invalid));
    return resolve_gid(id, std::move(p), PathKey{sgid, gid, pkey, qos});
  }
  if (const auto* lid = std::get_if<Lid>(&r.target)) {
    if (!lid->is_valid_unicast()) return deliver(id, std::move(p), failure(Error::invalid));
    return resolve_lid(id, std::move(p), LidKey{sgid, *lid, pkey, qos});
  }
  const IpAddr ip = std::get<IpAddr>(r.target);
  if (const Neighbour* n = neighbours.find(ip)) {
    Gid gid = n->hw.gid();
    if (gid.is_zero()) return deliver(id, std::move(p), failure(Error::unreachable));
    return resolve_gid(id, std::move(p), PathKey{sgid, gid, pkey, qos});
  }
  if (r.cache_only) return deliver(id, std::move(p), failure(Error::unreachable));
  wait_for_neighbour(id, std::move(p), ip);
}

bool Resolver::Impl::refresh_servable(CacheEntry& e) {
  TimePoint t = now();
  switch (e.state) {
    case EntryState::valid:
      if (t - e.produced >= policy.path_ttl) e.state = EntryState::stale;
      return true;
    case EntryState::stale: return true;
    case EntryState::provisional: return t - e.produced < policy.provisional_ttl;
    default: return false;
  }
}

// Reported for default paths only: a WATCH event names (SGID, DGID, P_Key), and the paths kept
// apart for a ServiceID or QoS class move with the default path of the same destination.
void Resolver::Impl::note_change(const CacheEntry& e, EntryState old_state, Lid old_dlid) {
  if (!observers.path || !e.key.qos.is_default()) return;
  outbox.emplace_back(PathChange{.sgid = e.key.sgid, .dgid = e.key.dgid, .pkey = e.key.pkey,
                                 .old_state = old_state, .state = e.state, .old_dlid = old_dlid,
                                 .dlid = e.has_path() ? e.path.dlid : Lid{}});
}

bool Resolver::Impl::lids_moved_under(const CacheEntry& e) const {
  // The SLID test keeps a path the new SM already answered (before we saw our LID move) served.
  const std::optional<TimePoint> moved_at = scheduler.in_use().moved_at();
  return moved_at && e.state != EntryState::valid && e.produced < *moved_at && port &&
         e.path.slid != port->lid;
}

ResolveResult Resolver::Impl::held_fallback(const PathKey& key, Error error) {
  PathCache::Index i = cache.find(key);
  if (i == PathCache::npos || !refresh_servable(cache.at(i))) return failure(error);
  ++stats.stale_fallbacks;
  if (cache.at(i).state == EntryState::stale) ++stats.stale_hits;
  return served(cache.at(i));
}

ResolveResult Resolver::Impl::served(const CacheEntry& e) const {
  return {.error = Error::ok, .path = e.path.unpack(e.key), .state = e.state, .age = now() - e.produced,
          .origin = e.origin, .key_qos_fields = e.key.qos.fields};
}

void Resolver::Impl::resolve_gid(RequestId id, Pending&& p, const PathKey& key, bool may_hold) {
  PathCache::Index i = cache.find(key);
  if (i != PathCache::npos) {
    cache.touch(i, now(), owner_of(p.request.requester));
    CacheEntry& e = cache.at(i);
    if (!p.request.force_sa) {
      if (refresh_servable(e)) {
        // Our own LID moved, so the SM gave out new LIDs and this path carries old ones: wait for
        // its revalidation (asked now, ahead of idle entries) rather than hand out a DLID that may
        // lead to another port. The old path stays the fall-back (docs/design.md §3).
        if (may_hold && lids_moved_under(e) && !p.request.cache_only) {
          if (now() >= e.retry_after) {
            ++stats.stale_holds;
            if (!e.pinned()) ++stats.revalidations;
            p.stale_fallback = true;
            return wait_on_job(id, std::move(p), JobKey::for_path(key));
          }
          ++stats.stale_fallbacks;  // its revalidation failed just now: no fresh answer comes yet
        }
        if (e.state == EntryState::valid) ++stats.cache_hits;
        else if (e.state == EntryState::stale) ++stats.stale_hits;
        else ++stats.provisional_hits;
        ResolveResult result = served(e);
        if (e.state == EntryState::stale) start_revalidation(i);
        return deliver(id, std::move(p), result);
      }
      if (e.state == EntryState::gone) return deliver(id, std::move(p), failure(Error::unreachable));
      if (e.state == EntryState::failed && now() < e.retry_after)
        return deliver(id, std::move(p), failure(e.last_error));
    }
  }
  if (p.request.cache_only) return deliver(id, std::move(p), failure(Error::no_record));
  wait_on_job(id, std::move(p), JobKey::for_path(key));
}

void Resolver::Impl::resolve_lid(RequestId id, Pending&& p, const LidKey& key) {
  if (!p.request.force_sa) {
    if (PathCache::Index i = cache.find_by_lid(key.sgid, key.dlid, key.pkey); i != PathCache::npos) {
      PathKey gid_key = cache.at(i).key;  // the default path's: the LID named its DGID
      gid_key.qos = key.qos;
      return resolve_gid(id, std::move(p), gid_key, false);
    }
    if (auto it = lid_failures.find(key); it != lid_failures.end()) {
      if (now() < it->second.until) return deliver(id, std::move(p), failure(it->second.error));
      lid_failures.erase(it);
    }
  }
  if (p.request.cache_only) return deliver(id, std::move(p), failure(Error::no_record));
  wait_on_job(id, std::move(p), JobKey{key.sgid, Gid{}, key.dlid, key.pkey, true, key.qos});
}

void Resolver::Impl::wait_on_job(RequestId id, Pending&& p, const JobKey& key) {
  auto refuse = [&] {
    const ResolveResult r = p.stale_fallback ? held_fallback(key.path_key(), Error::overloaded) : failure(Error::overloaded);
    deliver(id, std::move(p), r);
  };
  if (pending.size() >= policy.max_pending) return refuse();
  JobId job_id = job_for(key);
  if (job_id != 0) {
    Job& job = jobs.at(job_id);
    if (job.waiters.size() >= policy.max_waiters_per_key) return refuse();
    ++stats.coalesced;
    if (job.state == JobState::table_wait) shorten_table_wait(job_id, p);
    if (job.state == JobState::queued && job.traffic == Traffic::background) {  // promoted (a late one keeps its pace)
      job.traffic = Traffic::waited;
      job.requester = p.request.requester;
      scheduler.promote(job.requester, {job_id, job.queue_seq}, *this);
    }
  } else {
    job_id = create_job(key, p.request.requester);
    if (!park_for_table(job_id, p)) enqueue(job_id, Traffic::waited);
  }
  ++stats.misses;
  jobs.at(job_id).waiters.push_back(id);
  p.job = job_id;
  add_pending(id, std::move(p));
}

void Resolver::Impl::wait_for_neighbour(RequestId id, Pending&& p, const IpAddr& ip) {
  if (pending.size() >= policy.max_pending) return deliver(id, std::move(p), failure(Error::overloaded));
  neighbour_waits[ip].push_back(id);
  p.job = 0;
  add_pending(id, std::move(p));
}

void Resolver::Impl::wait_for_port(RequestId id, Pending&& p) {
  if (pending.size() >= policy.max_pending) return deliver(id, std::move(p), failure(Error::overloaded));
  port_waits.push_back(id);
  p.job = 0;
  p.waits_for_port = true;
  add_pending(id, std::move(p));
}

void Resolver::Impl::deliver(RequestId id, Pending&& p, const ResolveResult& result) {
  if (result.error != Error::ok) {
    ++stats.failures;
    ++stats.failures_by_reason[static_cast<std::size_t>(result.error)];
  }
  auto& call = std::get<CompletionCall>(outbox.emplace_back(CompletionCall{std::move(p.done), id, result}));
  if (result.error == Error::ok && p.request.tclass) call.result.path.tclass = *p.request.tclass;
}

void Resolver::Impl::add_pending(RequestId id, Pending&& p) {
  deadlines.emplace(p.deadline, id);
  pending.emplace(id, std::move(p));
}

Pending Resolver::Impl::take_pending(RequestId id) {
  auto it = pending.find(id);
  Pending p = std::move(it->second);
  deadlines.erase({p.deadline, id});
  pending.erase(it);
  return p;
}

void Resolver::Impl::complete(RequestId id, const ResolveResult& result) {
  auto it = pending.find(id);
  if (it == pending.end()) return;
  std::vector<RequestId>* list = nullptr;
  IpAddr ip;
  const JobId job = it->second.job;
  if (it->second.waits_for_port) {
    port_waits.erase(std::find(port_waits.begin(), port_waits.end(), id));
  } else if (job != 0) {
    if (auto j = jobs.find(job); j != jobs.end()) list = &j->second.waiters;
  } else {
    ip = std::get<IpAddr>(it->second.request.target);
    if (auto w = neighbour_waits.find(ip); w != neighbour_waits.end()) list = &w->second;
  }
  const bool left_a_job = list && job != 0;
  if (list) {
    list->erase(std::find(list->begin(), list->end(), id));
    if (list->empty() && job == 0) neighbour_waits.erase(ip);
  }
  deliver(id, take_pending(id), result);
  if (left_a_job) drop_if_abandoned(job);
}

void Resolver::Impl::expire_deadlines(TimePoint t) {
  while (!deadlines.empty() && deadlines.begin()->first <= t) {
    const RequestId id = deadlines.begin()->second;
    const Pending& p = pending.find(id)->second;
    // Without a neighbour entry the IP stays unknown, and while the local port is down no query
    // can leave: both are `unreachable`, not a slow SA.
    const Error error = p.job == 0 || !port_active ? Error::unreachable : Error::timeout;
    complete(id, p.stale_fallback ? held_fallback(jobs.at(p.job).key.path_key(), error) : failure(error));
  }
}

// The scheduler says which GET goes; nothing goes until next_wakeup() when it holds them (and
// nothing while the port is down). Each one goes out through the outbox with the rest: completions,
// queries, path changes and stores, table and size queries and cancels, in the order they came.
void Resolver::Impl::settle() {
  while (port_active) {
    const std::optional<JobId> id = scheduler.next_get(now(), inflight.size(), *this);
    if (!id) break;
    Job& job = jobs.at(*id);
    job.state = JobState::in_flight;
    job.query = next_id.query++;
    inflight.emplace(job.query, *id);
    job.sent_at = now();
    ++stats.sa_queries;
    if (job.attempts > 0) ++stats.sa_retries;
    PathQuery q{.id = job.query, .sgid = job.key.sgid, .dgid = std::nullopt, .dlid = std::nullopt, .pkey = job.key.pkey,
                .service_id = job.key.qos.sent_service_id(), .qos_class = job.key.qos.sent_qos_class()};
    if (job.key.by_lid) q.dlid = job.key.dlid; else q.dgid = job.key.dgid;
    outbox.emplace_back(q);
  }
  // The outbox, in order; a callback that re-enters the Resolver appends to it (index, don't
  // iterate) and its own settle leaves the run to this one.
  if (draining) return;
  draining = true;
  for (std::size_t i = 0; i < outbox.size(); ++i) {
    Outgoing item = std::move(outbox[i]);
    if (auto* call = std::get_if<CompletionCall>(&item)) {
      if (call->done) call->done(call->id, call->result);
    } else if (auto* query = std::get_if<PathQuery>(&item)) {
      sink.send_path_query(*query);
    } else if (auto* change = std::get_if<PathChange>(&item)) {
      if (observers.path) observers.path(*change);
    } else if (auto* stored = std::get_if<PathStored>(&item)) {
      if (observers.store) observers.store(*stored);
    } else if (auto* table_query = std::get_if<TableQuery>(&item)) {
      if (sink.send_table_query(*table_query)) ++stats.sa_tables;
      else table_unsent(table_query->id);
    } else if (auto* size = std::get_if<SubnetSizeQuery>(&item)) {
      if (!sink.send_size_query(*size) && scheduler.table().asking_size(size->id)) {
        // The table goes unspread, now: this is the flush of the tick that asked the size.
        scheduler.table().on_size_result(size->id, SubnetTable::SizeOutcome::settled, 0, TimePoint{});
        send_table(scheduler.table());
      }
    } else {
      sink.cancel_query(std::get<CancelCall>(item).id);
    }
  }
  outbox.clear();
  // A burst (a table's paths stored, every waiter of a port answered) leaves no capacity behind.
  if (outbox.capacity() > kOutboxKept) std::vector<Outgoing>().swap(outbox);
  draining = false;
}

}  // namespace ibat::core

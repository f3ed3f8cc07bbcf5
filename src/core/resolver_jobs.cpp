// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Resolver jobs: one query (plus retries) per destination key, sent when the SaScheduler lets
// it go (settle, resolver.cpp), query results, backoff, negative caching and the cache-entry bookkeeping that
// goes with them.
#include <algorithm>
#include <cstring>

#include "core/resolver_impl.h"

namespace ibat::core {

std::size_t KeyHash::operator()(const JobKey& k) const noexcept {
  std::size_t h = hash_value(PathKey{k.sgid, k.dgid, k.pkey, k.qos});
  return h ^ (std::size_t{k.dlid.value} * 0x9E3779B97F4A7C15ULL) ^ (k.by_lid ? 0x51ED27 : 0);
}

std::size_t KeyHash::operator()(const LidKey& k) const noexcept {
  return hash_value(PathKey{k.sgid, Gid{}, k.pkey, k.qos}) ^ (std::size_t{k.dlid.value} * 0x9E3779B97F4A7C15ULL);
}

JobId Resolver::Impl::create_job(const JobKey& key, Requester requester) {
  JobId id = next_id.job++;
  Job job;
  job.key = key;
  job.requester = requester;
  jobs.emplace(id, std::move(job));
  job_by_key.emplace(key, id);
  if (!key.by_lid) {
    CacheEntry& e = cache.at(ensure_entry(key.path_key(), owner_of(requester)));
    e.flags |= CacheEntry::kPinned;
    // A gone entry keeps failing at once while it is re-checked (trap 64 sets resolving itself).
    if (!e.has_path() && e.state != EntryState::gone) e.state = EntryState::resolving;
  }
  return id;
}

void Resolver::Impl::destroy_job(JobId id) {
  auto it = jobs.find(id);
  const JobKey key = it->second.key;
  jobs.erase(it);
  job_by_key.erase(key);
  if (key.by_lid) return;
  PathCache::Index i = cache.find(key.path_key());
  if (i == PathCache::npos) return;
  CacheEntry& e = cache.at(i);
  e.flags &= static_cast<std::uint8_t>(~CacheEntry::kPinned);
  if (e.state == EntryState::resolving) cache.erase(i);  // nothing learnt and nobody waits
}

void Resolver::Impl::drop_if_abandoned(JobId id) {
  auto it = jobs.find(id);
  // A query in flight still goes on: its answer fills the cache (at most sa_max_inflight of them).
  if (it != jobs.end() && abandoned(it->second) && it->second.query == 0) destroy_job(id);
}

void Resolver::Impl::enqueue(JobId id, Traffic traffic, bool at_head) {
  Job& job = jobs.at(id);
  job.state = JobState::queued;
  job.traffic = traffic;
  ++job.queue_seq;
  scheduler.queue(traffic, job.requester, {id, job.queue_seq}, at_head, now(), *this);
}

void Resolver::Impl::enqueue_for_cache(const JobKey& key) {
  JobId id = create_job(key);
  jobs.at(id).for_cache = true;
  enqueue(id, Traffic::background);
}

void Resolver::Impl::start_revalidation(PathCache::Index i) {
  CacheEntry& e = cache.at(i);
  if (e.pinned() || (e.flags & CacheEntry::kScheduled) || now() < e.retry_after) return;
  ++stats.revalidations;
  enqueue_for_cache(JobKey::for_path(e.key));
}

std::optional<TimePoint> Resolver::Impl::first_deadline(JobId id) const {
  const Job& job = jobs.at(id);
  if (job.waiters.empty()) return std::nullopt;
  TimePoint deadline = TimePoint::max();
  for (RequestId w : job.waiters) deadline = std::min(deadline, pending.at(w).deadline);
  return deadline;
}

void Resolver::on_query_result(QueryId query, const QueryResult& result) {
  Impl& m = *impl_;
  // The table gate's probe: the SA's queue, not a path.
  if (auto opened = m.scheduler.on_probe_result(query, m.now(), result.error == Error::timeout)) {
    if (!*opened) m.release_table_waits_late(*m.scheduler.table_of(query));
    m.settle();
    return;
  }
  auto it = m.inflight.find(query);
  if (it == m.inflight.end()) return;  // late answer to a cancelled or flushed query
  JobId id = it->second;
  m.inflight.erase(it);
  Job& job = m.jobs.at(id);
  job.query = 0;
  m.scheduler.on_get_result(job.sent_at, m.now(), result.error == Error::timeout);  // also BUSY
  if (result.error == Error::ok) {
    const PathRecord& p = result.path;
    bool matches = job.key.by_lid ? p.dlid == job.key.dlid : p.dgid == job.key.dgid;
    if (p.is_servable() && matches) {
      m.accept(id, p);
    } else {
      ++m.stats.rejected_paths;
      m.handle_failure(id, Error::invalid);
    }
  } else {
    if (result.error == Error::timeout) ++m.stats.sa_timeouts;
    else ++m.stats.sa_errors;
    m.handle_failure(id, result.error);
  }
  m.settle();
}

void Resolver::Impl::accept(JobId id, const PathRecord& path, PathOrigin origin) {
  Job& job = jobs.at(id);
  const JobKey jkey = job.key;
  const Owner owner = owner_of(job.requester);
  std::vector<RequestId> waiters = std::move(job.waiters);
  PathKey key = jkey.by_lid ? PathKey{jkey.sgid, path.dgid, jkey.pkey, jkey.qos} : jkey.path_key();
  if (jkey.by_lid) destroy_job(id);

  PathCache::Index i = ensure_entry(key, owner);
  store_path(i, path, origin);
  if (!waiters.empty()) cache.touch(i, now(), owner);
  ResolveResult result = served(cache.at(i));
  if (!jkey.by_lid) destroy_job(id);
  for (RequestId w : waiters) deliver(w, take_pending(w), result);
}

void Resolver::Impl::store_path(PathCache::Index i, const PathRecord& path, PathOrigin origin) {
  CacheEntry& e = cache.at(i);
  const bool had_path = e.has_path();
  const EntryState old_state = e.state;
  const Lid old_dlid = e.path.dlid;
  cache.unindex_lid(i);
  e.path = CompactPath::pack(path);
  e.state = EntryState::valid;
  e.produced = now();
  e.origin = origin;
  e.retry_after = TimePoint{};
  e.last_error = Error::ok;
  e.flags &= static_cast<std::uint8_t>(~CacheEntry::kScheduled);
  cache.index_lid(i);
  if (had_path && (old_dlid != path.dlid || old_state == EntryState::provisional)) note_change(e, old_state, old_dlid);
  lid_failures.erase(LidKey{e.key.sgid, path.dlid, e.key.pkey, e.key.qos});
  if (observers.store && e.key.qos.is_default()) outbox.emplace_back(PathStored{e.key.sgid, e.key.dgid, e.key.pkey, path, e.produced});
}

void Resolver::Impl::handle_failure(JobId id, Error error) {
  Job& job = jobs.at(id);
  if (abandoned(job)) return destroy_job(id);  // nobody waits: no retry, nothing learnt
  if (!port_active) {  // not the destination's fault: ask again once the port is back
    enqueue(id, job.waited_or_background());
    return;
  }
  if (error != Error::no_record && job.attempts < policy.retry_count) {
    ++job.attempts;
    job.state = JobState::backoff;
    job.retry_at = now() + backoff_delay(policy, job.attempts, prng);
    scheduler.retry_at(job.retry_at, id);
    return;
  }
  give_up(id, error);
}

void Resolver::Impl::give_up(JobId id, Error error) {
  Job& job = jobs.at(id);
  const JobKey key = job.key;
  std::vector<RequestId> waiters = std::move(job.waiters);
  TimePoint until = now() + policy.negative_ttl;
  if (key.by_lid) {
    remember_lid_failure(LidKey{key.sgid, key.dlid, key.pkey, key.qos}, until, error);
  } else if (PathCache::Index i = cache.find(key.path_key()); i != PathCache::npos) {
    CacheEntry& e = cache.at(i);
    // A destination we had a path to that the SA no longer knows has left the fabric (link
    // down, host off): that is `unreachable` for clients, as trap 65 would have said.
    const bool vanished = error == Error::no_record && (e.has_path() || e.state == EntryState::gone);
    if (vanished) error = Error::unreachable;
    e.last_error = error;
    e.retry_after = until;
    // A last good path stays served (SM away, lossy link) unless the SA says it has no path;
    // a gone destination stays gone until it answers or trap 64 arrives.
    if (e.state != EntryState::gone && (!e.has_path() || vanished)) {
      const EntryState old_state = e.state;
      cache.unindex_lid(i);
      e.state = EntryState::failed;
      if (vanished) note_change(e, old_state, e.path.dlid);
    }
  }
  destroy_job(id);
  for (RequestId w : waiters) {
    Pending p = take_pending(w);
    const ResolveResult result = p.stale_fallback ? held_fallback(key.path_key(), error) : failure(error);
    deliver(w, std::move(p), result);
  }
}

// Bounded by the cache capacity: expired failures are swept first; if the table is still full
// the failure is not remembered (the next request for it asks the SA again, at sa_rate).
void Resolver::Impl::remember_lid_failure(const LidKey& key, TimePoint until, Error error) {
  if (lid_failures.size() >= policy.capacity && !lid_failures.contains(key)) {
    const TimePoint t = now();
    std::erase_if(lid_failures, [t](const auto& item) { return item.second.until <= t; });
    if (lid_failures.size() >= policy.capacity) return;
  }
  lid_failures[key] = {until, error};
}

void Resolver::Impl::release_retries(TimePoint t) {
  while (const auto due = scheduler.due_retry(t)) {
    const auto [at, id] = *due;
    auto it = jobs.find(id);
    if (it == jobs.end() || it->second.retry_at != at) continue;
    const JobState state = it->second.state;
    if (state != JobState::backoff && state != JobState::table_wait) continue;
    if (state == JobState::table_wait) {
      enqueue_late(id);
      continue;
    }
    const bool late = it->second.traffic == Traffic::late && awaiting_table();
    enqueue(id, late ? Traffic::late : it->second.waited_or_background(), true);
  }
}

void Resolver::Impl::ask_revalidation(const PathKey& key, CacheEntry& e) {
  e.retry_after = TimePoint{};
  ++stats.revalidations;
  enqueue_for_cache(JobKey::for_path(key));
}

// After our LIDs moved, the paths in use carry old LIDs and are held on use. Those a request
// asks for go by GET at once (wait_on_job); the rest are set aside here, most recently used
// first, and asked by GET at this host's place in the subnet's window for them, ahead of the
// GetTable that renews the rest (core/in_use_window.h). Entries no request used (a table's, a
// snapshot's) sit anywhere in the schedule and are passed over; the used ones are in order of
// use, so the first used a minute ago ends the walk.
void Resolver::Impl::set_aside_in_use(TimePoint t) {
  scheduler.set_aside_done();
  std::deque<PathKey> kept;  // the walked entries that need no GET now, in order
  std::size_t moved = 0;
  while (!revalidation_schedule.empty()) {
    const PathKey key = revalidation_schedule.front();
    PathCache::Index i = cache.find(key);
    if (i != PathCache::npos && (cache.at(i).flags & CacheEntry::kScheduled)) {
      CacheEntry& e = cache.at(i);
      const bool used = e.flags & CacheEntry::kUsed;
      if (used && t - e.used >= InUseWindow::kInUse) break;
      if (!used || !lids_moved_under(e)) {
        kept.push_back(key);
      } else {
        ++moved;
        e.flags &= static_cast<std::uint8_t>(~CacheEntry::kScheduled);
        in_use_aside.push_back(key);
      }
    }
    revalidation_schedule.pop_front();
  }
  revalidation_schedule.insert(revalidation_schedule.begin(), kept.begin(), kept.end());
  scheduler.in_use().found_in_use(moved);
}

// The paths set aside go by GET at this host's place in the window, or at once when no table
// is awaited any more (it failed, or was dropped).
void Resolver::Impl::release_in_use(TimePoint t) {
  if (in_use_aside.empty() || !scheduler.in_use_release_due(t)) return;
  for (const PathKey& key : in_use_aside) {
    PathCache::Index i = cache.find(key);
    if (i == PathCache::npos) continue;
    CacheEntry& e = cache.at(i);
    if (e.pinned() || !lids_moved_under(e)) continue;  // a request's GET has it, or it is renewed
    ask_revalidation(key, e);
  }
  in_use_aside.clear();
}

void Resolver::Impl::release_revalidations(TimePoint t) {
  if (scheduler.set_aside_due()) set_aside_in_use(t);
  release_in_use(t);
  // None while a GetTable is awaited: it may answer them all.
  while (!revalidation_schedule.empty() && scheduler.revalidation_due(t)) {
    PathKey key = revalidation_schedule.front();
    revalidation_schedule.pop_front();
    PathCache::Index i = cache.find(key);
    if (i == PathCache::npos) continue;
    CacheEntry& e = cache.at(i);
    if (!(e.flags & CacheEntry::kScheduled)) continue;
    e.flags &= static_cast<std::uint8_t>(~CacheEntry::kScheduled);
    bool needs_answer = e.state == EntryState::stale || e.state == EntryState::gone ||
                        e.state == EntryState::provisional;
    if (e.pinned() || !needs_answer) continue;
    ask_revalidation(key, e);
    scheduler.revalidation_asked(prng);
  }
}

void Resolver::Impl::restart_or_drop_job(JobId id) {
  Job& job = jobs.at(id);
  if (job.query != 0) {
    outbox.emplace_back(CancelCall{job.query});
    inflight.erase(job.query);
    job.query = 0;
  }
  job.attempts = 0;
  if (job.waiters.empty()) destroy_job(id);
  else enqueue(id, Traffic::waited);
}

void Resolver::Impl::requeue_inflight() {
  std::vector<JobId> requeue;
  for (const auto& [query, id] : inflight) {
    outbox.emplace_back(CancelCall{query});
    jobs.at(id).query = 0;
    requeue.push_back(id);
  }
  inflight.clear();
  for (JobId id : requeue) {
    if (abandoned(jobs.at(id))) destroy_job(id);
    else enqueue(id, jobs.at(id).waited_or_background());
  }
}

PathCache::Index Resolver::Impl::ensure_entry(const PathKey& key, Owner owner) {
  PathCache::Index i = cache.find(key);
  if (i != PathCache::npos) return i;
  make_room(owner);
  return cache.insert(key, now(), owner);
}

void Resolver::Impl::make_room(Owner asking) {
  std::size_t passed = 0;
  while (cache.size() >= policy.capacity) {
    PathCache::Index victim = cache.lru_victim();
    if (victim == PathCache::npos) return;  // everything is busy: exceed capacity for now
    if (shielded_from(cache.at(victim), asking)) {
      if (++passed > kPassOverBudget) return;
      cache.pass_over(victim);
      continue;
    }
    ++stats.evictions;
    cache.erase(victim);
  }
}

// Each requester holding entries, `asking` counted too, may keep capacity / their number of the
// entries it uses; what it holds beyond that, or no longer uses, is anyone's to push out.
bool Resolver::Impl::shielded_from(const CacheEntry& e, Owner asking) const {
  if (e.owner == asking || !(e.flags & CacheEntry::kUsed) || now() - e.used >= InUseWindow::kInUse) return false;
  const std::size_t holders = cache.owners() + (cache.held_by(asking) == 0 ? 1 : 0);
  return cache.held_by(e.owner) <= policy.capacity / holders;
}

}  // namespace ibat::core

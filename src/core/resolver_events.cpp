// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Resolver events: local port (LID change, down/up), SM change, traps 64/65, broadcast-group
// parameters, neighbour updates (with provisional paths), flush, snapshot load and the views.
#include <algorithm>

#include "core/resolver_impl.h"

namespace ibat::core {

void Resolver::Impl::schedule_revalidation_all() {
  revalidation_schedule.clear();
  in_use_aside.clear();  // back in the schedule below
  TimePoint t = now();
  cache.for_each([&](PathCache::Index i) {  // most recently used first
    CacheEntry& e = cache.at(i);
    e.flags &= static_cast<std::uint8_t>(~CacheEntry::kScheduled);
    if (e.state == EntryState::valid) e.state = EntryState::stale;
    if (e.state == EntryState::failed || e.has_path()) e.retry_after = t;  // the new SM may know better
    if (e.state == EntryState::stale || e.state == EntryState::gone || e.state == EntryState::provisional) {
      e.flags |= CacheEntry::kScheduled;
      revalidation_schedule.push_back(e.key);
    }
  });
  scheduler.start_revalidations(t, prng);
  scheduler.set_aside_in_use_first(scheduler.in_use().moved_at().has_value());
}

// Queries waiting out their backoff failed against the SM that is gone (or the SA in its first
// sweep): they go again now, from a fresh count, as an entry's retry_after is cleared. Those of a
// path in use after a LID move would otherwise wait up to retry_max past the new SM's SUBNET UP
// (and the pacer's window, cut by the same losses, restarts: SaPacer::restart).
void Resolver::Impl::retry_now() {
  const TimePoint t = now();
  for (auto& [id, job] : jobs) {
    if (job.state != JobState::backoff) continue;  // a parked job waits for the new SM's table
    job.attempts = 0;
    job.retry_at = t;
    scheduler.retry_at(t, id);
  }
}

void Resolver::on_sm_changed() {
  Impl& m = *impl_;
  ++m.stats.sm_changes;
  m.scheduler.on_sm_changed(m.now());
  m.retry_now();
  m.schedule_revalidation_all();
  m.want_table();
  m.settle();
}

void Resolver::on_local_port(const LocalPort& port) {
  Impl& m = *impl_;
  std::optional<LocalPort> old = m.port;
  m.port = port;
  if (!port.active) {
    if (m.port_active) m.requeue_inflight();
    bool in_flight = false;  // a table's answer would be lost: asked again once up
    m.scheduler.for_each_table([&](const SubnetTable& t) { in_flight |= t.state() == TableState::in_flight; });
    if (in_flight) m.want_table();
    m.port_active = false;
    m.settle();
    return;
  }
  bool came_up = !m.port_active;
  m.port_active = true;
  // Requests that arrived before the port was known go on as ordinary requests, keeping their deadlines.
  std::vector<RequestId> waiters = std::move(m.port_waits);
  m.port_waits.clear();
  for (RequestId id : waiters) {
    Pending p = m.take_pending(id);
    p.waits_for_port = false;
    m.dispatch(id, std::move(p));
  }
  bool lid_changed = old && old->lid != port.lid;
  if (lid_changed) {
    ++m.stats.lid_changes;
    // Paths from before carry old LIDs: held on use (docs/design.md §3).
    m.scheduler.in_use().on_lids_moved(m.now(), m.prng.uniform01());
    m.requeue_inflight();       // their answers would too: ask again
  }
  // Paths carry our SLID, and the fabric may have changed while the port was down.
  if (old && (came_up || lid_changed)) m.schedule_revalidation_all();
  if (!old || came_up || lid_changed) m.want_table();
  m.settle();
}

void Resolver::on_gid_out_of_service(const Gid& gid) {
  Impl& m = *impl_;
  std::vector<PathCache::Index> hit;
  m.cache.for_each([&](PathCache::Index i) {
    if (m.cache.at(i).key.dgid == gid) hit.push_back(i);
  });
  for (PathCache::Index i : hit) {
    CacheEntry& e = m.cache.at(i);
    const EntryState old_state = e.state;
    const bool had_path = e.has_path();
    e.state = EntryState::gone;
    e.last_error = Error::unreachable;
    if (had_path) m.note_change(e, old_state, e.path.dlid);
    if (!e.pinned()) continue;
    JobId id = m.job_for(JobKey::for_path(e.key));
    Job& job = m.jobs.at(id);
    std::vector<RequestId> waiters = std::move(job.waiters);
    if (job.query != 0) {
      m.outbox.emplace_back(CancelCall{job.query});
      m.inflight.erase(job.query);
    }
    m.destroy_job(id);
    for (RequestId w : waiters) m.deliver(w, m.take_pending(w), failure(Error::unreachable));
  }
  m.settle();
}

void Resolver::on_gid_in_service(const Gid& gid) {
  Impl& m = *impl_;
  std::vector<PathCache::Index> hit;
  m.cache.for_each([&](PathCache::Index i) {
    const CacheEntry& e = m.cache.at(i);
    if (e.key.dgid == gid && !e.pinned()) hit.push_back(i);
  });
  for (PathCache::Index i : hit) {
    CacheEntry& e = m.cache.at(i);
    e.state = e.has_path() ? EntryState::stale : EntryState::resolving;
    e.flags &= static_cast<std::uint8_t>(~CacheEntry::kScheduled);
    e.retry_after = TimePoint{};
    ++m.stats.revalidations;
    m.enqueue_for_cache(JobKey::for_path(e.key));
  }
  m.settle();
}

void Resolver::on_broadcast_params(const BroadcastParams& params) { impl_->broadcast = params; }

void Resolver::set_path_observer(PathObserver observer) { impl_->observers.path = std::move(observer); }

void Resolver::set_store_observer(StoreObserver observer) { impl_->observers.store = std::move(observer); }

void Resolver::use_request_ids_from(RequestId first) { impl_->next_id.request = first; }

std::optional<PathRecord> Resolver::Impl::provisional_path(const PathKey& key, Lid source_lid) const {
  if (!broadcast || !port) return std::nullopt;
  PathRecord p;
  p.dgid = key.dgid;
  p.sgid = key.sgid;
  p.dlid = source_lid;
  p.slid = port->lid;
  p.pkey = key.pkey;
  p.reversible = true;
  p.numb_path = 1;
  p.sl = broadcast->sl;
  p.mtu_selector = 2;  // exactly
  p.mtu = broadcast->mtu;
  p.rate_selector = 2;
  p.rate = broadcast->rate;
  p.pkt_life_selector = 2;
  p.pkt_life = broadcast->pkt_life;
  if (!p.is_servable()) return std::nullopt;
  return p;
}

void Resolver::on_neighbour(const IpAddr& ip, const HwAddr& hw, std::optional<Lid> source_lid) {
  Impl& m = *impl_;
  NeighbourTable::Update update = m.neighbours.upsert(ip, hw, source_lid);
  Gid gid = hw.gid();
  if (m.port && !m.port->gid.is_zero() && !gid.is_zero()) {
    PathKey key{m.port->gid, gid, m.policy.default_pkey, QosKey{}};
    PathCache::Index i = m.cache.find(key);
    if (i == PathCache::npos || !m.cache.at(i).has_path()) {
      if (auto path = source_lid ? m.provisional_path(key, *source_lid) : std::nullopt) {
        i = m.ensure_entry(key);
        CacheEntry& e = m.cache.at(i);
        e.path = CompactPath::pack(*path);
        e.state = EntryState::provisional;
        e.produced = m.now();
        e.origin = PathOrigin::neighbour;
      }
    }
    // Keep the cache in step with the network stack: ask the SA about a destination ARP
    // reveals (a new IP, a GID change) that has no valid answer yet. A plain refresh of a known
    // IP asks only if nothing is cached; a stale entry is revalidated when it is next used.
    const CacheEntry* e = i == PathCache::npos ? nullptr : &m.cache.at(i);
    bool news = update.added || update.previous_gid.has_value();
    bool negative = e && e->state == EntryState::failed && m.now() < e->retry_after;
    if (!e || (news && !e->pinned() && e->state != EntryState::valid && !negative)) {
      if (e && e->state == EntryState::stale) ++m.stats.revalidations;
      m.enqueue_for_cache(JobKey::for_path(key));
    }
  }
  // Requests that waited for this IP go on as ordinary requests, keeping their deadlines.
  if (auto w = m.neighbour_waits.find(ip); w != m.neighbour_waits.end()) {
    std::vector<RequestId> waiters = std::move(w->second);
    m.neighbour_waits.erase(w);
    for (RequestId id : waiters) {
      m.dispatch(id, m.take_pending(id));
    }
  }
  m.settle();
}

bool Resolver::on_neighbour_removed(const IpAddr& ip) { return impl_->neighbours.remove(ip); }

bool Resolver::knows_neighbour(const IpAddr& ip) const { return impl_->neighbours.find(ip) != nullptr; }

// Drops the matching entries. A query in flight is cancelled; its waiters are not dropped but
// wait for a fresh query.
std::size_t Resolver::Impl::flush_matching(const std::function<bool(const PathKey&)>& match) {
  std::vector<PathKey> keys;
  cache.for_each([&](PathCache::Index i) {
    if (match(cache.at(i).key)) keys.push_back(cache.at(i).key);
  });
  for (const PathKey& key : keys) {
    PathCache::Index i = cache.find(key);
    cache.unindex_lid(i);
    if (cache.at(i).pinned()) {
      JobId id = job_for(JobKey::for_path(key));
      if (!jobs.at(id).waiters.empty()) {
        CacheEntry& e = cache.at(i);
        e.state = EntryState::resolving;
        e.last_error = Error::ok;
        e.flags &= static_cast<std::uint8_t>(~CacheEntry::kScheduled);
        restart_or_drop_job(id);
        continue;
      }
      restart_or_drop_job(id);  // no waiters: the job goes away
      i = cache.find(key);
      if (i == PathCache::npos) continue;
    }
    cache.erase(i);
  }
  for (auto it = lid_failures.begin(); it != lid_failures.end();)
    it = match(PathKey{it->first.sgid, Gid{}, it->first.pkey, it->first.qos}) ? lid_failures.erase(it) : std::next(it);
  return keys.size();
}

std::size_t Resolver::flush_all() {
  Impl& m = *impl_;
  std::size_t dropped = m.flush_matching([](const PathKey&) { return true; });
  std::vector<JobId> lid_jobs;
  for (const auto& [id, job] : m.jobs)
    if (job.key.by_lid) lid_jobs.push_back(id);
  for (JobId id : lid_jobs) m.restart_or_drop_job(id);
  m.lid_failures.clear();
  m.revalidation_schedule.clear();
  m.in_use_aside.clear();
  m.settle();
  return dropped;
}

std::size_t Resolver::flush(const Gid& dgid, std::optional<Pkey> pkey) {
  Impl& m = *impl_;
  std::size_t dropped =
      m.flush_matching([&](const PathKey& k) { return k.dgid == dgid && (!pkey || k.pkey == *pkey); });
  m.settle();
  return dropped;
}

void Resolver::load_stale(const std::vector<CacheEntryView>& views) {
  Impl& m = *impl_;
  std::vector<const CacheEntryView*> usable;
  for (const CacheEntryView& v : views) {
    bool had_path = v.state == EntryState::valid || v.state == EntryState::stale ||
                    v.state == EntryState::provisional;
    if (had_path && v.path.is_servable() && v.path.dgid == v.dgid && v.pkey.is_valid())
      usable.push_back(&v);
  }
  // Least recently used first, so that the LRU order of the snapshot is rebuilt.
  std::stable_sort(usable.begin(), usable.end(), [](auto* a, auto* b) { return a->idle > b->idle; });
  TimePoint t = m.now();
  std::vector<PathKey> loaded;
  for (const CacheEntryView* v : usable) {
    PathKey key{v->sgid, v->dgid, v->pkey, v->qos};
    if (m.cache.find(key) != PathCache::npos) continue;
    PathCache::Index i = m.ensure_entry(key);
    CacheEntry& e = m.cache.at(i);
    e.path = CompactPath::pack(v->path);
    e.state = EntryState::stale;
    e.produced = t - std::max(v->age, Duration::zero());
    e.origin = PathOrigin::warm_cache;
    e.used = t - std::max(v->idle, Duration::zero());
    e.flags |= CacheEntry::kScheduled;
    m.cache.index_lid(i);
    loaded.push_back(key);
  }
  m.scheduler.table().learn_size(usable.size());
  if (m.revalidation_schedule.empty()) m.scheduler.start_revalidations(t, m.prng);
  m.revalidation_schedule.insert(m.revalidation_schedule.end(), loaded.rbegin(), loaded.rend());
  m.settle();
}

CacheEntryView Resolver::Impl::view_of(const CacheEntry& e, TimePoint t) const {
  CacheEntryView v{.sgid = e.key.sgid, .dgid = e.key.dgid, .pkey = e.key.pkey, .qos = e.key.qos, .state = e.state,
                   .path = {}, .age = {}, .idle = t - e.used, .last_error = e.last_error,
                   .origin = e.has_path() ? e.origin : PathOrigin::unknown};
  if (e.has_path()) {
    v.path = e.path.unpack(e.key);
    v.age = t - e.produced;
    if (e.state == EntryState::valid && v.age >= policy.path_ttl) v.state = EntryState::stale;
  }
  return v;
}

std::vector<CacheEntryView> Resolver::entries() const {
  const Impl& m = *impl_;
  std::vector<CacheEntryView> out;
  out.reserve(m.cache.size());
  TimePoint t = m.now();
  m.cache.for_each([&](PathCache::Index i) { out.push_back(m.view_of(m.cache.at(i), t)); });
  return out;
}

Resolver::EntryPage Resolver::entries_page(std::uint32_t cursor, std::size_t limit) const {
  const Impl& m = *impl_;
  EntryPage page;
  TimePoint t = m.now();
  PathCache::Index i = cursor;
  for (; i < m.cache.slot_count() && page.entries.size() < limit; ++i)
    if (m.cache.holds(i)) page.entries.push_back(m.view_of(m.cache.at(i), t));
  if (i < m.cache.slot_count()) page.next = i;
  return page;
}

std::vector<Resolver::NeighbourView> Resolver::neighbours() const {
  std::vector<NeighbourView> out;
  impl_->neighbours.for_each([&](const IpAddr& ip, const Neighbour& n) {
    out.push_back({ip, n.hw, n.source_lid});
  });
  return out;
}

}  // namespace ibat::core

// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// Private state of the Resolver, shared by resolver*.cpp (not part of the public API).
// Requests wait on Jobs; a Job is the one query (with its retries) for one destination key.
// Completions, outgoing queries and query cancels are collected in an outbox and delivered only
// once the state is consistent, so callbacks may re-enter the Resolver safely.
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "core/backoff.h"
#include "core/fair_queue.h"
#include "core/neighbour_table.h"
#include "core/path_cache.h"
#include "core/resolver.h"
#include "core/sa_scheduler.h"

namespace ibat::core {

using JobId = std::uint64_t;

// Destination of one query: by DGID (cache key) or by DLID (key learnt from the answer).
struct JobKey {
  Gid sgid;
  Gid dgid;
  Lid dlid;
  Pkey pkey;
  bool by_lid = false;
  QosKey qos;
  bool operator==(const JobKey&) const = default;

  static JobKey for_path(const PathKey& k) { return {k.sgid, k.dgid, Lid{}, k.pkey, false, k.qos}; }
  PathKey path_key() const { return {sgid, dgid, pkey, qos}; }
};

struct LidKey {
  Gid sgid;
  Lid dlid;
  Pkey pkey;
  QosKey qos;
  bool operator==(const LidKey&) const = default;
};

struct KeyHash {
  std::size_t operator()(const JobKey& k) const noexcept;
  std::size_t operator()(const LidKey& k) const noexcept;
};

// Where a Job is: it moves queued -> in_flight -> (answered: gone) or backoff -> queued again.
// A parked job (table_wait) is queued when the awaited GetTable answers without its path, or at
// retry_at (its waiters' deadlines less the reserve for a GET).
enum class JobState : std::uint8_t {
  queued,      // in the send queue of its traffic (create_job's callers queue or park it at once)
  in_flight,   // its query is out: `query`
  backoff,     // its last query failed: queued again at retry_at
  table_wait,  // parked until the awaited GetTable answers, at most until retry_at
};

struct Job {
  JobKey key;
  std::vector<RequestId> waiters;
  QueryId query = 0;            // in flight, 0 if none
  std::uint32_t attempts = 0;   // failed attempts so far
  std::uint64_t queue_seq = 0;  // send-queue entries with another seq are outdated
  JobState state = JobState::queued;
  // The queue it was last put in; a late job stays late through its retries while the table is
  // awaited (release_retries).
  Traffic traffic = Traffic::waited;
  bool for_cache = false;       // revalidation or prefetch: wanted even without waiters
  Requester requester;          // whose turn a waited GET of it takes: the waiter that made it waited
  TimePoint retry_at{};
  TimePoint sent_at{};          // of the query in flight

  // The queue its GET joins outside a wait for the table: waited while a request waits on it.
  Traffic waited_or_background() const { return waiters.empty() ? Traffic::background : Traffic::waited; }
};

struct Pending {
  Completion done;
  TimePoint deadline;
  JobId job = 0;  // 0: waiting for a neighbour entry of the request's IP, or for the local port
  ResolveRequest request;
  bool waits_for_port = false;  // no source GID yet: waiting for the first local port report
  bool stale_fallback = false;  // held on a stale entry whose LIDs moved: its path if no fresh one
};

struct CompletionCall {
  Completion done;
  RequestId id;
  ResolveResult result;
};
struct CancelCall {
  QueryId id;
};
using Outgoing =
    std::variant<CompletionCall, PathQuery, CancelCall, PathChange, TableQuery, PathStored, SubnetSizeQuery>;

inline ResolveResult failure(Error error) {
  ResolveResult r;
  r.error = error;
  return r;
}

struct Resolver::Impl final : SaScheduler::Jobs {
  Impl(const Policy& p, const Clock& c, QuerySink& s, std::uint64_t seed);

  // resolver.cpp: requests.
  void dispatch(RequestId id, Pending&& p);
  // may_hold: false for a resolve by LID, whose answer must carry the DLID it asked for.
  void resolve_gid(RequestId id, Pending&& p, const PathKey& key, bool may_hold = true);
  void resolve_lid(RequestId id, Pending&& p, const LidKey& key);
  void wait_on_job(RequestId id, Pending&& p, const JobKey& key);
  void wait_for_neighbour(RequestId id, Pending&& p, const IpAddr& ip);
  void wait_for_port(RequestId id, Pending&& p);
  void deliver(RequestId id, Pending&& p, const ResolveResult& result);
  void add_pending(RequestId id, Pending&& p);  // with its deadline
  Pending take_pending(RequestId id);  // a pending request, with its deadline
  void complete(RequestId id, const ResolveResult& result);  // detaches from its wait list
  void expire_deadlines(TimePoint now);
  ResolveResult served(const CacheEntry& e) const;
  void note_change(const CacheEntry& e, EntryState old_state, Lid old_dlid);  // for the path observer
  CacheEntryView view_of(const CacheEntry& e, TimePoint now) const;
  bool refresh_servable(CacheEntry& e);  // valid -> stale after TTL; can it be served now?
  bool lids_moved_under(const CacheEntry& e) const;  // its path predates our own LID's move
  // For a request held on a stale entry (stale_fallback) that gets no fresh answer: the entry's
  // last path, or `error` if it has none left (gone, no record).
  ResolveResult held_fallback(const PathKey& key, Error error);
  // The end of every input: the GETs the scheduler lets go into the outbox, then the outbox run in order.
  void settle();

  // resolver_jobs.cpp: jobs, queries, results.
  JobId create_job(const JobKey& key, Requester requester = std::nullopt);
  void destroy_job(JobId id);
  bool abandoned(const Job& job) const { return job.waiters.empty() && !job.for_cache; }
  void drop_if_abandoned(JobId id);  // a query nobody waits for any more is not sent
  // at_head: a retry goes ahead of its queue, where it was when it was sent (its waiters have
  // waited longest); anything else joins the back.
  void enqueue(JobId id, Traffic traffic, bool at_head = false);
  void enqueue_for_cache(const JobKey& key);  // a background job (revalidation, prefetch)
  // A send-queue item is live while its job is queued under that item's seq (not re-queued since).
  bool live(JobId id, std::uint64_t seq) const {
    auto it = jobs.find(id);
    return it != jobs.end() && it->second.state == JobState::queued && it->second.queue_seq == seq;
  }
  // What the scheduler asks of the jobs (SaScheduler::Jobs).
  bool live(const SaScheduler::Item& item) const override { return live(item.first, item.second); }
  std::optional<TimePoint> first_deadline(JobId id) const override;
  std::size_t count() const override { return jobs.size(); }
  void remember_lid_failure(const LidKey& key, TimePoint until, Error error);
  void start_revalidation(PathCache::Index i);
  void accept(JobId id, const PathRecord& path, PathOrigin origin = PathOrigin::sa_get);
  // Valid now, from `origin`; reports a moved DLID.
  void store_path(PathCache::Index i, const PathRecord& path, PathOrigin origin = PathOrigin::sa_get);
  void handle_failure(JobId id, Error error);
  void give_up(JobId id, Error error);
  void release_retries(TimePoint now);
  void retry_now();  // an SM change: the queries waiting out a backoff go at the next tick
  void release_revalidations(TimePoint now);
  void set_aside_in_use(TimePoint now);  // LIDs moved: the paths in use out of the schedule
  void release_in_use(TimePoint now);    // ... and by GET at their time, ahead of the table
  void ask_revalidation(const PathKey& key, CacheEntry& e);  // a background GET for a cached path
  void restart_or_drop_job(JobId id);  // flush: the answer in flight is no longer wanted
  void requeue_inflight();             // port down: queries wait for the port to come back
  PathCache::Index ensure_entry(const PathKey& key, Owner owner = kNoOwner);
  // Room for one more entry of `asking` within the capacity (docs/design.md §3 item 5): the least
  // recently used entry goes unless another requester is using it (within InUseWindow::kInUse)
  // and holds no more than its share of the capacity; such an entry is passed over. After
  // kPassOverBudget passed over, or with every entry pinned, the cache goes over capacity for now.
  void make_room(Owner asking = kNoOwner);
  bool shielded_from(const CacheEntry& e, Owner asking) const;

  // resolver_tables.cpp: the subnet's paths in one GetTable (Policy::prefetch), and a QoS class's in one more.
  void want_table();       // after start, SM change, own LID change, port up: the next GetTables
  void send_table();       // the wanted GetTables, once the port can send
  void send_table(SubnetTable& table);
  void drop_table();       // forget the wanted or in-flight GetTables (port down, prefetch off)
  void table_unsent(QueryId id);     // the sink sends no tables: GETs, as without prefetch
  void table_failed(const SubnetTable& table);  // the revalidation schedule goes on by GETs
  // No table comes (`table`; nullptr: none at all): the GET revalidation schedule goes on now and
  // the jobs parked for it go by GET.
  void resume_revalidations(const SubnetTable* table);
  // A new job whose waiters can wait for its awaited GetTable is parked until it answers, at
  // most until kTableWaitReserve before the waiter's deadline; false: it goes by GET now.
  bool park_for_table(JobId id, const Pending& p);
  void enqueue_late(JobId id) { enqueue(id, Traffic::late); }  // its wait for the table is over
  void shorten_table_wait(JobId id, const Pending& p);  // a waiter with an earlier deadline joined
  bool waits_for(const Job& job, const SubnetTable* table);  // parked for `table` (nullptr: any)
  // The table answered or none comes (nullptr: none of them): its parked jobs go by GET.
  void release_table_waits(const SubnetTable* table);
  void release_table_waits_late(const SubnetTable& table);  // a probe found the SA's queue long
  void apply_table(const SubnetTable& table, const std::vector<PathRecord>& paths);
  void cancel(const std::vector<QueryId>& queries);  // the table's, through the outbox
  // An in-use window needs the subnet's size: a table of a subnet of unknown size asks it first.
  bool window_needs_size() const { return policy.in_use_window_paths_per_s > 0; }
  // Only the default paths' table asks the size; a QoS class's waits as long after a LID move.
  bool table_needs_size(const SubnetTable& table) const { return &table == &scheduler.table() && window_needs_size(); }
  // While a GetTable is wanted or in flight, the GET revalidation schedule waits for it.
  bool awaiting_table() const { return scheduler.tables_awaited(); }
  bool port_usable() const { return port && port_active && !port->gid.is_zero(); }
  std::optional<TimePoint> table_wakeup() const;  // when send_table has something to do

  // resolver_events.cpp: fabric events, flush, snapshot.
  void schedule_revalidation_all();
  std::size_t flush_matching(const std::function<bool(const PathKey&)>& match);  // entries dropped
  std::optional<PathRecord> provisional_path(const PathKey& key, Lid source_lid) const;

  TimePoint now() const { return clock.now(); }
  JobId job_for(const JobKey& key) const {
    auto it = job_by_key.find(key);
    return it == job_by_key.end() ? 0 : it->second;
  }

  Policy policy;
  const Clock& clock;
  QuerySink& sink;
  Prng prng;
  PathCache cache;
  NeighbourTable neighbours;
  SaScheduler scheduler;  // what goes to the SA and when: the GETs' queues, the GetTable, the in-use window
  std::optional<LocalPort> port;  // unknown until the first on_local_port (then assumed usable)
  bool port_active = true;
  std::optional<BroadcastParams> broadcast;
  struct Observers {  // the owner's, set once (Resolver::set_path_observer, set_store_observer)
    PathObserver path;
    StoreObserver store;
  } observers;
  Stats stats;

  std::unordered_map<RequestId, Pending> pending;
  std::unordered_map<IpAddr, std::vector<RequestId>> neighbour_waits;
  std::vector<RequestId> port_waits;  // requests that arrived before the local port was known
  std::unordered_map<JobId, Job> jobs;
  std::unordered_map<JobKey, JobId, KeyHash> job_by_key;
  std::unordered_map<QueryId, JobId> inflight;
  struct LidFailure {
    TimePoint until;
    Error error;
  };
  std::unordered_map<LidKey, LidFailure, KeyHash> lid_failures;

  using Timed = std::pair<TimePoint, std::uint64_t>;
  std::set<Timed> deadlines;  // (deadline, RequestId) of every pending request, and nothing else
  // The cached paths to renew by GET after an SM change or a LID move, most recently used first, at
  // the scheduler's pace; after a LID move, those in use are set aside to go at their time.
  std::deque<PathKey> revalidation_schedule;
  std::deque<PathKey> in_use_aside;  // those not yet asked (release_in_use)
  // Entries one make_room() passes over (moved to the recent end) before it gives up: a miss's cost
  // stays bounded, and the next call goes on where this one stopped.
  static constexpr std::size_t kPassOverBudget = 64;
  std::vector<Outgoing> outbox;
  // The outbox keeps room for this many items between flushes (a burst's, one item a path of a
  // table, would stay allocated for the Resolver's life: a host's whole subnet, for every port).
  static constexpr std::size_t kOutboxKept = 64;
  bool draining = false;
  struct NextIds {  // each counts from 1: 0 means none
    RequestId request = 1;
    QueryId query = 1;
    JobId job = 1;
  } next_id;
};

}  // namespace ibat::core

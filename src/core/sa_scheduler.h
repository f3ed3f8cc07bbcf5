// SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
// One port's SA scheduler (docs/design.md, "Admission of a port's SA traffic, as states"): every
// SA transaction the port's Resolver sends is decided here. It holds the GETs' send queues (waited,
// late, background), the times a job's GET may be queued again (its backoff, the end of its wait
// for the table), the pace of the renewals of cached paths (revalidations), the subnet's GetTable
// with its probes and size query (core::SubnetTable) and one more of those per QoS class in use,
// and the in-use window after a LID move (core::InUseWindow), and answers the two questions the
// Resolver asks before it sends anything: what may go now (next_get, and the table's step) and
// when to ask again (wakeup). It learns from what the Resolver tells it: a GET or a table sent,
// answered or lost, an SM change. The send rule itself is core::SaAdmission (window, pace, token
// bucket), as Linux's TCP asks its tcp_congestion_ops; the late GETs go by their deadlines.
// It holds only the jobs' (id, queue_seq) items; what it needs to know of a job it asks the
// Resolver through Jobs. Pure: time comes from the caller.
#pragma once

#include <array>
#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/fair_queue.h"
#include "core/in_use_window.h"
#include "core/policy.h"
#include "core/sa_admission.h"
#include "core/sa_round_trip.h"
#include "core/subnet_table.h"

namespace ibat::core {

class SaScheduler {
 public:
  using JobId = std::uint64_t;
  using Item = FairQueue::Item;  // (job, its queue_seq)
  using SendQueue = std::deque<Item>;

  // What the scheduler asks of the Resolver's jobs.
  class Jobs {
   public:
    virtual ~Jobs() = default;
    // The item is still its job's place in a queue (the job is queued under that seq).
    virtual bool live(const Item& item) const = 0;
    // The earliest deadline of the job's waiters; nullopt: nobody waits on it.
    virtual std::optional<TimePoint> first_deadline(JobId id) const = 0;
    virtual std::size_t count() const = 0;  // jobs in all: each queue stays within 2 x count + 64 items
  };

  // What a request parked for the GetTable keeps for its GET if the table is not in by then: the
  // pacer's pace through a window of them, and a retry. A request allowed less waits for no table.
  static constexpr Duration kTableWaitReserve = std::chrono::seconds(15);
  // The late GETs' schedule looks this many jobs into the late queue, so that a send decision
  // costs the same at any queue length; the rest are taken to be due with the last of those (the
  // queue runs about earliest deadline first: no later than theirs).
  static constexpr std::size_t kLateLookahead = 64;

  SaScheduler(const Policy& policy, TimePoint now, std::uint64_t admission_seed, std::uint64_t table_seed);
  SaScheduler(const SaScheduler&) = delete;  // its admission reads its estimate of the SA in place
  SaScheduler& operator=(const SaScheduler&) = delete;
  void configure(const Policy& policy, TimePoint now);  // SIGHUP: the bucket keeps its tokens

  // ---- GETs ----
  // A job's GET joins the queue of `kind` (at_head: a retry, where it was when it was sent).
  void queue(Traffic kind, Requester requester, Item item, bool at_head, TimePoint now, const Jobs& jobs);
  // A background GET a request now waits on joins the waited queue too (it keeps its place there).
  void promote(Requester requester, Item item, const Jobs& jobs);
  // The GET that goes now, taken from its queue and counted as sent; nullopt: none may go now.
  // `inflight`: this port's GETs in flight.
  std::optional<JobId> next_get(TimePoint now, std::size_t inflight, const Jobs& jobs);
  // The earliest time a queued GET may go (outdated items make it at worst a tick too early).
  std::optional<TimePoint> get_wakeup(TimePoint now, std::size_t inflight, const Jobs& jobs) const;
  // A GET sent at `sent` was answered, or `lost` (a timeout after the fabric's resends, or BUSY):
  // a sample of the port's estimate of the SA, then the admission's signal.
  void on_get_result(TimePoint sent, TimePoint now, bool lost);
  // A GetTable sent at `sent` was lost: the SA's overload signal as much as a lost GET.
  void on_table_lost(TimePoint sent, TimePoint now);
  // A table gate's probe `id` was answered, or `lost`: all of its round trip is the queue its
  // table's gate judges. nullopt: not a probe in flight;
  // else whether its table's gate opened.
  std::optional<bool> on_probe_result(QueryId id, TimePoint now, bool lost);
  void on_sm_changed(TimePoint now) { admission_.on_sm_changed(now); }

  // ---- when a job's GET may be queued again: after its backoff, or at the end of its wait for the table ----
  void retry_at(TimePoint at, JobId id) { retries_.emplace(at, id); }
  // The earliest (time, job) due by `now`, taken; nullopt: none. A job whose retry time changed
  // since is the Resolver's to skip (its retry_at no longer equals the time).
  std::optional<std::pair<TimePoint, JobId>> due_retry(TimePoint now);
  std::optional<TimePoint> retry_wakeup() const;

  // ---- the GET renewals of cached paths (revalidations) ----
  // A schedule of renewals starts at `now` (an SM change, our LID moved, the port came back, or a
  // warm cache loaded into an empty schedule): the first goes after a draw within revalidate_jitter.
  void start_revalidations(TimePoint now, Prng& prng);
  // After a LID move (`lids_moved`), the paths in use are set aside from the new schedule first.
  void set_aside_in_use_first(bool lids_moved) { in_use_first_ = lids_moved; }
  // The next renewal may be asked now: none while a table is awaited (it may answer them all).
  bool revalidation_due(TimePoint now) const { return !tables_awaited() && next_revalidation_ <= now; }
  // One was asked: the next follows at Policy::revalidate_per_s, each gap drawn from [0.5, 1.5] x
  // the nominal interval (the mean rate kept).
  void revalidation_asked(Prng& prng);
  // No table comes: the renewals go on from `now`.
  void resume_revalidations(TimePoint now) { next_revalidation_ = std::max(next_revalidation_, now); }
  // The paths in use are to be set aside from the schedule now (after a LID move, while a table is awaited).
  bool set_aside_due() const { return in_use_first_ && tables_awaited(); }
  void set_aside_done() { in_use_first_ = false; }
  // The paths in use set aside may be asked now: at this host's place in the in-use window, or at
  // once when no table is awaited any more.
  bool in_use_release_due(TimePoint now) const { return !tables_awaited() || now >= in_use_release_at(); }
  TimePoint in_use_release_at() const;
  // When a renewal has something to do; `scheduled`: the schedule holds paths, `set_aside`: paths
  // in use wait for their release.
  std::optional<TimePoint> revalidation_wakeup(TimePoint now, bool scheduled, bool set_aside) const;

  // ---- the subnet's GetTables and the in-use window, its parts ----
  // The default paths' table: it also learns and asks the subnet's size.
  SubnetTable& table() { return table_; }
  const SubnetTable& table() const { return table_; }
  // A QoS class's paths come in a table of their own (docs/design.md "QoS: the cache key"), made at
  // the class's first resolve; the classes in use on a host are few (a ToS per service), and a class
  // past this many is asked by GET, destination by destination.
  static constexpr std::size_t kMaxClassTables = 8;
  // The table that holds the paths of `qos`: the default paths' for the default key, its class's
  // for a QoS class alone; nullptr: none (yet, or a ServiceID: asked by GET).
  SubnetTable* table_for(const QosKey& qos);
  // A table for the QoS class `qos` names alone, which has none yet; nullptr: not a class alone,
  // or kMaxClassTables exist.
  SubnetTable* add_class_table(const QosKey& qos);
  SubnetTable* table_of(QueryId id);  // the table whose size query, probe or GetTable this is
  template <class F>
  void for_each_table(F&& f) {  // the default paths' first
    f(table_);
    for (SubnetTable& t : class_tables_) f(t);
  }
  template <class F>
  void for_each_table(F&& f) const {
    f(table_);
    for (const SubnetTable& t : class_tables_) f(t);
  }
  bool tables_awaited() const;  // one of the tables is wanted or in flight
  InUseWindow& in_use() { return in_use_; }
  const InUseWindow& in_use() const { return in_use_; }

  std::uint32_t window() const { return admission_.window(); }  // Stats::sa_window
  const SaRoundTrip& sa() const { return sa_; }  // the port's one estimate of the SA
  std::uint64_t lone_wait_max() const { return waited_.lone_wait_max(); }
  std::size_t queued() const;  // items in all queues, dead ones included

 private:
  SendQueue& queue_of(Traffic t) { return queues_[static_cast<std::size_t>(t)]; }
  const SendQueue& queue_of(Traffic t) const { return queues_[static_cast<std::size_t>(t)]; }
  static bool needs_sweep(std::size_t items, const Jobs& jobs);  // a queue this long is swept of dead items
  static FairQueue::Live live_test(const Jobs& jobs);           // Jobs::live as the queues' item test
  void compact_waited(const Jobs& jobs);
  bool live_front(Traffic kind, const Jobs& jobs);  // the next item, dead ones dropped: is one left?
  JobId pop_front(Traffic kind);
  bool empty(Traffic kind) const;
  SendLoad load(std::size_t inflight, const Jobs& jobs) const;
  // When the next late GET is due: the late GETs go, in their queue's order, no later than an even
  // schedule from late_from_ that sends each by its latest time (its first deadline less
  // kTableWaitReserve); nullopt: none queued.
  std::optional<TimePoint> late_due(const Jobs& jobs) const;

  Duration revalidation_interval() const;

  // What it reads of the Policy (configure): the revalidations' pace and first draw, the in-use window's speed.
  double revalidate_per_s_;
  Duration revalidate_jitter_;
  double in_use_window_paths_per_s_;
  SaRoundTrip sa_;  // before admission_, which reads it
  SaAdmission admission_;
  std::uint64_t table_seed_;
  SubnetTable table_;
  std::deque<SubnetTable> class_tables_;  // in the order first used; a deque keeps each in place
  InUseWindow in_use_;
  // By Traffic; the waited GETs are in waited_ instead, round robin among their requesters.
  std::array<SendQueue, kTrafficByPriority.size()> queues_;
  FairQueue waited_;
  TimePoint late_from_{};  // the last late GET sent, or when the late queue last filled from empty
  using Timed = std::pair<TimePoint, JobId>;
  std::priority_queue<Timed, std::vector<Timed>, std::greater<>> retries_;  // (retry_at, job)
  TimePoint next_revalidation_{};
  bool in_use_first_ = false;  // LIDs moved: the paths in use are set aside at the next tick
};

}  // namespace ibat::core
